# A service loads a checkpoint saved from a model of another size (hidden 512) into the model it
# builds (hidden 768): load_state_dict refuses ("Error(s) in loading state_dict ... size mismatch
# for ... copying a param with shape ... from checkpoint"). model.load_failed: the weights do not
# fit the model the service builds.
import os, tempfile
import torch
ckpt = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.Linear(512, 10)).state_dict(), ckpt)
model = torch.nn.Sequential(torch.nn.Linear(768, 768), torch.nn.Linear(768, 10)).cuda()
print("loading checkpoint", ckpt, flush=True)
model.load_state_dict(torch.load(ckpt, map_location="cuda"))
print("loaded")
