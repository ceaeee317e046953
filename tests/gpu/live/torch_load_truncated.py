# A checkpoint cut short (a copy that stopped part way) is loaded with torch.load: PyTorch's zip
# reader fails ("PytorchStreamReader failed reading zip archive"). model.load_failed: the
# model's weights cannot be read.
import os, tempfile
import torch
path = os.path.join(tempfile.mkdtemp(prefix="ckpt-"), "model.pt")
torch.save({"embed.weight": torch.randn(4096, 256), "lm_head.weight": torch.randn(4096, 256)}, path)
os.truncate(path, os.path.getsize(path) // 2)
state = torch.load(path, map_location="cuda")
print(sorted(state))
