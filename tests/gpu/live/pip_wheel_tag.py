# pip given a wheel built for another interpreter and platform (a cp27 aarch64 build on this
# host's Python): "ERROR: ... is not a supported wheel on this platform." The service's start
# script installs it and stops. python.version_conflict: the wheel's tags are not this Python's.
import os
import subprocess
import sys
import tempfile
import zipfile

folder = tempfile.mkdtemp()
wheel = os.path.join(folder, "fastkernels-0.3.1-cp27-cp27mu-linux_aarch64.whl")
with zipfile.ZipFile(wheel, "w") as z:
    z.writestr("fastkernels/__init__.py", "")
print("installing the kernels package", flush=True)
r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", wheel], capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stdout.flush()
sys.stderr.write(r.stderr)
sys.exit(r.returncode or 1)
