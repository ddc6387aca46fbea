"""Ours against DeepGEMM in one process, on the same operand memory, interleaved shape by shape (issue 26).

tests/gpu/bench.cpp times ours and tests/gpu/bench_torch.py times DeepGEMM one after the other, each over all 45
shapes: between a shape's two measurements lie minutes of other work, and the H200's clock under its power limit
moves by up to 10 % between calls (bench/RESULTS.md, clocks.csv). This script removes that drift from the ratio:

- one process loads our CUDA backend (the C ABI of kernels/gemm_oracle.h, through ctypes: tests/gpu/go_abi.py, whose
  calls CI runs on the CPU backend) and `deep_gemm`;
- each shape's rotating input sets (> 200 MB, as both benches) are allocated once with go_alloc and shared: torch sees
  them through __cuda_array_interface__, so both kernels read the same bytes and write the same D;
- A's scales are MN-major with 16-byte aligned columns, the layout our kernel loads by TMA and DeepGEMM's required
  one (its transform returns them untouched: checked), so each timed call is one GEMM kernel on either side;
- rounds rotate the sides (each goes first in turn: deepgemm_launch.rotation), each round timed by
  bench_torch.py's `timed` (GPU time behind torch.cuda._sleep, median of the samples);
- DeepGEMM is timed twice a round where it has `set_pdl`: as it launches by default (without programmatic dependent
  launch) and with `set_pdl(True)`, as our kernels launch, where a call's prologue may run while the call before it
  ends (its kernel waits in cudaGridDependencySynchronize before touching global memory);
  bench/h2h_table.ts holds each shape against the faster DeepGEMM setting;
- the per-round ratios give each shape's median ratio and its spread;
- before timing, both sides compute D from the first set and the bits are compared (our fast kernels and DeepGEMM's
  agree bit for bit at these shapes: docs/hardware-evidence.md), a cross-check in the same run.

Our calls queue without waiting (GO_CUDA_ASYNC=1, set here before the library loads): the grouped calls check their
index tensor on the device, as in bench.cpp. Our kernels are JIT-compiled before timing by go_ext_fast_prepare (all
shapes, in parallel threads), DeepGEMM's by bench_torch.py's process pool.

The JSON ("gemm-oracle head-to-head", rewritten after every shape) feeds bench/h2h_table.ts.

usage: python3 tests/gpu/head_to_head.py --lib LIBGO_CUDA_SO [--json PATH] [--filter "SUBSTR|SUBSTR"] [--rounds N]
                                         [--samples N] [--quick] [--dg-jit-workers N] [--shape NAME ...]
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import sys
import time

os.environ.setdefault("GO_CUDA_ASYNC", "1")  # read when the backend loads: calls queue without waiting

import torch  # noqa: E402 - after the environment above

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_torch as bt  # noqa: E402 - the shapes, `timed`, DeepGEMM's loading and JIT pool
from go_abi import (  # noqa: E402
    GO_DTYPE, GO_I32, KIND_MODE, Backend, a_rows, extent_bytes, gemm_call, go_tensor, index_values, set_layout)


class Buffer:
    """go_alloc'd bytes that torch sees through __cuda_array_interface__ (zero-copy; this object keeps them)."""

    def __init__(self, ours, nbytes):
        self.ours, self.ptr = ours, ours.alloc(nbytes)
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (self.ptr, False),
                                         "version": 3, "strides": None}

    def view(self, dtype, shape, strides):
        return torch.as_tensor(self, device="cuda").view(dtype).as_strided(shape, strides)

    def __del__(self):
        try:
            self.ours.free(self.ptr)
        except Exception:  # noqa: BLE001 - at interpreter exit the library may be gone
            pass


