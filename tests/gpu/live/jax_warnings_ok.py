# Benign: a JAX program with XLA's own log lines on (TF_CPP_MIN_LOG_LEVEL=0) asks for float64
# without x64 mode and donates a buffer that cannot be reused; JAX warns about both and the
# program finishes.
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
from functools import partial
import jax
import jax.numpy as jnp

print("devices:", jax.devices(), flush=True)
a = jnp.array([1.0, 2.0, 3.0], dtype=jnp.float64)  # truncated to float32, with a warning


@partial(jax.jit, donate_argnums=0)
def loss(w, x):
    return jnp.tanh(x @ w).mean()  # the donated w's buffer cannot hold a scalar


w = jnp.ones((1024, 1024))
x = jnp.ones((64, 1024))
print("loss:", float(loss(w, x)), flush=True)
print("sum:", float(a.sum()))
print("finished")
