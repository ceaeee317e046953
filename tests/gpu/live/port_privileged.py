# A metrics endpoint of a GPU service that has dropped root binds port 80: the kernel refuses a
# port under 1024 to an unprivileged user ("PermissionError: [Errno 13] Permission denied").
# host.permission: the process lacks a permission it needs (run.sh starts it as root; it drops to
# nobody first).
import os, pwd, socket, sys
if os.getuid() == 0:
    nobody = pwd.getpwnam("nobody")
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)
import torch
x = torch.ones(4, device="cuda")
print("model ready on", x.device, flush=True)
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", 80))
server.listen(1)
print("metrics on port 80")
