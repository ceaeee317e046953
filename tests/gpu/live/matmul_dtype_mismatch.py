# A model half converted to float16 whose input stays float32: the matmul refuses operands of two
# dtypes. A mistake in the program's own code: unclassified, with the program's message.
import torch
layer = torch.nn.Linear(256, 256).cuda().half()
x = torch.randn(4, 256, device="cuda")
print("forward pass", flush=True)
out = layer(x)
print(out.shape)
