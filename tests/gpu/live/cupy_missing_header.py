# A CuPy RawKernel whose source includes a header the include path does not hold: NVRTC cannot
# compile it. jit.build_failed: the run-time compilation of a kernel failed.
import cupy
src = r'''
#include "fused_ops.cuh"
extern "C" __global__ void scale(float* x, float a) { x[threadIdx.x] = fused_scale(x[threadIdx.x], a); }
'''
kernel = cupy.RawKernel(src, "scale")
x = cupy.ones(128, dtype=cupy.float32)
print("compiling scale kernel", flush=True)
kernel((1,), (128,), (x, cupy.float32(2.0)))
print(float(x.sum()))
