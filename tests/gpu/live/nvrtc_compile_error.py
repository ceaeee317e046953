# A CuPy RawKernel whose CUDA source does not compile (an undeclared identifier): NVRTC refuses
# it at the first launch. jit.build_failed: a kernel compiled at run time failed to build.
import cupy
src = r'''
extern "C" __global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * factor;
}
'''
kernel = cupy.RawKernel(src, "scale")
x = cupy.ones(1024, dtype=cupy.float32)
print("launching scale", flush=True)
kernel((4,), (256,), (x, cupy.int32(1024)))
cupy.cuda.runtime.deviceSynchronize()
print(float(x.sum()))
