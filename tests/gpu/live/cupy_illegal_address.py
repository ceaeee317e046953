# A CuPy raw kernel writes through a pointer into memory that was never allocated.
import cupy
poke = cupy.RawKernel(r'''
extern "C" __global__ void poke(int* p) { p[threadIdx.x] = 1; }
''', "poke")
poke((1,), (32,), (cupy.uint64(0xdead0000),))
cupy.cuda.runtime.deviceSynchronize()
print("done")
