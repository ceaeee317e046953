# Benign: float64 asked of JAX without jax_enable_x64; JAX warns and truncates to float32.
import jax.numpy as jnp

x = jnp.zeros(4, dtype=jnp.float64)
print(x.dtype, float(x.sum()))
