# A CUDA graph capture of a step that synchronizes (.item() inside the captured region): CUDA
# refuses the operation while the stream captures. unclassified: the program's own bug.
import torch
x = torch.randn(1024, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
g = torch.cuda.CUDAGraph()
print("capturing", flush=True)
with torch.cuda.graph(g):
    y = x * 2
    total = y.sum().item()
print(total)