TORCH = {"e4m3": torch.float8_e4m3fn, "f32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32}


def make_set(ours, kind, g, m, n, k, index):
    """One input set in our allocations, laid out by go_abi.set_layout (the layout CI runs on the CPU backend);
    returns (torch views a, sfa, b, sfb, d, our descriptors); each view keeps its buffer. Codes standard-normal
    rounded to e4m3, scales in [0.5, 1.5), D zero."""
    layout = set_layout(kind, g, m, n, k)
    views = tuple(Buffer(ours, extent_bytes(el, shape, strides)).view(TORCH[el], shape, strides)
                  for _, el, shape, strides in layout)
    a, sa, b, sb, d = views
    a.copy_(torch.randn(a.shape, device="cuda").to(a.dtype))
    b.copy_(torch.randn(b.shape, device="cuda").to(b.dtype))
    sa.copy_(torch.rand(sa.shape, device="cuda") + 0.5)
    sb.copy_(torch.rand(sb.shape, device="cuda") + 0.5)
    d.zero_()
    desc = [go_tensor(v, GO_DTYPE[el]) for v, (_, el, _, _) in zip(views, layout)]
    if index is not None:
        desc.append(go_tensor(index, GO_I32))
    return views, desc


def dg_call(dg, kind, g, m, index):
    """fn(a, sa, b, sb, d) running DeepGEMM once (bench_torch.py's calls)."""
    if kind == "dense":
        return lambda a, sa, b, sb, d: dg.fp8_gemm_nt((a, sa), (b, sb), d, recipe=bt.DG_RECIPE)
    if kind == "contiguous":
        if dg.get_mk_alignment_for_contiguous_layout() != bt.DG_MK_ALIGNMENT:
            dg.set_mk_alignment_for_contiguous_layout(bt.DG_MK_ALIGNMENT)
        return lambda a, sa, b, sb, d: dg.m_grouped_fp8_gemm_nt_contiguous((a, sa), (b, sb), d, index,
                                                                           recipe=bt.DG_RECIPE)
    return lambda a, sa, b, sb, d: dg.m_grouped_fp8_gemm_nt_masked((a, sa), (b, sb), d, index, m, recipe=bt.DG_RECIPE)


def dg_scales_untouched(dg, kind, g, m, k, sa):
    """Whether DeepGEMM takes A's scales as they are (its layout transform returns the same storage)."""
    mn = a_rows(kind, g, m)
    if not bt.dg_sfa_layout_ok(sa, mn):
        return False
    if hasattr(dg, "transform_sf_into_required_layout"):
        groups = g if kind == "masked" else None
        out = dg.transform_sf_into_required_layout(sa, mn, k, bt.DG_RECIPE, num_groups=groups, is_sfa=True)
        return out.data_ptr() == sa.data_ptr() and out.stride() == sa.stride()
    return True


def prepare_ours(ours, shapes):
    """Our JIT kernels of every shape, compiled in parallel threads (ctypes releases the GIL)."""
    if ours.prepare is None or not shapes:
        return {}
    errors, t0 = {}, time.perf_counter()

    def one(s):
        kind, g, m, n, k = s
        st = ours.prepare(KIND_MODE[kind], a_rows(kind, g, m), n, k, 1 if kind == "dense" else g)
        return s, (None if st == 0 else f"status {st}: {ours.error()}")

    with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, len(shapes))) as pool:
        for s, err in pool.map(one, shapes):
            if err:
                errors[s] = err
    print(f"ours: JIT prepare of {len(shapes)} shapes in {time.perf_counter() - t0:.1f} s", flush=True)
    return errors


def shape_fields(shape):
    """A row's shape fields, as the bench JSONs name them."""
    return dict(zip(("kind", "g", "m", "n", "k"), shape))


def operands(ours, dg, shape, target):
    """The shape's rotating input sets (make_set, at least `target` bytes in all) and the two calls on them:
    (sets, fo(desc) ours, fd(a, sa, b, sb, d) DeepGEMM's)."""
    kind, g, m, n, k = shape
    index, values = None, index_values(kind, g, m)
    if values is not None:  # our calls need it in one of our allocations (the view keeps its buffer)
        index = Buffer(ours, 4 * len(values)).view(torch.int32, (len(values),), (1,))
        index.copy_(torch.tensor(values, dtype=torch.int32))
    set_bytes = sum(extent_bytes(el, shape, strides) for _, el, shape, strides in set_layout(kind, g, m, n, k))
    sets = [make_set(ours, kind, g, m, n, k, index) for _ in range(bt.n_sets(set_bytes, target))]
    return sets, gemm_call(ours, kind), dg_call(dg, kind, g, m, index)


def open_sides(lib):
    """(DeepGEMM, our backend), or None after printing why DeepGEMM is unavailable."""
    dg, why = bt.load_deep_gemm(False)
    if dg is None:
        print(f"DeepGEMM unavailable: {why}")
        return None
    return dg, Backend(lib)


def parse_shapes(ap, names):
    """The shapes `names` stand for (tests/gpu/shapes.py's rules); a bad one ends the program through ap.error."""
    try:
        return [bt.parse_shape_name(name) for name in names]
    except ValueError as exc:
        ap.error(str(exc))


