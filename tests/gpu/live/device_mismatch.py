# A training script moves the model to the GPU but not its batch: the first forward pass raises
# "Expected all tensors to be on the same device, but got mat1 is on cpu, different from other
# tensors on cuda:0".
# unclassified: a bug of the script; no id of the taxonomy covers it.
import torch

model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
print("model on %s, %d parameters" % (next(model.parameters()).device,
                                      sum(p.numel() for p in model.parameters())), flush=True)
for step in range(3):
    x = torch.randn(64, 512)  # the bug: never moved to the GPU
    y = torch.randint(0, 10, (64,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("step %d loss %.4f" % (step, loss.item()))
