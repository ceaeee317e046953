# JAX is started with CUDA_VISIBLE_DEVICES naming a GPU index that this host lacks (run.sh sets the
# first index past the host's GPUs), so its CUDA backend finds no device, and the program's request for
# its GPUs fails. cuda.no_device: the process sees no usable GPU although the host has one.
import os
import jax
import jax.numpy as jnp
print("CUDA_VISIBLE_DEVICES=%s" % os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)
gpus = jax.devices("gpu")
x = jax.device_put(jnp.ones((1024, 1024)), gpus[0])
print(float((x @ x).sum()))
