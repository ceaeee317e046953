# JAX started with an XLA_PYTHON_CLIENT_ALLOCATOR value it does not know (a typo of "platform"):
# its GPU client refuses to start with that setting. config.invalid, the setting named.
import os
os.environ["XLA_PYTHON_CLIENT_ALLOCATOR"] = "platfrom"
import jax, jax.numpy as jnp
print("devices", jax.devices(), flush=True)
print(jnp.ones(4).sum())
