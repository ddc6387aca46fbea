"""Runs DeepGEMM on one benchmark shape a few times, for Nsight Compute (tests/gpu/run.sh's profile step) to profile
its kernel beside ours on the same operands: the call of tests/gpu/bench_torch.py (dg_problem), nothing else.

usage: python3 tests/gpu/profile_deepgemm.py "dense 4096x7168x16384" [--calls N]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch  # noqa: E402 - the benchmark's shapes and DeepGEMM call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", help='a bench shape name, e.g. "dense 4096x7168x16384" or "masked 6x1024x4096x7168"')
    ap.add_argument("--calls", type=int, default=3)
    args = ap.parse_args()
    shapes = [s for s in bench_torch.all_shapes() if bench_torch.shape_name(*s) == args.shape]
    if not shapes:
        sys.exit(f"profile_deepgemm.py: no bench shape named {args.shape!r}")
    dg, why = bench_torch.load_deep_gemm(False)
    if dg is None:
        sys.exit(f"profile_deepgemm.py: {why}")
    fn, method, make_set, _ = bench_torch.dg_problem(dg, *shapes[0])
    operands = make_set()
    for _ in range(args.calls):
        fn(*operands)
    bench_torch.torch.cuda.synchronize()
    print(f"{args.shape}: {args.calls} calls of {method}")


if __name__ == "__main__":
    main()
