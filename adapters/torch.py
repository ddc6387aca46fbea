#!/usr/bin/env python3
"""A gemm-oracle backend host for cuBLASLt through PyTorch: `verify --backend 'cmd:python3 adapters/torch.py'`.

What it declares (`DECLARED` below, op -> the reference model the result must match bit for bit), and why:

- `cublaslt_gemm_{nt,nn,tn,tt}` -> `cublaslt`: raw FP8 operands through `torch._scaled_mm` with tensor-wise scales of
  exactly 1.0 and fast accumulation off, which is what the oracle's `cublaslt` model describes (cuBLASLt promoting the
  chained wgmma partial sums to fp32 every 128 K; numerics.md §8.2b). BF16 operands go through `torch.mm`.
- `fp8_gemm_{nt,nn,tn,tt}` -> `sm90_1d2d`: cuBLASLt's block-scaled FP8 GEMM (`torch._scaled_mm` with 1x128 activation
  scales and 128x128 weight scales, BF16 output), whose epilogue was found on an H200 to be DeepGEMM's 1D2D one
  (s = fl32(sa*sb), F = fma(s, P, F) per 128 K, one BF16 rounding; numerics.md §8.2b). Only that form maps: FP32
  output, C, other granularities answer `unsupported`.
- `bf16_gemm_{nt,nn,tn,tt}` -> `bf16`: `torch.mm` (cuBLAS BF16 GEMM: the whole K in the Hopper BF16 wgmma, one
  rounding of the fp32 accumulator); FP32 output with C through `torch.addmm(..., out_dtype=torch.float32)`
  (D = fl32(C + F), what the model's reduce-add gives). BF16 output with C is not declared work: cuBLAS rounds
  C + F once, DeepGEMM's BF16 kernels round twice (bf16(C + bf16(F))), so that request answers `unsupported`.
- `einsum` -> `bf16` for 'bhr,hdr->bhd' and 'bhd,hdr->bhr' (batched cuBLAS BF16 GEMMs, BF16 out, no C).

Not declared, because no oracle op or model describes them: tensor-wise scales other than 1.0, fast accumulation
(cuBLASLt then chains the wgmma over the whole K; the `cublaslt` model promotes every 128 K), row-wise scaling,
`torch._grouped_mm`, and PyTorch's plain dtype casts (the oracle's casts are `oracle cast` profiles, not verify ops).
`--fast-accum` is a negative control for reports: it runs the raw-FP8 ops with fast accumulation on while still
claiming `cublaslt`, and verify is expected to fail it wherever K > 128.

Run with `--declare` to print the hello as JSON without importing torch. Without torch the adapter prints why and
exits with status 2. On an H200 with torch 2.11 (bench/RESULTS.md, "Adapters on the H200") the block-scaled path
differs from `sm90_1d2d` in two known ways: cuBLASLt may split K (64x576x7168: two halves), and where ceil(K/128) is
not a multiple of 4 and N > 128 cuBLASLt reads the 128x128 B scales with a row stride padded to 16 bytes while torch
passes them packed, so columns past the first 128 get other blocks' scales.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# `python3 adapters/torch.py` puts adapters/ first on sys.path, where this very file would shadow PyTorch.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

# The op table, a plain literal (tests/adapters/adapters_test.ts reads it through `--declare`).
DECLARED = {
    "cublaslt_gemm_nt": "cublaslt",
    "cublaslt_gemm_nn": "cublaslt",
    "cublaslt_gemm_tn": "cublaslt",
    "cublaslt_gemm_tt": "cublaslt",
    "fp8_gemm_nt": "sm90_1d2d",
    "fp8_gemm_nn": "sm90_1d2d",
    "fp8_gemm_tn": "sm90_1d2d",
    "fp8_gemm_tt": "sm90_1d2d",
    "bf16_gemm_nt": "bf16",
    "bf16_gemm_nn": "bf16",
    "bf16_gemm_tn": "bf16",
    "bf16_gemm_tt": "bf16",
    "einsum": "bf16",
}

NAME = "torch"
SCRIPT = "adapters/torch.py"
FAST_ACCUM = False  # --fast-accum (negative control)


class _Unsupported(NotImplementedError):
    """Stands in for gemm_oracle.Unsupported until the serve loop starts (direct calls, probes)."""


Unsupported = _Unsupported
torch = None


def _load_common():
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("_gemm_oracle_adapters_common", os.path.join(_HERE, "_common.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _logical(x, transposed):
    """The operand as the GEMM reads it: `transposed` means the op's letter stores it the other way round."""
    return x.mT if transposed else x


def _row_major_lhs(x):
    return x if x.stride(-1) == 1 else x.contiguous()


def _col_major_rhs(x):
    """[K, N] with K innermost (cuBLASLt's FP8 "TN" form wants the second operand column-major)."""
    return x if x.stride(-2) == 1 else x.mT.contiguous().mT


