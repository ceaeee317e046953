# A model calls an operator that PyTorch has no kernel for on sparse CUDA tensors: "Could not run
# 'aten::...' with arguments from the 'SparseCUDA' backend". A feature missing in that backend, in
# the program's own code path: unclassified, with PyTorch's message.
import torch
indices = torch.tensor([[0, 1, 2], [2, 0, 1]], device="cuda")
values = torch.tensor([1.0, 2.0, 3.0], device="cuda")
s = torch.sparse_coo_tensor(indices, values, (3, 3))
print("sparse tensor built", flush=True)
out = torch.nn.functional.avg_pool2d(s.unsqueeze(0), 2)
print(out)
