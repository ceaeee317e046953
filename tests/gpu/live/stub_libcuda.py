# The toolkit's link-time stub libcuda comes first on the loader's path (run.sh puts it there, as an
# image that adds the toolkit's lib64/stubs to LD_LIBRARY_PATH does), so the CUDA runtime loads
# it in place of the driver's library.
import torch

x = torch.zeros(4, device="cuda")
print(x)
