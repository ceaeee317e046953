# A native library frees one buffer twice (libc's malloc and free, called through ctypes):
# glibc detects it and aborts ("free(): double free detected in tcache 2"), and the shell that
# started the service reports the abort (run.sh runs it under bash -c, as a service wrapper
# does). native.crash: an abort in native code; no CUDA kernel is involved.
import ctypes
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
buf = libc.malloc(64)
print("request buffer at 0x%x" % buf, flush=True)
libc.free(buf)
libc.free(buf)
print("done")
