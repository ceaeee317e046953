# A jitted JAX function calls back into Python (io_callback) for a table lookup, and the callback
# raises (an id past the table's end): the computation fails with a JaxRuntimeError (INTERNAL)
# that carries the callback's IndexError. unclassified: the program's own error; no id of the
# taxonomy covers it (not an out-of-memory, not a device problem).
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

TABLE = np.linspace(0.0, 1.0, 100, dtype=np.float32)


def lookup(ids):
    return TABLE[np.asarray(ids)]


@jax.jit
def score(ids):
    w = io_callback(lookup, jax.ShapeDtypeStruct(ids.shape, jnp.float32), ids)
    return (w * 2.0).sum()


print("devices:", jax.devices(), flush=True)
print("batch 0 score:", float(score(jnp.arange(0, 32))), flush=True)
print("batch 1 score:", float(score(jnp.arange(90, 122))), flush=True)
