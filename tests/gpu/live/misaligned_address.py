# A raw kernel loads float4 vectors from an address 4 bytes past a 16-byte boundary: the GPU
# faults with a misaligned address (cudaErrorMisalignedAddress). cuda.illegal_memory_access: a
# kernel faulted.
import cupy
kernel = cupy.RawKernel(r'''
extern "C" __global__ void sum4(const float* p, float* out) {
  const float4* v = reinterpret_cast<const float4*>(p + 1);
  float4 x = v[threadIdx.x];
  out[threadIdx.x] = x.x + x.y + x.z + x.w;
}''', "sum4")
x = cupy.ones(4 * 33, dtype=cupy.float32)
out = cupy.zeros(32, dtype=cupy.float32)
kernel((1,), (32,), (x, out))
cupy.cuda.runtime.deviceSynchronize()
print(float(out.sum()))
