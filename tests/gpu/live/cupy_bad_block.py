# A CuPy RawKernel launched with 2048 threads a block (the limit is 1024): the driver refuses the
# launch. config.invalid: the launch configuration exceeds what the GPU allows.
import cupy
kernel = cupy.RawKernel(r'''
extern "C" __global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }
''', "fill")
x = cupy.zeros(2048, dtype=cupy.float32)
print("launching fill with block (2048,1,1)", flush=True)
kernel((1,), (2048,), (x,))
cupy.cuda.runtime.deviceSynchronize()
print(float(x.sum()))
