# A CuPy RawKernel compiled (NVRTC) for an architecture newer than this GPU's, as a kernel
# library pinned to one target would be: the module holds code this GPU cannot run, and loading
# it fails (CUDA_ERROR_NO_BINARY_FOR_GPU: "no kernel image is available for execution on the
# device"). cuda.no_kernel_image.
import cupy as cp
target = "sm_100" if int(cp.cuda.Device(0).compute_capability) < 100 else "sm_120"
src = r'''
extern "C" __global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
'''
k = cp.RawKernel(src, "scale", options=("--gpu-architecture=" + target,), backend="nvrtc")
x = cp.ones(1024, dtype=cp.float32)
print("launching kernel built for %s on compute capability %s" % (target, cp.cuda.Device(0).compute_capability),
      flush=True)
k((4,), (256,), (x, cp.float32(2.0), cp.int32(x.size)))
cp.cuda.Device(0).synchronize()
print(float(x.sum()))
