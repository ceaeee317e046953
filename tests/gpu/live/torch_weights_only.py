# A checkpoint that pickles a class of its own, read with torch.load's default weights_only=True.
import os, tempfile
import torch

class TrainState:
    def __init__(self):
        self.step = 1200
        self.weights = torch.randn(4, 4)

path = os.path.join(tempfile.mkdtemp(), "state.pt")
torch.save(TrainState(), path)
state = torch.load(path)
print(state.step)
