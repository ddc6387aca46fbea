"""Baselines for bench/RESULTS.md next to tests/gpu/bench.cpp, on the same DeepSeek-V3 shapes (deepgemm-ops.md §12):

- dense (M in {64, 128, 4096} x 7 (N, K)): cuBLASLt block-scaled FP8 (torch._scaled_mm, 1x128 activation scales and
  128x128 weight scales, BF16 out; the scale layouts torch accepts are probed) and torch BF16 matmul;
- m-grouped contiguous ((G, m) in {(4, 8192), (8, 4096)} x 4 (N, K)) and masked ((G, m) in {(32, 192), (6, 1024),
  (32, 20), (6, 20)}, real rows only): torch BF16 as one torch._grouped_mm call where torch has it (else a loop of
  per-group matmuls), and cuBLASLt block-scaled FP8 as a loop of G torch._scaled_mm calls ("loop of G calls").

CUDA events around batches of calls, warm-up, median over >= 20 samples, inputs rotated over sets totalling more than
max(200 MB, 4 x L2). Dense and grouped shapes: GPU time, the batch (for grouped shapes, loops of G calls) queued behind
torch.cuda._sleep; the per-call time as Python issues it is kept as *_us_call. A shape cuBLASLt refuses is recorded as "refused" with the first line of the error.

usage: python3 tests/gpu/bench_torch.py [--quick] [--json PATH] [--filter "SUBSTR|SUBSTR"] [--samples N]
"""

import argparse
import datetime
import json
import math
import time

import torch

DENSE_NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
GROUPED_NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]


def all_shapes():
    """(kind, g, m, n, k) in the order of tests/gpu/bench.cpp."""
    out = [("dense", 1, m, n, k) for m in (64, 128, 4096) for (n, k) in DENSE_NK]
    out += [("contiguous", g, m, n, k) for (g, m) in ((4, 8192), (8, 4096)) for (n, k) in GROUPED_NK]
    out += [("masked", g, m, n, k) for (g, m) in ((32, 192), (6, 1024), (32, 20), (6, 20)) for (n, k) in GROUPED_NK]
    return out


QUICK = [("dense", 1, 128, 7168, 2048), ("dense", 1, 4096, 7168, 16384), ("contiguous", 4, 8192, 4096, 7168),
         ("masked", 32, 192, 4096, 7168)]


def shape_name(kind, g, m, n, k):
    return f"dense {m}x{n}x{k}" if kind == "dense" else f"{kind} {g}x{m}x{n}x{k}"


def first_line(exc):
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:160]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def timed(fn, sets, batch, samples, held):
    """Median microseconds per fn call: warm-up over the sets, then `samples` batches between events.

    Returns (us, us_call). us_call: events around the batch as Python issues it (includes the host's per-call cost
    where the kernel is shorter). us, when `held`: the same batch queued behind torch.cuda._sleep so that the events
    time the kernels back to back (as tests/gpu/bench.cpp's spin kernel does; a sample whose queueing outlasted the
    sleep is retried with a longer one); otherwise us = us_call."""
    warm = max(3, min(len(sets), 64))
    for i in range(warm):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    idx = warm
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sample(sleep_us):
        nonlocal idx
        if sleep_us:
            torch.cuda._sleep(int(sleep_us * 2000))  # cycles at 2 GHz: at or above the SM clock
        start.record()
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(*sets[idx % len(sets)])
            idx += 1
        issue_us = (time.perf_counter() - t0) * 1e6
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3 / batch, issue_us

    calls, issues = [], []
    for _ in range(samples):
        us, issue = sample(0)
        calls.append(us)
        issues.append(issue)
    if not held:
        return median(calls), median(calls)
    spin, gpu, tries = 2 * max(issues) + 50, [], 0
    while len(gpu) < samples and tries < 4 * samples:
        tries += 1
        us, issue = sample(spin)
        if issue + 20 > spin:
            spin = 2 * issue + 50
            continue
        gpu.append(us)
    return median(gpu), median(calls)


def n_sets(set_bytes, target):
    return max(1, min(1024, math.ceil(target / max(1, set_bytes))))


def fp8(rows, cols):
    return torch.randn(rows, cols, device="cuda").to(torch.float8_e4m3fn)


