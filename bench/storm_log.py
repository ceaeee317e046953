#!/usr/bin/env python3
"""Writes the log of a service that keeps failing: N failures of eight ranks, each a CUDA
out-of-memory traceback of three lines, as bench/daemon_bench.cpp's storm mode writes them.

Usage: bench/storm_log.py --failures 600000 --out storm.log [--rate 100]
With --rate, each line starts with an ISO 8601 time, RATE failures a second from
2026-06-01T00:00:00 (so that the quiet gap and time windows take part); without it the lines
carry no time, as in the daemon's storm.
"""
import argparse
import datetime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--failures", type=int, default=600000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rate", type=float, default=0, help="failures a second (0: no times)")
    args = ap.parse_args()
    start = datetime.datetime(2026, 6, 1)
    with open(args.out, "w", buffering=1 << 20) as out:
        for n in range(args.failures):
            r = n % 8
            stamp = ""
            if args.rate > 0:
                t = start + datetime.timedelta(seconds=n / args.rate)
                stamp = t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + " "
            out.write(
                f"{stamp}[rank{r}]: Traceback (most recent call last):\n"
                f"{stamp}[rank{r}]:   File \"/app/train.py\", line 9, in <module>\n"
                f"{stamp}[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate"
                f" 2.00 GiB (failure {n})\n")


if __name__ == "__main__":
    main()
