# JAX told to use a platform this host's jaxlib does not have (JAX_PLATFORMS=rocm on an NVIDIA
# host, set by run.sh): the backend cannot be initialised. config.invalid.
import sys
try:
    import jax
except ImportError:
    print("SKIP: jax is not installed in %s" % sys.executable)
    sys.exit(0)
import jax.numpy as jnp
print(jnp.ones(4).sum())
