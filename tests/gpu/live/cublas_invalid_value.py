# A program calls cuBLAS's SGEMM itself (through CuPy's binding) with a leading dimension smaller
# than the matrix's rows (lda 512 for m 1024): cuBLAS refuses the call, CUBLAS_STATUS_INVALID_VALUE.
# unclassified: the program's own bad call; no id of the taxonomy covers it (the GPU, driver,
# toolkit, libraries and memory are all fine, and nothing in the service's configuration chose it).
import numpy as np
import cupy
try:
    from cupy_backends.cuda.libs import cublas
except ImportError:  # older CuPy
    from cupy.cuda import cublas

m = n = k = 1024
a = cupy.random.rand(m, k, dtype=cupy.float32)
b = cupy.random.rand(k, n, dtype=cupy.float32)
c = cupy.empty((m, n), dtype=cupy.float32)
one = np.ones(1, dtype=np.float32)
zero = np.zeros(1, dtype=np.float32)
handle = cupy.cuda.device.get_cublas_handle()
lda = k // 2  # the bug: should be m (column-major, no transpose)
print("sgemm m=%d n=%d k=%d lda=%d ldb=%d ldc=%d" % (m, n, k, lda, k, m), flush=True)
cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, m, n, k,
             one.ctypes.data, a.data.ptr, lda, b.data.ptr, k, zero.ctypes.data, c.data.ptr, m)
cupy.cuda.runtime.deviceSynchronize()
print(float(c.sum()))