def block_inputs(m, n, k):
    """One group's block-scaled operands: a [m, k], b [n, k] e4m3, sa [m, k/128] and sb [ceil(n/128), k/128] f32."""
    kb = (k + 127) // 128
    return (fp8(m, k), fp8(n, k), torch.rand(m, kb, device="cuda") + 0.5,
            torch.rand((n + 127) // 128, kb, device="cuda") + 0.5)


# The scale layouts tried in order (torch versions differ in what they accept).
VARIANTS = [
    lambda sa, sb: (sa.t().contiguous().t(), sb.t()),
    lambda sa, sb: (sa.t().contiguous().t(), sb.t().contiguous()),
    lambda sa, sb: (sa, sb.t()),
]


def scaled_mm(a, bt, sa, sb):
    return torch._scaled_mm(a, bt, sa, sb, out_dtype=torch.bfloat16)


def probe_block_scaled(m, n, k):
    """The first scale-layout variant cuBLASLt accepts for one [m, k] x [n, k] problem, or (None, error text)."""
    errors = []
    a, b, sa, sb = block_inputs(m, n, k)
    for var in VARIANTS:
        try:
            scaled_mm(a, b.t(), *var(sa, sb))
            torch.cuda.synchronize()
            return var, None
        except Exception as exc:  # noqa: BLE001 - report and try the next layout
            errors.append(first_line(exc))
    return None, "; ".join(dict.fromkeys(errors))


def grouped_mm_available():
    return hasattr(torch, "_grouped_mm")


class Bench:
    def __init__(self, samples, target):
        self.samples = samples
        self.target = target

    def dense(self, m, n, k):
        row = {}
        flops = 2.0 * m * n * k
        var, err = probe_block_scaled(m, n, k)
        if var is None:
            row["refused"] = err
        else:
            kb = (k + 127) // 128
            per = m * k + n * k + 2 * m * n + 4 * (m * kb + ((n + 127) // 128) * kb)
            sets = []
            for _ in range(n_sets(per, self.target)):
                a, b, sa, sb = block_inputs(m, n, k)
                sets.append((a, b.t(), *var(sa, sb)))
            us, us_call = timed(scaled_mm, sets, 10, self.samples, True)
            row.update(blockfp8_us=us, blockfp8_us_call=us_call, blockfp8_tflops=flops / us / 1e6, blockfp8_method="single call", refused=None)
            del sets
        per = 2 * (m * k + n * k + m * n)
        bsets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                  torch.randn(n, k, device="cuda", dtype=torch.bfloat16)) for _ in range(n_sets(per, self.target))]
        us, us_call = timed(lambda a, b: a @ b.t(), bsets, 10, self.samples, True)
        row.update(bf16_us=us, bf16_us_call=us_call, bf16_tflops=flops / us / 1e6, bf16_method="a @ b.t()")
        return row

    def grouped(self, kind, g, m, n, k):
        """Contiguous: g groups of exactly m rows. Masked: the m real rows of each group (no padding rows)."""
        row = {}
        flops = 2.0 * g * m * n * k
        kb = (k + 127) // 128
        batch = 2 if kind == "contiguous" else 5
        var, err = probe_block_scaled(m, n, k)
        if var is None:
            row["refused"] = err
        else:
            per = g * (m * k + n * k + 2 * m * n + 4 * (m * kb + ((n + 127) // 128) * kb))
            sets = []
            for _ in range(n_sets(per, self.target)):
                groups = []
                for _ in range(g):
                    a, b, sa, sb = block_inputs(m, n, k)
                    groups.append((a, b.t(), *var(sa, sb)))
                sets.append((groups,))

            def loop(groups):
                for grp in groups:
                    scaled_mm(*grp)

            # GPU time, as for the dense shapes: the G calls queued behind the sleep, so that Python's ~30 us per
            # call does not count as cuBLASLt's time (the per-call time is kept as blockfp8_us_call).
            us, us_call = timed(loop, sets, batch, self.samples, True)
            row.update(blockfp8_us=us, blockfp8_us_call=us_call, blockfp8_tflops=flops / us / 1e6,
                       blockfp8_method="loop of G calls", refused=None)
            del sets
        # BF16: A packed (contiguous: [g*m, k] with offsets; masked: [g, m, k]), B [g, n, k].
        per = 2 * g * (m * k + n * k + m * n)
        nset = n_sets(per, self.target)
        bsets = []
        for _ in range(nset):
            a = torch.randn(g * m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
            bsets.append((a, b))
        offs = torch.arange(1, g + 1, device="cuda", dtype=torch.int32) * m
        method, fn = None, None
        if grouped_mm_available():
            if kind == "contiguous":
                def gmm(a, b):
                    return torch._grouped_mm(a, b.transpose(-2, -1), offs=offs, out_dtype=torch.bfloat16)
            else:
                def gmm(a, b):
                    return torch._grouped_mm(a.view(g, m, k), b.transpose(-2, -1), out_dtype=torch.bfloat16)
            try:
                gmm(*bsets[0])
                torch.cuda.synchronize()
                method, fn = "torch._grouped_mm", gmm
            except Exception as exc:  # noqa: BLE001 - fall back to the loop
                method = f"loop of G matmuls (torch._grouped_mm: {first_line(exc)})"
        if fn is None:
            def loop_mm(a, b):
                for i in range(g):
                    a[i * m:(i + 1) * m] @ b[i].t()

            fn = loop_mm
            method = method or "loop of G matmuls"
        try:
            us, us_call = timed(fn, bsets, batch, self.samples, True)
            row.update(bf16_us=us, bf16_us_call=us_call, bf16_tflops=flops / us / 1e6, bf16_method=method)
        except Exception as exc:  # noqa: BLE001
            row.update(bf16_error=first_line(exc), bf16_method=method)
        return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--filter", default="")
    ap.add_argument("--samples", type=int, default=25)
    args = ap.parse_args()
    samples = max(20, args.samples)
    shapes = QUICK if args.quick else all_shapes()
    if args.filter:
        alternatives = [f for f in args.filter.split("|") if f]  # '|' separates alternatives, as in bench.cpp
        shapes = [s for s in shapes if any(f in shape_name(*s) for f in alternatives)]
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    target = max(200 << 20, 4 * l2)
    device = torch.cuda.get_device_name()
    print(f"torch {torch.__version__}, {device}, L2 {l2 / 2**20:.1f} MB; rotating inputs >= {target >> 20} MB; "
          f"median of {samples} samples; torch._grouped_mm {'present' if grouped_mm_available() else 'absent'}")
    print(f"{'shape':34s} {'blockFP8 us':>12s} {'TFLOPS':>8s} {'bf16 us':>10s} {'TFLOPS':>8s}  notes")
    bench = Bench(samples, target)
    rows = []
    for kind, g, m, n, k in shapes:
        row = {"kind": kind, "g": g, "m": m, "n": n, "k": k}
        try:
            row.update(bench.dense(m, n, k) if kind == "dense" else bench.grouped(kind, g, m, n, k))
        except Exception as exc:  # noqa: BLE001 - one shape's failure (e.g. out of memory) must not stop the rest
            row["error"] = first_line(exc)
        rows.append(row)
        c8 = (f"{row['blockfp8_us']:12.1f} {row['blockfp8_tflops']:8.1f}" if "blockfp8_us" in row else
              f"{'refused' if row.get('refused') else '-':>12s} {'-':>8s}")
        cb = f"{row['bf16_us']:10.1f} {row['bf16_tflops']:8.1f}" if "bf16_us" in row else f"{'-':>10s} {'-':>8s}"
        notes = [x for x in (row.get("blockfp8_method") if kind != "dense" else None,
                             row.get("bf16_method") if kind != "dense" else None, row.get("refused"),
                             row.get("bf16_error"), row.get("error")) if x]
        print(shape_name(kind, g, m, n, k).ljust(34), c8, cb, " ", "; ".join(notes), flush=True)
        torch.cuda.empty_cache()
    if args.json:
        doc = {"tool": "tests/gpu/bench_torch.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
               "device": device, "torch": torch.__version__, "cuda": torch.version.cuda, "l2_bytes": l2,
               "rotate_bytes": target, "samples": samples, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
        print(f"wrote {args.json} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
