"""Baselines for bench/RESULTS.md next to tests/gpu/bench.cpp, on the same DeepSeek-V3 shapes (deepgemm-ops.md §12):

- dense (M in {64, 128, 4096} x 7 (N, K)): cuBLASLt block-scaled FP8 (torch._scaled_mm, 1x128 activation scales and
  128x128 weight scales, BF16 out; the scale layouts torch accepts are probed), cuBLASLt FP8 with one scale per
  tensor (torch._scaled_mm with scalar scales, cuBLASLt's default accumulation and its fast accumulation: the same
  product with no per-block scaling work), torch BF16 matmul, and DeepGEMM's `deep_gemm.fp8_gemm_nt`;
- m-grouped contiguous ((G, m) in {(4, 8192), (8, 4096)} x 4 (N, K)) and masked ((G, m) in {(32, 192), (6, 1024),
  (32, 20), (6, 20)}, real rows only): torch BF16 as one torch._grouped_mm call where torch has it (else a loop of
  per-group matmuls), cuBLASLt block-scaled FP8 as a loop of G torch._scaled_mm calls ("loop of G calls"), and
  DeepGEMM's `m_grouped_fp8_gemm_nt_contiguous` / `m_grouped_fp8_gemm_nt_masked` (one call).

CUDA events around batches of calls, warm-up, median over >= 20 samples, inputs rotated over sets totalling more than
max(200 MB, 4 x L2). Dense and grouped shapes: GPU time, the batch (for grouped shapes, loops of G calls) queued behind
torch.cuda._sleep; the per-call time as Python issues it is kept as *_us_call. A shape cuBLASLt refuses is recorded as
"refused" with the first line of the error.

DeepGEMM (the deepgemm_* fields) is timed whenever `import deep_gemm` works (the caller puts it on PYTHONPATH; nothing
here builds it); otherwise, or with --no-deepgemm, every DeepGEMM cell is skipped, the reason printed once and stored
as the JSON's deepgemm_error. Its operands are tests/gpu/bench.cpp's: A [rows, K] (masked: [G, Mmax, K]) and B [N, K]
(grouped: [G, N, K]) e4m3, K-major; FP32 scales, 1x128 per token for A and 128x128 per block for B; BF16 D written in
place; recipe (1, 128, 128) and DeepGEMM's other defaults, as adapters/deepgemm.py calls it. A's scales are put into
DeepGEMM's MN-major TMA-aligned layout once per input set (transform_sf_into_required_layout; the layout is checked),
so that the call's own layout step returns them untouched and each timed call is the GEMM kernel alone. Contiguous:
grouped_layout = m_indices, the group of each of the G*m rows (every group m rows, a multiple of the 128-row
alignment, which is set as the adapter sets it). Masked: A and D [G, Mmax, *] with Mmax = m rounded up to 128,
masked_m[g] = m and expected_m = m (the mean of masked_m: the adapter's rule). Batches of 10 calls (dense) or 5
(grouped), as bench.cpp. DeepGEMM launches without programmatic dependent launch by default; where its deep_gemm
has `set_pdl`, the same calls are timed again with it on (deepgemm_pdl_us), as ours launch, and bench/gpu_table.ts
takes the faster. FLOPs of the real rows (M, or G * m), as bench.cpp counts them. DeepGEMM JIT-compiles each
kernel on its first call: before any timing, --dg-jit-workers spawned processes (default 8; 0: none) make one call per
shape at once, so the compiles run in parallel into DeepGEMM's disk cache and the timed warm-up only loads them. A
shape whose first call fails there is not run in this process (a CUDA fault would end its context); its first error
line is the row's deepgemm_error, as is any error of the timed calls, and the other shapes go on.

The JSON is rewritten after every shape ("complete": false until the last), so a timeout keeps the shapes done.

usage: python3 tests/gpu/bench_torch.py [--quick] [--json PATH] [--filter "SUBSTR|SUBSTR"] [--samples N]
                                        [--no-deepgemm] [--dg-jit-workers N]
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import multiprocessing
import os
import time

import torch

from deepgemm_launch import dg_launch, has_pdl_setting, rotation  # noqa: F401 - re-exported: head_to_head.py uses them
from shapes import (  # noqa: E402,F401 - re-exported: head_to_head.py and profile_deepgemm.py use them as bt.*
    DENSE_NK, GROUPED_NK, QUICK, all_shapes, parse_shape_name, shape_flops, shape_name)


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


# DeepGEMM: FP32 scales, 1x128 per token for A and 128x128 per block for B (adapters/deepgemm.py's SM90 default).
DG_RECIPE = (1, 128, 128)
DG_MK_ALIGNMENT = 128  # DeepGEMM's default contiguous-layout alignment, which adapters/deepgemm.py sets explicitly


def load_deep_gemm(disabled):
    """(deep_gemm, None) when `import deep_gemm` works, else (None, the reason every DeepGEMM cell is skipped)."""
    if disabled:
        return None, "skipped (--no-deepgemm)"
    try:
        import deep_gemm  # noqa: PLC0415 - optional: the caller puts it on PYTHONPATH
    except Exception as exc:  # noqa: BLE001 - ImportError, or its extension / CUDA-home lookup failing on import
        return None, f"import deep_gemm: {type(exc).__name__}: {first_line(exc)}"
    return deep_gemm, None


def dg_sfa_layout_ok(sf, mn):
    """Whether A's scales have DeepGEMM's MN-major TMA-aligned layout, the one its in-call transform returns as is:
    stride 1 along MN, the K stride MN rounded up to 16 bytes (4 floats), groups packed."""
    aligned = (mn + 3) // 4 * 4
    ok = sf.stride(-2) == 1 and sf.stride(-1) == aligned
    return ok and (sf.dim() == 2 or sf.stride(0) == aligned * sf.size(-1))


def dg_problem(dg, kind, g, m, n, k):
    """DeepGEMM's call on one bench shape: (fn, method, make_set, set_bytes); fn(*make_set()) runs the GEMM once.

    A set is (a, sfa, b, sfb, d) laid out as tests/gpu/bench.cpp lays out its operands, with sfa already in DeepGEMM's
    required layout; the index tensor (m_indices or masked_m) is shared by the sets, as in bench.cpp."""
    kb, nb = (k + 127) // 128, (n + 127) // 128
    mmax = (m + 127) // 128 * 128
    rows = m if kind == "dense" else g * (m if kind == "contiguous" else mmax)  # allocated rows of A and D
    if kind == "dense":
        def fn(a, sfa, b, sfb, d):
            dg.fp8_gemm_nt((a, sfa), (b, sfb), d, recipe=DG_RECIPE)

        method = "deep_gemm.fp8_gemm_nt"
    elif kind == "contiguous":
        if dg.get_mk_alignment_for_contiguous_layout() != DG_MK_ALIGNMENT:
            dg.set_mk_alignment_for_contiguous_layout(DG_MK_ALIGNMENT)
        m_indices = torch.arange(g, device="cuda", dtype=torch.int32).repeat_interleave(m)

        def fn(a, sfa, b, sfb, d):
            dg.m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices, recipe=DG_RECIPE)

        method = "deep_gemm.m_grouped_fp8_gemm_nt_contiguous (m_indices: the group of each row)"
    else:
        masked_m = torch.full((g,), m, device="cuda", dtype=torch.int32)

        def fn(a, sfa, b, sfb, d):
            dg.m_grouped_fp8_gemm_nt_masked((a, sfa), (b, sfb), d, masked_m, m, recipe=DG_RECIPE)

        method = f"deep_gemm.m_grouped_fp8_gemm_nt_masked (Mmax {mmax}, masked_m = expected_m = {m})"

    def make_set():
        a = fp8(rows, k)
        sa = torch.rand(rows, kb, device="cuda") + 0.5
        d = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
        mn, groups = rows, None
        if kind == "masked":
            a, sa, d = a.view(g, mmax, k), sa.view(g, mmax, kb), d.view(g, mmax, n)
            mn, groups = mmax, g
        b = fp8(g * n, k)
        sb = torch.rand(g * nb, kb, device="cuda") + 0.5
        if kind != "dense":
            b, sb = b.view(g, n, k), sb.view(g, nb, kb)
        if hasattr(dg, "transform_sf_into_required_layout"):
            sfa = dg.transform_sf_into_required_layout(sa, mn, k, DG_RECIPE, num_groups=groups, is_sfa=True)
        else:
            sfa = dg.get_mn_major_tma_aligned_tensor(sa)
        if not dg_sfa_layout_ok(sfa, mn):
            raise RuntimeError(f"A's scales {list(sfa.shape)} strides {list(sfa.stride())} are not in DeepGEMM's "
                               "MN-major TMA-aligned layout: each timed call would transform them again")
        return a, sfa, b, sb, d

    set_bytes = rows * k + g * n * k + 2 * rows * n + 4 * (rows * kb + g * nb * kb)
    return fn, method, make_set, set_bytes


_DG_WORKER_FAULT = None  # in a prepare worker: the shape after which its CUDA context stopped working


def dg_first_call(shape):
    """Process-pool worker: one DeepGEMM call on `shape` (its JIT compile lands in the disk cache).

    Returns (seconds, None) or (seconds, the first line of the error). Raises, leaving the shape to the parent's timed
    warm-up, once an earlier shape's failure has left this worker without a working CUDA context."""
    global _DG_WORKER_FAULT
    if _DG_WORKER_FAULT:
        raise RuntimeError(f"this worker's CUDA context failed after {_DG_WORKER_FAULT}")
    t0 = time.perf_counter()
    err = None
    try:
        import deep_gemm  # noqa: PLC0415 - the worker's own import (spawned process)

        fn, _, make_set, _ = dg_problem(deep_gemm, *shape)
        fn(*make_set())
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        err = first_line(exc)
    try:
        torch.cuda.empty_cache()
        if err:  # is the context still usable?
            torch.ones(1, device="cuda").add_(1)
            torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - a sticky CUDA error: this worker takes no more shapes
        _DG_WORKER_FAULT = shape_name(*shape)
    return time.perf_counter() - t0, err


