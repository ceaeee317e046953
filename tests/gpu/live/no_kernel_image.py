# A module built for another architecture only (SASS for sm_80, no PTX) on a newer GPU.
import os, subprocess, sys, tempfile
import cupy
src = r'''extern "C" __global__ void k(float* p) { p[threadIdx.x] = 1.0f; }'''
d = tempfile.mkdtemp()
cu, cubin = os.path.join(d, "k.cu"), os.path.join(d, "k_sm80.cubin")
open(cu, "w").write(src)
subprocess.run(["/usr/local/cuda/bin/nvcc", "-cubin", "-arch=sm_80", "-o", cubin, cu], check=True)
mod = cupy.RawModule(path=cubin)
f = mod.get_function("k")
x = cupy.zeros(32, dtype=cupy.float32)
f((1,), (32,), (x,))
print(float(x.sum()))
