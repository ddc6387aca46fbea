"""Runs DeepGEMM on one shape a few times, for Nsight Compute (tests/gpu/run.sh's profile step) to profile
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
    ap.add_argument("shape", help='a shape name, e.g. "dense 4096x7168x16384" or "masked 6x1024x4096x7168" (one of the '
                                  '45 or any other by tests/gpu/shapes.py\'s rules)')
    ap.add_argument("--calls", type=int, default=3)
    args = ap.parse_args()
    try:
        shape = bench_torch.parse_shape_name(args.shape)
    except ValueError as exc:
        sys.exit(f"profile_deepgemm.py: {exc}")
    dg, why = bench_torch.load_deep_gemm(False)
    if dg is None:
        sys.exit(f"profile_deepgemm.py: {why}")
    fn, method, make_set, _ = bench_torch.dg_problem(dg, *shape)
    operands = make_set()
    for _ in range(args.calls):
        fn(*operands)
    bench_torch.torch.cuda.synchronize()
    print(f"{args.shape}: {args.calls} calls of {method}")


if __name__ == "__main__":
    main()
