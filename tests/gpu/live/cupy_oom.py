# CuPy asks for more device memory than the GPU has.
import cupy
x = cupy.empty((200 * 2**30,), dtype=cupy.uint8)
print(x.nbytes)