def _fp8_only(op, a, b):
    if a.dtype not in (torch.float8_e4m3fn, torch.float8_e5m2) or b.dtype not in (torch.float8_e4m3fn,
                                                                                     torch.float8_e5m2):
        raise Unsupported(f"{op}: {a.dtype} x {b.dtype}; torch._scaled_mm takes FP8 operands")


def _no_k0(op, k):
    if k == 0:
        raise Unsupported(f"{op}: K = 0 (torch._scaled_mm refuses an empty reduction)")


# ---------------------------------------------------------------------------------------------------------------
# cuBLASLt raw FP8 (and BF16)


def _cublaslt_gemm(letters):
    op = f"cublaslt_gemm_{letters}"

    def run(a, b, d, c=None, **_):
        lhs = _logical(a, letters[0] == "t")   # [M, K]
        rhs = b.mT if letters[1] == "t" else b  # [K, N]: 't' stores B as [N, K], 'n' as [K, N]
        if a.dtype == torch.bfloat16:
            if c is not None and d.dtype != torch.float32:
                raise Unsupported(f"{op}: BF16 output with C (cuBLAS rounds C + F once; the model's form differs)")
            _matmul_into(d, lhs, rhs, c)
            return
        _fp8_only(op, a, b)
        _no_k0(op, lhs.shape[1])
        if c is not None:
            raise Unsupported(f"{op}: C with raw FP8 (torch._scaled_mm has a bias vector, not beta*C)")
        one = torch.ones((), device=a.device, dtype=torch.float32)
        try:
            out = torch._scaled_mm(_row_major_lhs(lhs), _col_major_rhs(rhs), one, one, out_dtype=d.dtype,
                                   use_fast_accum=FAST_ACCUM)
        except RuntimeError as e:
            if (skip := _refusal(op, f"{tuple(lhs.shape)} x {tuple(rhs.shape)}", e)) is not None:
                raise skip from e
            raise
        d.copy_(out)

    run.__name__ = op
    return run


# ---------------------------------------------------------------------------------------------------------------
# Block-scaled FP8 (1x128 activations, 128x128 weights)


# torch._scaled_mm's block-scaled form (ScaledBlas.cpp, is_blockwise_1x128_scaling / is_blockwise_128x128_scaling):
# A [M, K] row-major with scale_a [M, ceil(K/128)] M-major (strides (1, M)); B [K, N] column-major with scale_b such
# that scale_b.t() is [ceil(N/128), ceil(K/128)] row-major. cuBLASLt refuses some shapes (CUBLAS_STATUS_NOT_SUPPORTED
# from its heuristic, e.g. M = 1 or 7: a 1x128 scale column of M floats that is not a multiple of 16 bytes).
_REFUSALS = ("not_supported", "not supported", "must be divisible", "divisible by 16", "invalid scaling configuration")


def _refusal(op, shape, e):
    """torch._scaled_mm's RuntimeError e on `shape` as Unsupported (a SKIP with torch's words) when it refuses the shape
    (M, N, K alignment), which is not a wrong answer; None for any other error."""
    text = str(e).splitlines()[0] if str(e) else e.__class__.__name__
    if any(w in text.lower() for w in _REFUSALS):
        return Unsupported(f"{op}: torch._scaled_mm refuses {shape}: {text}")
    return None


def _block_scaled_mm(lhs, rhs, sa, sb):
    """torch._scaled_mm(A [M, K] row-major, B [K, N] column-major) with 1x128 / 128x128 scales, BF16 out, no fast
    accumulation; sa is [M, K/128], sb [N/128, K/128] (logical, any strides)."""
    return torch._scaled_mm(lhs, rhs, sa.mT.contiguous().mT, sb.contiguous().mT, out_dtype=torch.bfloat16,
                            use_fast_accum=False)