def dg_jit_prepare(shapes, workers):
    """DeepGEMM's first call on every shape in `workers` spawned processes at once (each its own CUDA context), so its
    JIT compiles run in parallel. Returns ({shape: (seconds, error or None)}, wall seconds); a shape the pool could not
    run (a worker died) is absent, and its own timed warm-up compiles it."""
    done, t0 = {}, time.perf_counter()
    if workers <= 0 or not shapes:
        return done, 0.0
    try:
        ctx = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(shapes)), mp_context=ctx) as pool:
            futures = {pool.submit(dg_first_call, s): s for s in shapes}
            for fut in concurrent.futures.as_completed(futures):
                try:
                    done[futures[fut]] = fut.result()
                except Exception as exc:  # noqa: BLE001 - e.g. BrokenProcessPool: left to the timed warm-up
                    print(f"DeepGEMM JIT prepare, {shape_name(*futures[fut])}: {first_line(exc)}")
    except Exception as exc:  # noqa: BLE001 - no pool at all: the timed warm-ups compile
        print(f"DeepGEMM JIT prepare: {first_line(exc)} (each shape's warm-up compiles instead)")
    return done, time.perf_counter() - t0


class Bench:
    def __init__(self, samples, target):
        self.samples = samples
        self.target = target

    def dense(self, m, n, k):
        row = {}
        flops = shape_flops("dense", 1, m, n, k)
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
        row.update(self.tensor_scaled(m, n, k, flops))
        per = 2 * (m * k + n * k + m * n)
        bsets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                  torch.randn(n, k, device="cuda", dtype=torch.bfloat16)) for _ in range(n_sets(per, self.target))]
        us, us_call = timed(lambda a, b: a @ b.t(), bsets, 10, self.samples, True)
        row.update(bf16_us=us, bf16_us_call=us_call, bf16_tflops=flops / us / 1e6, bf16_method="a @ b.t()")
        return row

    def tensor_scaled(self, m, n, k, flops):
        """cuBLASLt FP8 with one f32 scale per tensor (torch._scaled_mm with scalar scales; BF16 out): the same e4m3
        product without per-block scales, as cuBLASLt accumulates by default (tensorfp8_*: intermediate results
        periodically promoted to higher precision) and with its fast accumulation (tensorfp8_fast_*,
        use_fast_accum=True: CUBLASLT_MATMUL_DESC_FAST_ACCUM, which leaves that promotion out; cuBLAS documentation,
        cublasLtMatmulDescAttributes_t). What the GEMM costs on this GPU with no scaling work: a reference for what the
        1x128 / 128x128 promotion costs ours and DeepGEMM's. A refusal is recorded as tensorfp8_error or
        tensorfp8_fast_error."""
        row = {}
        per = m * k + n * k + 2 * m * n
        sets = [(fp8(m, k), fp8(n, k).t()) for _ in range(n_sets(per, self.target))]
        one = torch.ones((), device="cuda")
        for name, fast in (("tensorfp8", False), ("tensorfp8_fast", True)):
            def mm(a, bt, fast=fast):
                return torch._scaled_mm(a, bt, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)

            try:
                mm(*sets[0])
                torch.cuda.synchronize()
                us, us_call = timed(mm, sets, 10, self.samples, True)
                row.update({f"{name}_us": us, f"{name}_us_call": us_call, f"{name}_tflops": flops / us / 1e6})
            except Exception as exc:  # noqa: BLE001 - a refusal is a result; the shape's other columns go on
                row[f"{name}_error"] = first_line(exc)
        return row

    def grouped(self, kind, g, m, n, k):
        """Contiguous: g groups of exactly m rows. Masked: the m real rows of each group (no padding rows)."""
        row = {}
        flops = shape_flops(kind, g, m, n, k)
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

    def deepgemm(self, dg, kind, g, m, n, k):
        """DeepGEMM's one call per shape, GPU time as the baselines, as it launches by default and (where it has
        set_pdl) with programmatic dependent launch; raises on failure (the caller records it)."""
        fn, method, make_set, per = dg_problem(dg, kind, g, m, n, k)
        sets = [make_set() for _ in range(n_sets(per, self.target))]
        batch = 10 if kind == "dense" else 5
        pdl = has_pdl_setting(dg)
        us, us_call = timed(dg_launch(dg, fn, False) if pdl else fn, sets, batch, self.samples, True)
        row = {"deepgemm_us": us, "deepgemm_us_call": us_call,
               "deepgemm_tflops": shape_flops(kind, g, m, n, k) / us / 1e6, "deepgemm_method": method}
        if pdl:
            row["deepgemm_pdl_us"] = timed(dg_launch(dg, fn, True), sets, batch, self.samples, True)[0]
        return row


