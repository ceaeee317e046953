# A script that starts CUDA worker processes with the spawn method at module level, without an
# `if __name__ == "__main__":` guard: each child imports the script again and multiprocessing refuses
# ("An attempt has been made to start a new process before the current process has finished its
# bootstrapping phase"). A mistake in the program: unclassified.
import torch, torch.multiprocessing as mp


def work(rank):
    print("worker", rank, torch.ones(2, device="cuda").sum().item(), flush=True)


mp.set_start_method("spawn", force=True)
procs = [mp.Process(target=work, args=(r,)) for r in range(2)]
for p in procs:
    p.start()
for p in procs:
    p.join()
print("exit codes", [p.exitcode for p in procs])
if any(p.exitcode for p in procs):
    raise SystemExit(1)
