# Benign: a batch-size finder catches CUDA out-of-memory, logs it (with its traceback, the first
# time), halves the batch and tries again until it fits, then trains and finishes.
import logging
import torch

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("autobatch")
total = torch.cuda.get_device_properties(0).total_memory
per_sample = 4 << 20  # activations of one sample, bytes
batch = int(3 * total) // per_sample
first = True
while True:
    try:
        acts = torch.empty(batch * per_sample // 4, dtype=torch.float32, device="cuda")
        break
    except torch.OutOfMemoryError as e:
        log.warning("batch size %d does not fit: %s", batch, e, exc_info=first)
        first = False
        torch.cuda.empty_cache()
        batch //= 2
        log.info("retrying with batch size %d", batch)
log.info("batch size %d fits (%.1f GiB of activations)", batch, batch * per_sample / 2**30)
del acts
torch.cuda.empty_cache()
w = torch.randn(1024, 1024, device="cuda")
for step in range(5):
    loss = (torch.randn(256, 1024, device="cuda") @ w).square().mean()
    log.info("step %d loss %.4f", step, loss.item())
log.info("training finished")
