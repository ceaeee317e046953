# An extension's shared library cannot be found by the dynamic loader.
import ctypes
ctypes.CDLL("libcudart_triage_missing.so.12")
