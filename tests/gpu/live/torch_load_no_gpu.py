# A checkpoint saved from GPU tensors, loaded by a service that sees no GPU (run.sh hides it with
# CUDA_VISIBLE_DEVICES=): torch.load cannot put the tensors back on a CUDA device.
# cuda.no_device: the process sees no GPU.
import os, sys, tempfile, subprocess
import torch
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
if os.environ.get("SAVE") != "0":
    # The checkpoint is written by a process that sees the GPU.
    env = dict(os.environ, SAVE="0", CUDA_VISIBLE_DEVICES=os.environ.get("SAVE_DEVICES", "0"))
    code = "import torch,sys; torch.save({'w': torch.ones(4, device='cuda')}, sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, path], env=env, check=True)
print("loading", path, flush=True)
state = torch.load(path)
print(state["w"].sum())
