# An extension built against another libtorch: its shared library needs a C++ symbol of c10 that
# the loaded libraries do not define, and the loader refuses it when the service loads it
# (ctypes binds every symbol at load). native.undefined_symbol. The library is built here with
# the host's C compiler (cc); without one the case cannot be provoked: SKIP.
import ctypes, os, shutil, subprocess, sys, tempfile
cc = shutil.which("cc") or shutil.which("gcc")
if cc is None:
    print("SKIP: no C compiler (cc) on this host")
    sys.exit(0)
import torch  # the libraries the extension expects to find its symbol in
work = tempfile.mkdtemp(prefix="ext-")
src = os.path.join(work, "fused_ops.c")
lib = os.path.join(work, "libfused_ops.so")
with open(src, "w") as f:
    # A mangled name that no release of c10 exports (an ABI the loaded torch does not have).
    f.write("extern void _ZN3c104cuda20getCurrentCUDAStreamEa_triage_abi(void);\n"
            "void fused_launch(void) { _ZN3c104cuda20getCurrentCUDAStreamEa_triage_abi(); }\n")
subprocess.run([cc, "-shared", "-fPIC", "-o", lib, src], check=True)
print("loading fused_ops extension for torch %s" % torch.__version__, flush=True)
ctypes.CDLL(lib)
print("loaded")
