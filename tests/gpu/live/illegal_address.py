# A raw kernel writes through a pointer that points nowhere: an illegal memory access.
import cupy
kernel = cupy.RawKernel(r'''
extern "C" __global__ void poke(float* p) {
  float* bad = (float*)0x10;
  bad[threadIdx.x] = p[threadIdx.x];
}''', "poke")
x = cupy.zeros(32, dtype=cupy.float32)
kernel((1,), (32,), (x,))
cupy.cuda.runtime.deviceSynchronize()
print(float(x.sum()))
