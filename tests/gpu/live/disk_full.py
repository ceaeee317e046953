# A checkpoint is written to a filesystem with no space left: OSError [Errno 28] "No space left
# on device". /dev/full stands in for the full disk (every write to it fails with ENOSPC).
# host.disk_full.
import io, sys
import torch
model = torch.nn.Linear(1024, 1024).cuda()
checkpoint = sys.argv[1] if len(sys.argv) > 1 else "/dev/full"
buf = io.BytesIO()
torch.save({"step": 100, "model": model.state_dict()}, buf)
print("saving checkpoint (%d bytes) to %s" % (buf.tell(), checkpoint), flush=True)
with open(checkpoint, "wb") as f:
    f.write(buf.getbuffer())
