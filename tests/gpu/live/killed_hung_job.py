# A training job that stalls (its data queue stops delivering after three steps) and is killed by
# its launcher's deadline with SIGKILL: the wrapper shell reports "Killed" and exit status 137.
# unclassified: nothing ran out of memory (no OOM killer, no cgroup limit: not host.oom_killed);
# the job hung for a reason of its own, which the log does not show.
import queue, threading, time
import torch

batches = queue.Queue()


def producer():
    for i in range(3):
        batches.put(torch.randn(64, 512))
    time.sleep(3600)  # the reader it waits on never answers


threading.Thread(target=producer, daemon=True).start()
model = torch.nn.Linear(512, 512).cuda()
for step in range(100):
    x = batches.get()
    loss = model(x.cuda()).square().mean()
    loss.backward()
    print("step %d loss %.4f" % (step, loss.item()), flush=True)
