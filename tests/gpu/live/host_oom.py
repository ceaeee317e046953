# Host memory grows until the memory limit of the process's cgroup kills it.
import time
chunks = []
while True:
    chunks.append(bytearray(256 << 20))
    for i in range(0, len(chunks[-1]), 4096):
        chunks[-1][i] = 1
    print("allocated %d MiB" % (len(chunks) * 256), flush=True)
