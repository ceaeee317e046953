# A service's environment still sets XLA flags that this jaxlib no longer has (removed from XLA):
# XLA refuses them when the backend starts with a fatal log line ("F... Unknown flags in
# XLA_FLAGS: ..."), and the process ends there (no stack trace, no signal). config.invalid: the
# service's own configuration (its environment) is invalid for the library in use.
import os
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_enable_async_all_gather=true "
                                   "--xla_gpu_enable_async_reduce_scatter=true "
                                   "--xla_gpu_enable_triton_softmax_fusion=true")
import jax
import jax.numpy as jnp
print("XLA_FLAGS=%s" % os.environ["XLA_FLAGS"], flush=True)
x = jnp.ones((1024, 1024))
print(float((x @ x).sum()))
