# The program torchrun would start; run.sh gives torchrun an --nproc-per-node it does not accept
# ("eight"), so torchrun refuses before starting it. config.invalid: the launcher's option.
print("never started")
