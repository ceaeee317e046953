# A service that drops root for an unprivileged user (nobody, as servers started by root do)
# before it opens its log file, which an earlier run as root left readable by root alone
# (run.sh makes it, mode 0600; run as another user it is mode 0000, closed to its owner too):
# PermissionError [Errno 13]. host.permission: the service's user may not open a file it needs.
import logging, os, sys
log_file = sys.argv[1]
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
logging.basicConfig(filename=log_file, level=logging.INFO)
logging.info("service starting")
