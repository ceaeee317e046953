# A weights file cut short (a copy or download that stopped part way) is loaded with
# safetensors: SafetensorError. model.load_failed: the model's weights cannot be read.
import os, tempfile
import torch
from safetensors.torch import load_file, save_file
path = os.path.join(tempfile.mkdtemp(prefix="model-"), "model.safetensors")
save_file({"embed.weight": torch.randn(4096, 256), "lm_head.weight": torch.randn(4096, 256)}, path)
os.truncate(path, os.path.getsize(path) // 2)
state = load_file(path, device="cuda")
print(sorted(state))
