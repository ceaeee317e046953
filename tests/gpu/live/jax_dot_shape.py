# A JAX program multiplies two arrays whose inner dimensions differ: JAX refuses the contraction
# (TypeError from dot_general). A mistake in the program's own code: unclassified.
import jax.numpy as jnp
a = jnp.ones((4, 8))
b = jnp.ones((16, 2))
print("multiplying", a.shape, b.shape, flush=True)
print(jnp.dot(a, b))
