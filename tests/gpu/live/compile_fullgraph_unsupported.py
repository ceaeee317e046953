# A model compiled with fullgraph=True whose forward converts a tensor to a Python number: Dynamo
# cannot trace it in one graph and, asked for one, refuses (torch._dynamo.exc.Unsupported). The
# program's own code must change: unclassified, with PyTorch's message.
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(32, 32)

    def forward(self, x):
        y = self.fc(x)
        if y.sum().item() > 0:
            return y * 2
        return y

model = torch.compile(Net().cuda(), fullgraph=True)
print("compiling with fullgraph=True", flush=True)
print(model(torch.randn(4, 32, device="cuda")).sum().item())
