# JAX is asked for its CUDA backend (JAX_PLATFORMS=cuda) in a process given no GPU (run.sh sets
# CUDA_VISIBLE_DEVICES to nothing): the CUDA plugin's cuInit fails (CUDA_ERROR_NO_DEVICE) and JAX
# cannot initialize the backend. cuda.no_device: the process sees no usable GPU although the host
# has one.
import os
os.environ.setdefault("JAX_PLATFORMS", "cuda")
import jax
print(jax.devices())