def _fp8_gemm(letters):
    op = f"fp8_gemm_{letters}"

    def run(a, sfa, b, sfb, d, c=None, recipe=None, recipe_a=None, recipe_b=None, **_):
        _fp8_only(op, a, b)
        if c is not None or d.dtype != torch.bfloat16:
            raise Unsupported(f"{op}: {d.dtype} output{' with C' if c is not None else ''}; only cuBLASLt's "
                              "block-scaled BF16-output form maps onto sm90_1d2d")
        if recipe_a is not None or recipe_b is not None or (recipe is not None and tuple(recipe) != (1, 128, 128)):
            raise Unsupported(f"{op}: recipe {recipe or (recipe_a, recipe_b)}; cuBLASLt block scaling is 1x128 x 128x128")
        if sfa.dtype != torch.float32 or sfb.dtype != torch.float32:
            raise Unsupported(f"{op}: scales {sfa.dtype}/{sfb.dtype}; cuBLASLt's block scales are fp32")
        a_t, b_n = letters[0] == "t", letters[1] == "n"
        lhs, sa = _logical(a, a_t), _logical(sfa, a_t)   # [M, K], [M, K/128]
        bt, sb = _logical(b, b_n), _logical(sfb, b_n)    # [N, K], [N/128, K/128]
        m, k = lhs.shape
        n = bt.shape[0]
        _no_k0(op, k)
        if sa.shape != (m, (k + 127) // 128) or sb.shape != ((n + 127) // 128, (k + 127) // 128):
            raise Unsupported(f"{op}: scale shapes {tuple(sa.shape)}, {tuple(sb.shape)} are not 1x128 / 128x128")
        try:
            out = _block_scaled_mm(_row_major_lhs(lhs), bt.contiguous().mT, sa, sb)
        except RuntimeError as e:
            if (skip := _refusal(op, f"{m}x{n}x{k}", e)) is not None:
                raise skip from e
            raise
        d.copy_(out)

    run.__name__ = op
    return run


# ---------------------------------------------------------------------------------------------------------------
# BF16


def _matmul_into(d, lhs, rhs, c):
    """d = lhs @ rhs (+ c) through cuBLAS; FP32 output from BF16 operands via out_dtype."""
    if d.dtype == lhs.dtype and c is None:
        torch.mm(lhs, rhs, out=d)
    elif d.dtype == torch.float32 and c is not None:
        d.copy_(torch.addmm(c, lhs, rhs, out_dtype=torch.float32))
    elif d.dtype == torch.float32:
        d.copy_(torch.mm(lhs, rhs, out_dtype=torch.float32))
    else:
        raise Unsupported(f"{lhs.dtype} operands with {d.dtype} output and C")


def _bf16_gemm(letters):
    op = f"bf16_gemm_{letters}"

    def run(a, b, d, c=None, **_):
        if a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16:
            raise Unsupported(f"{op}: {a.dtype} x {b.dtype}")
        if c is not None and d.dtype != torch.float32:
            raise Unsupported(f"{op}: BF16 output with C; cuBLAS rounds C + F once, the bf16 model rounds twice "
                              "(bf16(C + bf16(F)), DeepGEMM's reduce-add)")
        lhs = _logical(a, letters[0] == "t")
        rhs = b if letters[1] == "n" else b.mT
        _matmul_into(d, lhs, rhs, c)

    run.__name__ = op
    return run


def einsum(expr, a, b, d, c=None, **_):
    if c is not None or d.dtype != torch.bfloat16 or a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16:
        raise Unsupported(f"einsum '{expr}': only BF16 operands and output without C map onto model bf16")
    if expr == "bhr,hdr->bhd":      # D[b, h, :] = A[b, h, :] @ B[h]^T
        out = torch.bmm(a.transpose(0, 1), b.mT).transpose(0, 1)
    elif expr == "bhd,hdr->bhr":    # D[b, h, :] = A[b, h, :] @ B[h]
        out = torch.bmm(a.transpose(0, 1), b).transpose(0, 1)
    else:
        raise Unsupported(f"einsum '{expr}': not a batched GEMM with one rounding in PyTorch")
    d.copy_(out)


def build_ops():
    ops = {"einsum": einsum}
    for letters in ("nt", "nn", "tn", "tt"):
        ops[f"cublaslt_gemm_{letters}"] = _cublaslt_gemm(letters)
        ops[f"fp8_gemm_{letters}"] = _fp8_gemm(letters)
        ops[f"bf16_gemm_{letters}"] = _bf16_gemm(letters)
    missing = set(DECLARED) - set(ops)
    assert not missing, f"declared without an implementation: {sorted(missing)}"
    return ops


def import_libraries():
    global torch
    try:
        import torch as _torch  # noqa: PLC0415
    except ImportError as e:
        return "PyTorch", e, "this adapter needs torch with CUDA on a GPU machine"
    if not hasattr(_torch, "_scaled_mm"):
        version = getattr(_torch, "__version__", "?")
        return "torch._scaled_mm", ImportError(f"torch {version} has none"), "this adapter needs torch >= 2.4 with CUDA"
    torch = _torch
    return None


def library_info():
    info = {"library": f"torch {torch.__version__}", "cuda": str(torch.version.cuda),
            "cublaslt_fast_accum": FAST_ACCUM}
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        info["device"] = f"{torch.cuda.get_device_name()} (sm_{major}{minor})"
    return info


def main(argv):
    global FAST_ACCUM, Unsupported
    common = _load_common()
    FAST_ACCUM = "--fast-accum" in argv
    name = NAME + ("-fast-accum" if FAST_ACCUM else "")
    if "--declare" in argv:
        return common.print_declaration(name, DECLARED)
    failure = import_libraries()
    if failure:
        return common.unusable(SCRIPT, *failure)
    if not torch.cuda.is_available():
        sys.stderr.write(f"{SCRIPT}: torch sees no CUDA device; cuBLASLt needs a GPU\n")
        return 2
    package = common.import_package(SCRIPT)
    if package is None:
        return 2
    Unsupported = package.Unsupported
    ops = build_ops()
    package.serve({op: ops[op] for op in DECLARED}, name=name, models=dict(DECLARED), tensors="torch", device="cuda",
                  info=library_info())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