def run_shape(ours, dg, shape, rounds, samples, target):
    kind, g, m, n, k = shape
    pdl = bt.has_pdl_setting(dg)
    row = {**shape_fields(shape), "ours_us": [], "deepgemm_us": [], "order": []}
    if pdl:
        row["deepgemm_pdl_us"] = []
    sets, fo, fd = operands(ours, dg, shape, target)
    views, desc = sets[0]
    row["sets"] = len(sets)
    if not dg_scales_untouched(dg, kind, g, m, k, views[1]):
        raise RuntimeError("DeepGEMM would re-layout A's scales on each call: "
                           "the timed call would not be its GEMM alone")
    # The bits of both on the first set.
    d = views[4]
    fo(desc)
    torch.cuda.synchronize()
    ours_d = d.clone()
    row["config"] = ours.last_config()
    d.zero_()
    fd(*views)
    torch.cuda.synchronize()
    # Masked: the rows below masked_m (= m); past them each kernel leaves what its tiles leave (gemm_oracle.h).
    mine, theirs = (ours_d[:, :m], d[:, :m]) if kind == "masked" else (ours_d, d)
    diff = (mine.contiguous().view(torch.int16) != theirs.contiguous().view(torch.int16)).sum().item()
    row["bits_equal"] = diff == 0
    row["bits_differ"] = int(diff)
    row["elements"] = mine.numel()
    batch = 10 if kind == "dense" else 5
    timed = {"ours": (fo, [(s[1],) for s in sets]), "deepgemm": (fd, [s[0] for s in sets])}
    if pdl:  # each timed call's batch wholly with the setting (set on the host before its launches)
        timed["deepgemm"] = (bt.dg_launch(dg, fd, False), [s[0] for s in sets])
        timed["deepgemm_pdl"] = (bt.dg_launch(dg, fd, True), [s[0] for s in sets])
    for r in range(rounds):
        sides = bt.rotation(list(timed), r)
        for side in sides:
            fn, args = timed[side]
            row[f"{side}_us"].append(bt.timed(fn, args, batch, samples, True)[0])
        row["order"].append(sides[0])
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="our CUDA backend (libgo_cuda.so)")
    ap.add_argument("--json", default="")
    ap.add_argument("--filter", default="")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--shape", action="append", default=[],
                    help="a shape outside the 45, named as the tables name them ('dense 4096x4224x32768'); repeatable; "
                         "with --shape only the named shapes run (and those --filter picks from the 45)")
    ap.add_argument("--dg-jit-workers", type=int, default=8)
    args = ap.parse_args()
    if args.rounds < 2 or args.samples < 3:
        ap.error("--rounds must be >= 2 and --samples >= 3 (a spread needs rounds, a median samples)")
    extra = parse_shapes(ap, args.shape)
    sides = open_sides(args.lib)
    if sides is None:
        return 2
    dg, ours = sides
    shapes = bt.QUICK if args.quick else bt.all_shapes()
    if args.filter:
        keys = args.filter.split("|")
        shapes = [s for s in shapes if any(key in bt.shape_name(*s) for key in keys)]
    elif extra:
        shapes = []
    shapes += [s for s in extra if s not in shapes]
    props = torch.cuda.get_device_properties(0)
    target = max(200 << 20, 4 * getattr(props, "L2_cache_size", 50 << 20))
    doc = {"tool": "gemm-oracle head-to-head", "device": props.name, "torch": torch.__version__,
           "deepgemm": getattr(dg, "__version__", "?"), "date": datetime.date.today().isoformat(),
           "rounds": args.rounds, "samples": args.samples, "method": "interleaved rounds, shared operands",
           "deepgemm_pdl": bt.has_pdl_setting(dg),
           "rows": [], "complete": False}

    def write():
        if args.json:
            with open(args.json + ".tmp", "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(args.json + ".tmp", args.json)

    errors = prepare_ours(ours, shapes)
    bt.dg_jit_prepare(shapes, args.dg_jit_workers)
    for s in shapes:
        name = bt.shape_name(*s)
        if s in errors:
            doc["rows"].append({**shape_fields(s), "error": errors[s]})
            print(f"{name}: ours: {errors[s]}", flush=True)
            continue
        try:
            row = run_shape(ours, dg, s, args.rounds, args.samples, target)
        except Exception as exc:  # noqa: BLE001 - the row says why; the other shapes go on
            row = {**shape_fields(s), "error": bt.first_line(exc)}
            print(f"{name}: {row['error']}", flush=True)
        else:
            # The ratio bench/h2h_table.ts reports: the median of the per-round ratios.
            o, d = bt.median(row["ours_us"]), bt.median(row["deepgemm_us"])
            ratio = bt.median([dd / oo for oo, dd in zip(row["ours_us"], row["deepgemm_us"])])
            bits = "equal" if row["bits_equal"] else f"DIFFER ({row['bits_differ']})"
            with_pdl_us = f", with PDL {bt.median(row['deepgemm_pdl_us']):.1f} us" if "deepgemm_pdl_us" in row else ""
            print(f"{name}: ours {o:.1f} us, DeepGEMM {d:.1f} us{with_pdl_us}, ratio {ratio:.3f} (without PDL), "
                  f"bits {bits}, {row['config']}", flush=True)
        doc["rows"].append(row)
        write()
    doc["complete"] = True
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
