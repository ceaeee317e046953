# JAX asks for more device memory than the GPU has.
import os
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax, jax.numpy as jnp
n = int(200 * 2**30 // 4)
x = jnp.ones((n,), dtype=jnp.float32)
print(x.block_until_ready().shape)
