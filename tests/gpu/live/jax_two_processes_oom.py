# Two JAX services on one GPU: the first holds its preallocated 75 % of the GPU's memory (run.sh
# starts it in the background with HOLD=1 and waits for its "holding" line); this second one
# then wants the same and more. cuda.oom: the GPU's memory is exhausted (by another process).
import os, sys, time
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "true")
import jax, jax.numpy as jnp
if os.environ.get("HOLD") == "1":
    x = jnp.ones((1024,), dtype=jnp.float32).block_until_ready()
    print("holding", flush=True)
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
    sys.exit(0)
print("devices:", jax.devices(), flush=True)
x = jnp.ones((1 << 28,), dtype=jnp.float32)
y = (x * 2).block_until_ready()
print(float(y[0]))
