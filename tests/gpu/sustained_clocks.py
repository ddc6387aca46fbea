"""Ours against DeepGEMM under sustained load: time per call, SM clock, board power and cycles per call (issue 26).

At the large dense shapes both kernels run against the H200's power limit, so their clocks follow their power, and
head_to_head.py's ratio of times mixes two things: the cycles a call takes and the clock it gets. Here each side runs
back to back for --secs seconds (head_to_head.py's operands: rotating input sets > 200 MB, our allocations shared with
torch), the sides alternating --rounds times, while nvidia-smi samples the SM clock and the board power every 50 ms.
Per window: calls, µs per call (wall time over calls; the host synchronises every 20 calls, so the queue stays full),
the median SM clock and power of the samples inside it (the first 0.3 s left out), and µs × MHz, the cycles a call
takes at that clock.

usage: python3 tests/gpu/sustained_clocks.py --lib LIBGO_CUDA_SO --shape "dense 4096x7168x16384" [--shape ...]
                                             [--secs 3] [--rounds 3]
(DeepGEMM on PYTHONPATH, as for head_to_head.py; tests/gpu/run.sh's `clocks` step runs it.)
"""
import argparse
import datetime
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import head_to_head as hh  # noqa: E402 - sets GO_CUDA_ASYNC before the backend loads; operands and calls
import bench_torch as bt  # noqa: E402
import torch  # noqa: E402

CALLS_PER_SYNC = 20


def sides_of(ours, dg, shape, target):
    """{"ours": f(i), "deepgemm": f(i)}: call i of each side on input set i mod the sets (head_to_head.operands)."""
    sets, fo, fd = hh.operands(ours, dg, shape, target)
    return {"ours": lambda i: fo(sets[i % len(sets)][1]), "deepgemm": lambda i: fd(*sets[i % len(sets)][0])}


def samples_of(text):
    """nvidia-smi's CSV lines (timestamp, SM MHz, W) as (epoch seconds, MHz, W); lines that do not parse are left out."""
    out = []
    for line in text.splitlines():
        try:
            ts, mhz, w = [x.strip() for x in line.split(",")]
            out.append((datetime.datetime.strptime(ts, "%Y/%m/%d %H:%M:%S.%f").timestamp(), float(mhz), float(w)))
        except ValueError:
            continue
    return out


def run_shape(ours, dg, shape, secs, rounds, target):
    name = bt.shape_name(*shape)
    side = sides_of(ours, dg, shape, target)
    for f in side.values():  # JIT and warm-up
        for i in range(8):
            f(i)
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    windows = []
    for r in range(rounds):
        for who in ("ours", "deepgemm"):
            torch.cuda.synchronize()
            t0, calls = time.time(), 0
            while time.time() - t0 < secs:
                for i in range(CALLS_PER_SYNC):
                    side[who](calls + i)
                calls += CALLS_PER_SYNC
                torch.cuda.synchronize()
            windows.append((who, t0, time.time(), calls))
            time.sleep(0.5)
    smi.terminate()
    samples = samples_of(smi.communicate()[0])
    print(f"{name}: {len(samples)} clock samples", flush=True)
    for who, t0, t1, calls in windows:
        inside = [s for s in samples if t0 + 0.3 <= s[0] <= t1 - 0.1]
        us = (t1 - t0) * 1e6 / calls
        if not inside:
            print(f"{name}: {who}: {calls} calls, {us:.1f} us/call, no clock samples in the window", flush=True)
            continue
        mhz, w = bt.median([s[1] for s in inside]), bt.median([s[2] for s in inside])
        print(f"{name}: {who}: {calls} calls, {us:.1f} us/call, SM {mhz:.0f} MHz, {w:.0f} W, "
              f"{us * mhz / 1e3:.0f} k cycles/call ({len(inside)} samples)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="our CUDA backend (libgo_cuda.so)")
    ap.add_argument("--shape", action="append", default=[], help="a shape as the tables name it; repeatable")
    ap.add_argument("--secs", type=float, default=3.0, help="seconds per window")
    ap.add_argument("--rounds", type=int, default=3, help="windows per side")
    args = ap.parse_args()
    if not args.shape or args.secs <= 0 or args.rounds < 1:
        ap.error("needs at least one --shape, --secs > 0 and --rounds >= 1")
    shapes = hh.parse_shapes(ap, args.shape)
    sides = hh.open_sides(args.lib)
    if sides is None:
        return 2
    dg, ours = sides
    errors = hh.prepare_ours(ours, shapes)
    for s in shapes:
        if s in errors:
            print(f"{bt.shape_name(*s)}: ours: {errors[s]}", flush=True)
            continue
        run_shape(ours, dg, s, args.secs, args.rounds, 200 << 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
