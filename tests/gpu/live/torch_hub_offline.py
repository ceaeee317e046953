# A script that loads a model from torch.hub on a host without network access: the hub cannot
# fetch the repository's archive (urllib's URLError, name resolution failing). The model cannot be
# loaded: model.load_failed.
import torch
print("loading resnet18 from the hub", flush=True)
model = torch.hub.load("pytorch/vision:v0.20.0", "resnet18", weights=None, trust_repo=True)
print(model.fc)
