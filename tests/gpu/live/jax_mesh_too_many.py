# A JAX program builds a device mesh for 8 devices on a host with fewer: the mesh cannot be made.
# config.invalid: the job's parallel layout asks for more devices than the host has.
import jax
print("devices: %s" % jax.devices(), flush=True)
mesh = jax.make_mesh((8,), ("data",))
print(mesh)
