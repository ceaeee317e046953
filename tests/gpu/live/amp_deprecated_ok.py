# Benign: a mixed-precision training loop written for an older PyTorch (torch.cuda.amp's
# GradScaler and autocast, deprecated with a FutureWarning) trains and finishes.
import torch

amp = torch.cuda.amp
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
scaler = amp.GradScaler() if hasattr(amp, "GradScaler") else torch.amp.GradScaler("cuda")
for step in range(30):
    x = torch.randn(64, 512, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    with (amp.autocast() if hasattr(amp, "autocast") else torch.autocast("cuda")):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    sched.step()
    if step % 10 == 0:
        print("step %d loss %.4f lr %.4f" % (step, loss.item(), sched.get_last_lr()[0]), flush=True)
print("training finished")
