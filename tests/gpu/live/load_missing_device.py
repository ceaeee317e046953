# A checkpoint is loaded onto a GPU index this host does not have (map_location='cuda:7', as a
# config written for an 8-GPU node would say): torch.load refuses. cuda.no_device: an index past
# the devices the process has.
import os, sys, tempfile
import torch
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save({"w": torch.randn(16, 16)}, path)
print("loading %s on cuda:7 (devices: %d)" % (path, torch.cuda.device_count()), flush=True)
state = torch.load(path, map_location="cuda:7")
print(sorted(state))
