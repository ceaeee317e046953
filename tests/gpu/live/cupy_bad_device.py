# CuPy is told to use a device index past the GPUs the process has: cudaErrorInvalidDevice
# ("invalid device ordinal"). cuda.no_device: an index past the devices the process was given.
import cupy
device = cupy.cuda.runtime.getDeviceCount() + 3
with cupy.cuda.Device(device):
    x = cupy.zeros(1024, dtype=cupy.float32)
    print(float(x.sum()))