def us_cells(row, prefix, width, missing="-"):
    """"<us> <TFLOPS>" of one column of the printed table, or a placeholder."""
    if f"{prefix}_us" in row:
        return f"{row[prefix + '_us']:{width}.1f} {row[prefix + '_tflops']:8.1f}"
    return f"{missing:>{width}s} {'-':>8s}"


def write_json(path, doc):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--filter", default="")
    ap.add_argument("--samples", type=int, default=25)
    ap.add_argument("--no-deepgemm", action="store_true", help="skip DeepGEMM even where deep_gemm imports")
    ap.add_argument("--dg-jit-workers", type=int, default=8,
                    help="processes that JIT-compile DeepGEMM's kernels before timing (0: each shape's warm-up does)")
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
    dg, dg_reason = load_deep_gemm(args.no_deepgemm)
    dg_version = getattr(dg, "__version__", "?") if dg else None
    doc = {"tool": "tests/gpu/bench_torch.py", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "device": device, "torch": torch.__version__, "cuda": torch.version.cuda, "l2_bytes": l2,
           "rotate_bytes": target, "samples": samples, "deepgemm": dg_version, "deepgemm_error": dg_reason,
           "deepgemm_prepare": None, "complete": False, "rows": []}
    first_calls = {}
    if dg is None:
        print(f"DeepGEMM: every cell skipped: {dg_reason}")
    elif args.dg_jit_workers <= 0:
        print(f"DeepGEMM {dg_version} ({os.path.dirname(getattr(dg, '__file__', '') or '?')}): each kernel "
              "JIT-compiles in its shape's warm-up (--dg-jit-workers 0)")
    else:
        print(f"DeepGEMM {dg_version} ({os.path.dirname(getattr(dg, '__file__', '') or '?')}): "
              f"first calls (JIT) of {len(shapes)} shapes on {args.dg_jit_workers} processes ...", flush=True)
        first_calls, wall = dg_jit_prepare(shapes, args.dg_jit_workers)
        failed = sum(1 for _, err in first_calls.values() if err)
        doc["deepgemm_prepare"] = {"workers": args.dg_jit_workers, "wall_s": wall, "shapes": len(first_calls),
                                   "failed": failed}
        print(f"DeepGEMM first calls: {len(first_calls)} of {len(shapes)} shapes in {wall:.1f} s wall, {failed} failed")
    print(f"{'shape':34s} {'blockFP8 us':>12s} {'TFLOPS':>8s} {'bf16 us':>10s} {'TFLOPS':>8s} "
          f"{'DeepGEMM us':>12s} {'TFLOPS':>8s}  notes")
    bench = Bench(samples, target)
    rows = doc["rows"]
    for kind, g, m, n, k in shapes:
        row = {"kind": kind, "g": g, "m": m, "n": n, "k": k}
        try:
            row.update(bench.dense(m, n, k) if kind == "dense" else bench.grouped(kind, g, m, n, k))
        except Exception as exc:  # noqa: BLE001 - one shape's failure (e.g. out of memory) must not stop the rest
            row["error"] = first_line(exc)
        torch.cuda.empty_cache()
        if dg is not None:
            seconds, err = first_calls.get((kind, g, m, n, k), (None, None))
            if seconds is not None:
                row["deepgemm_first_call_s"] = seconds
            if err:
                row["deepgemm_error"] = f"first call: {err}"
            else:
                try:
                    row.update(bench.deepgemm(dg, kind, g, m, n, k))
                except Exception as exc:  # noqa: BLE001 - a JIT or launch failure: recorded, the next shape goes on
                    row["deepgemm_error"] = first_line(exc)
            torch.cuda.empty_cache()
        rows.append(row)
        tensor = [f"per-tensor FP8 {row[f'{x}_us']:.1f} us{' (fast accumulation)' if x.endswith('fast') else ''}"
                  for x in ("tensorfp8", "tensorfp8_fast") if f"{x}_us" in row]
        notes = [x for x in (*tensor, row.get("tensorfp8_error"), row.get("tensorfp8_fast_error"),
                             row.get("blockfp8_method") if kind != "dense" else None,
                             row.get("bf16_method") if kind != "dense" else None, row.get("refused"),
                             row.get("bf16_error"), row.get("error"),
                             row.get("deepgemm_error") and f"DeepGEMM: {row['deepgemm_error']}") if x]
        c8 = us_cells(row, "blockfp8", 12, "refused" if row.get("refused") else "-")
        print(shape_name(kind, g, m, n, k).ljust(34), c8, us_cells(row, "bf16", 10), us_cells(row, "deepgemm", 12), " ",
              "; ".join(notes), flush=True)
        if args.json:
            write_json(args.json, doc)
    doc["complete"] = True
    if args.json:
        write_json(args.json, doc)
        print(f"wrote {args.json} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
