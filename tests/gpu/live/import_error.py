# The installed package has no such name.
import torch
from torch.cuda import frobnicate_streams
