# A service started with an LD_PRELOAD that names a library no longer on the host (a profiler
# removed since): the loader says it cannot preload it and ignores it, and the program runs (a
# matrix product on the GPU and its result). Benign: expected none.
import os, subprocess, sys
env = dict(os.environ, LD_PRELOAD="/opt/profiler/lib/libgone_preload.so")
code = ("import torch; x = torch.randn(512, 512, device='cuda'); "
        "print('checksum', float((x @ x).sum().abs() > 0)); print('done')")
sys.exit(subprocess.run([sys.executable, "-c", code], env=env).returncode)
