"""Baselines for bench/RESULTS.md: cuBLASLt block-scaled FP8 (torch._scaled_mm, 1x128 / 128x128 scales, BF16 out)
and torch BF16 matmul on the DeepSeek-V3 dense shapes (deepgemm-ops.md §12). CUDA events, median of 20 timed calls
after 3 warm-ups, inputs rotated over several sets so that they exceed the 60 MB L2."""
import sys

import torch

SHAPES = [(64, 2112, 7168), (64, 24576, 1536), (64, 32768, 512), (64, 7168, 16384), (64, 4096, 7168),
          (64, 7168, 2048), (128, 2112, 7168), (128, 24576, 1536), (128, 32768, 512), (128, 7168, 16384),
          (128, 4096, 7168), (128, 7168, 2048), (4096, 2112, 7168), (4096, 24576, 1536), (4096, 32768, 512),
          (4096, 7168, 16384), (4096, 4096, 7168), (4096, 7168, 2048)]


def timed(fn, sets, iters=20):
    for i in range(3):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    for i in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(*sets[i % len(sets)])
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    times.sort()
    return times[len(times) // 2]


def block_scaled(m, n, k):
    """Returns a callable and input sets for cuBLASLt block-scaled FP8, trying the scale layouts torch accepts."""
    nsets = max(1, min(8, (200 << 20) // (m * k + n * k) + 1))
    sets = []
    for _ in range(nsets):
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        sa = torch.rand(m, k // 128, device="cuda") + 0.5
        sb = torch.rand(n // 128 if n % 128 == 0 else (n + 127) // 128, k // 128, device="cuda") + 0.5
        sets.append((a, b, sa, sb))
    errors = []
    variants = [
        lambda sa, sb: (sa.t().contiguous().t(), sb.t()),
        lambda sa, sb: (sa.t().contiguous().t(), sb.t().contiguous()),
        lambda sa, sb: (sa, sb.t()),
    ]
    for var in variants:
        try:
            prepared = [(a, b.t(), *var(sa, sb)) for (a, b, sa, sb) in sets]

            def fn(a, bt, sa, sb):
                return torch._scaled_mm(a, bt, sa, sb, out_dtype=torch.bfloat16)

            fn(*prepared[0])
            torch.cuda.synchronize()
            return fn, prepared, None
        except Exception as exc:  # noqa: BLE001 - report and try the next layout
            errors.append(str(exc).splitlines()[0][:120])
    return None, None, "; ".join(errors)


def main():
    quick = "--quick" in sys.argv
    shapes = SHAPES if not quick else [(128, 7168, 2048), (4096, 7168, 16384)]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'M,N,K':22s} {'blockFP8 us':>12s} {'TFLOPS':>8s} {'bf16 us':>10s} {'TFLOPS':>8s}")
    for m, n, k in shapes:
        flops = 2.0 * m * n * k
        fn, sets, err = block_scaled(m, n, k)
        if fn is not None:
            t8 = timed(fn, sets)
            c8 = f"{t8:12.1f} {flops / t8 / 1e6:8.1f}"
        else:
            c8 = f"{'refused':>12s} {'-':>8s}"
        del sets
        nb = max(1, min(8, (200 << 20) // (2 * (m * k + n * k)) + 1))
        bsets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                  torch.randn(n, k, device="cuda", dtype=torch.bfloat16)) for _ in range(nb)]
        tb = timed(lambda a, b: a @ b.t(), bsets)
        print(f"{m},{n},{k}".ljust(22), c8, f"{tb:10.1f} {flops / tb / 1e6:8.1f}", "" if err is None else err)
        del bsets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
