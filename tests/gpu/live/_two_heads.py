# The model of the DDP cases (ddp_unused_params, ddp_find_unused_ok), not a case itself: a body and
# two heads, of which training calls one.
import torch


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(64, 64)
        self.used = torch.nn.Linear(64, 4)
        self.unused = torch.nn.Linear(64, 4)  # a head this training never calls

    def forward(self, x):
        return self.used(torch.relu(self.body(x)))
