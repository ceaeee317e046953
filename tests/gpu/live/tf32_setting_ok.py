# A benign run: a training script that sets TF32 through the old flags, which recent PyTorch warns
# about (a UserWarning that the API is deprecated and a newer one replaces it), then trains and
# finishes. No incident: a deprecation warning is no failure.
import warnings
import torch
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(20):
    x = torch.randn(64, 512, device="cuda")
    loss = model(x).logsumexp(dim=1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
print("training finished", flush=True)
