# Native code reads through a null pointer (ctypes.string_at(0): strlen of NULL, as a C
# extension handed a null pointer would) in a service that turns faulthandler on, as many do:
# "Fatal Python error: Segmentation fault" and the Python stack, then the process dies of
# SIGSEGV. native.crash: a segfault in host code, not a CUDA kernel's fault.
import ctypes, faulthandler
faulthandler.enable()
print("decoding request 0", flush=True)
name = ctypes.string_at(0)
print(name)
