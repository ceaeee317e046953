# A JAX job on a host where no GPU is visible to it: JAX warns that it falls back to the CPU and
# the job completes there. Benign (no failure): expected none.
import jax, jax.numpy as jnp
x = jnp.arange(1000.0)
print("platform:", jax.devices()[0].platform, flush=True)
print("sum of squares:", float(jnp.sum(x * x)))
print("done")
