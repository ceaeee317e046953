# A compiled model whose forward prints (a graph break), run with TORCH_LOGS=graph_breaks: PyTorch
# logs each break with the user code's stack, and the run completes. Benign: expected none.
import os
os.environ.setdefault("TORCH_LOGS", "graph_breaks")
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 64)

    def forward(self, x):
        x = self.a(x)
        print("activation norm", x.norm().item())
        return self.b(torch.relu(x))

model = torch.compile(Net().cuda())
for step in range(3):
    out = model(torch.randn(8, 64, device="cuda"))
    print("step", step, "loss", out.pow(2).mean().item(), flush=True)
print("done")
