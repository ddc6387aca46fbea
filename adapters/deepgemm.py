#!/usr/bin/env python3
"""A gemm-oracle backend host for DeepGEMM on Hopper (SM90): `verify --backend 'cmd:python3 adapters/deepgemm.py'`.

What it declares (`DECLARED` below, op -> the reference model the kernel must match bit for bit), and why:

- FP8 GEMMs `fp8_gemm_{nt,nn,tn,tt}`, `fp8_gemm_nt_skip_head_mid`, the m-grouped contiguous / masked forms and
  `fp8_einsum`: `sm90_1d2d`. DeepGEMM runs its SM90 1D2D kernel for BF16 output and its
  1D1D kernel for FP32 output with C (recipe (1, 1, 128)); the reference's `sm90_1d2d` model takes the scale
  granularity from the recipe and the epilogue from the output type, so one model covers both dispatches (the fixture
  `fp8_gemm_nt_m8_n64_k256_1d1d_c` gives the same bits under `sm90_1d2d` and `sm90_1d1d`).
- `k_grouped_fp8_gemm_nt_contiguous`: `sm90_1d1d` (the only model the op has; DeepGEMM's SM90 k-grouped kernel).
- BF16 GEMMs, their grouped forms and `einsum` (BF16): `bf16` (Hopper BF16 wgmma over the whole K, DeepGEMM's
  reduce-add epilogue).
- `fp8_mqa_logits`, `fp8_paged_mqa_logits`, `get_paged_mqa_logits_metadata`, `tf32_hc_prenorm_gemm`: `sm90`.
- `cublaslt_gemm_{nt,nn,tn,tt}`: `cublaslt` (DeepGEMM's cuBLASLt baseline: raw FP8 or BF16, fast accumulation off).
- DeepGEMM's utility quantizers (`deep_gemm.utils`: `per_token_cast_to_fp8`, ...): `gpu` (PyTorch on CUDA), declared
  only with `--quantizers` (`QUANTIZERS`): verify has no reference for these fixture-only ops yet.

Not declared: the Mega MoE kernels, `k_grouped_fp8_gemm_tn_contiguous` and every FP4 path (SM100 only); the
`fp8_fp4_*` names (the same functions as `fp8_*` on SM90, but every suite case under them is FP4, which the SM90
models refuse: `--fp8-fp4-names` declares them anyway). A declared op
answers `unsupported` (a SKIP row, with the reason) for a request the SM90 library cannot run: FP4 operands, packed
UE8M0 scales, scale granularity other than 128, TF32 truncation (the H200 rounds to nearest), paged `clean_logits`.

Argument conventions (DeepGEMM 2.6.1, `csrc/apis/*.hpp`):
- operands arrive contiguous in the layout their letters name (`fp8_gemm_tn`: `a` stored [K, M]); SM90 FP8 needs
  K-major memory, so an operand stored MN-major is handed over as the same logical view of a K-major copy
  (`x.mT.contiguous().mT`, as DeepGEMM's own tests build their `nn/tn/tt` cases); BF16 takes every layout as is.
- FP32 scales are passed as plain tensors ([M, ceil(K/128)] per token, [ceil(N/128), ceil(K/128)] per block, transposed
  like their operand): DeepGEMM turns 1x128 scales into its MN-major TMA-aligned layout itself and checks 128x128 ones.
- outputs are the oracle's pre-allocated tensors (zeros, or the input's contents for an in-place `d`), written in
  place; MQA logits (newly allocated by DeepGEMM, with a padded row stride) are copied into them.

Run with `--declare` to print the hello as JSON without importing torch or deep_gemm. Without them the adapter prints
why and exits with status 2. Environment: `deep_gemm` importable (PYTHONPATH), CUDA_HOME or nvcc on PATH for its JIT.
On an H200 (DeepGEMM 54e2261) every declared case passes bit for bit except the 1D1D kernel (FP32 output with C,
k-grouped) at M <= 32, which DeepGEMM fails to JIT-compile: bench/RESULTS.md, "Adapters on the H200".
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# `python3 adapters/deepgemm.py` puts adapters/ first on sys.path, where adapters/torch.py shadows PyTorch.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

# The op table, a plain literal (tests/adapters/adapters_test.ts reads it through `--declare`).
DECLARED = {
    "fp8_gemm_nt": "sm90_1d2d",
    "fp8_gemm_nn": "sm90_1d2d",
    "fp8_gemm_tn": "sm90_1d2d",
    "fp8_gemm_tt": "sm90_1d2d",
    "fp8_gemm_nt_skip_head_mid": "sm90_1d2d",
    "m_grouped_fp8_gemm_nt_contiguous": "sm90_1d2d",
    "m_grouped_fp8_gemm_nn_contiguous": "sm90_1d2d",
    "m_grouped_fp8_gemm_nt_masked": "sm90_1d2d",
    "fp8_m_grouped_gemm_nt_masked": "sm90_1d2d",
    "k_grouped_fp8_gemm_nt_contiguous": "sm90_1d1d",
    "fp8_einsum": "sm90_1d2d",
    "bf16_gemm_nt": "bf16",
    "bf16_gemm_nn": "bf16",
    "bf16_gemm_tn": "bf16",
    "bf16_gemm_tt": "bf16",
    "m_grouped_bf16_gemm_nt_contiguous": "bf16",
    "m_grouped_bf16_gemm_nn_contiguous": "bf16",
    "m_grouped_bf16_gemm_nt_masked": "bf16",
    "bf16_m_grouped_gemm_nt_masked": "bf16",
    "k_grouped_bf16_gemm_tn_contiguous": "bf16",
    "einsum": "bf16",
    "fp8_mqa_logits": "sm90",
    "fp8_paged_mqa_logits": "sm90",
    "get_paged_mqa_logits_metadata": "sm90",
    "tf32_hc_prenorm_gemm": "sm90",
    "cublaslt_gemm_nt": "cublaslt",
    "cublaslt_gemm_nn": "cublaslt",
    "cublaslt_gemm_tn": "cublaslt",
    "cublaslt_gemm_tt": "cublaslt",
}

# The `fp8_fp4_*` names: on SM90 the same functions as the `fp8_*` ones above (FP8 operands; FP4 is SM100-only). Not
# declared by default: every suite case under these names is an FP4 / SM100 case, which no SM90 model expresses (the
# reference refuses it, so verify would report an ERROR rather than a SKIP). `--fp8-fp4-names` declares them.
FP8_FP4_NAMES = {
    "fp8_fp4_gemm_nt": "sm90_1d2d",
    "fp8_fp4_gemm_nn": "sm90_1d2d",
    "fp8_fp4_gemm_tn": "sm90_1d2d",
    "fp8_fp4_gemm_tt": "sm90_1d2d",
    "m_grouped_fp8_fp4_gemm_nt_contiguous": "sm90_1d2d",
    "m_grouped_fp8_fp4_gemm_nn_contiguous": "sm90_1d2d",
    "m_grouped_fp8_fp4_gemm_nt_masked": "sm90_1d2d",
    "fp8_fp4_mqa_logits": "sm90",
    "fp8_fp4_paged_mqa_logits": "sm90",
}

# DeepGEMM's utility quantizers (deep_gemm/utils/math.py), PyTorch code run on the GPU: the oracle's `gpu` semantics.
# Declared only with `--quantizers`: verify has no reference for them yet (they are fixture ops, not registry ops), so a
# declared quantizer would turn every quantizer fixture into an ERROR row.
QUANTIZERS = {
    "per_token_cast_to_fp8": "gpu",
    "per_channel_cast_to_fp8": "gpu",
    "per_block_cast_to_fp8": "gpu",
    "per_token_cast_to_fp4": "gpu",
}

NAME = "deepgemm"
SCRIPT = "adapters/deepgemm.py"


class _Unsupported(NotImplementedError):
    """Stands in for gemm_oracle.Unsupported until the serve loop starts (direct calls, probes)."""


Unsupported = _Unsupported
torch = None
deep_gemm = None


def _load_common():
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("_gemm_oracle_adapters_common", os.path.join(_HERE, "_common.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------------------------
# Argument helpers


def _tuple(v):
    return None if v is None else tuple(int(x) for x in v)


def _stored_mn_major(x):
    """A [.., K, MN] operand as the op's letters store it, viewed as [.., MN, K] over K-major memory and transposed back.

    `fp8_gemm_tn`'s `a` arrives contiguous [K, M]; DeepGEMM transposes it to [M, K] and needs that K-major, so the
    argument is `a.mT.contiguous().mT` (same values and shape, K-major memory), as DeepGEMM's tests pass it.
    """
    return x.mT.contiguous().mT


def _require_fp8(op, **tensors):
    for name, t in tensors.items():
        if t is None:
            continue
        if t.dtype != torch.float8_e4m3fn:
            kind = "FP4" if t.dtype in (torch.int8, torch.uint8) or "float4" in str(t.dtype) else str(t.dtype)
            raise Unsupported(f"{op}: '{name}' is {kind}; DeepGEMM on SM90 takes e4m3 operands only (FP4 is SM100)")


def _require_fp32_scales(op, **scales):
    for name, t in scales.items():
        if t is not None and t.dtype != torch.float32:
            raise Unsupported(f"{op}: '{name}' is {t.dtype}; SM90 takes FP32 scales (packed UE8M0 is SM100-only)")


def _require_tma_strides(op, **tensors):
    """DeepGEMM loads and stores through TMA descriptors, whose outer strides must be multiples of 16 bytes
    (cuTensorMapEncodeTiled refuses others with CUDA_ERROR_INVALID_VALUE): a documented limit, so a SKIP."""
    for name, t in tensors.items():
        if t is None or t.numel() == 0 or t.dim() < 2:
            continue
        inner = t.dim() - 1 if t.stride(-1) == 1 else t.dim() - 2
        for dim in range(t.dim()):
            nbytes = t.stride(dim) * t.element_size()
            if dim != inner and t.size(dim) > 1 and nbytes % 16:
                raise Unsupported(f"{op}: '{name}' {list(t.shape)} has a {nbytes}-byte stride; DeepGEMM's TMA "
                                  "descriptors need outer strides that are multiples of 16 bytes")


def _gran_mn(sf, mn):
    """1 for per-row scales, 128 for per-block scales, from the scale tensor's row count."""
    rows = sf.shape[-2]
    if rows == mn and rows != (mn + 127) // 128:
        return 1
    return 128


def _fp8_recipes(op, sfa, sfb, m, n, k, recipe, recipe_a, recipe_b):
    """DeepGEMM's `recipe` / `recipe_a`+`recipe_b` arguments; the oracle's absent recipe means the SM90 default
    (1, 128, 128), or (1, 1, 128) where B has per-row scales (the 1D1D FP32-with-C form)."""
    recipe, recipe_a, recipe_b = _tuple(recipe), _tuple(recipe_a), _tuple(recipe_b)
    if recipe is None and recipe_a is None and recipe_b is None:
        recipe = (1, _gran_mn(sfb, n), 128)
    gran_k = [r[-1] for r in (recipe, recipe_a, recipe_b) if r is not None]
    if any(g != 128 for g in gran_k):
        raise Unsupported(f"{op}: scale granularity K = {gran_k}; SM90 DeepGEMM promotes every 128 K (gran_k 128)")
    return recipe, recipe_a, recipe_b


def _write(out, value):
    """Copies a result into the oracle's pre-allocated output, or returns it where none was given."""
    if out is None:
        return value
    if tuple(out.shape) != tuple(value.shape):
        raise ValueError(f"result shape {tuple(value.shape)} differs from the requested {tuple(out.shape)}")
    out.copy_(value)
    return out


# ---------------------------------------------------------------------------------------------------------------
# FP8 GEMMs


def _fp8_gemm(letters, prefix="fp8_gemm"):
    op = f"{prefix}_{letters}"

    def run(a, sfa, b, sfb, d, c=None, recipe=None, recipe_a=None, recipe_b=None, **_):
        _require_fp8(op, a=a, b=b)
        _require_fp32_scales(op, sfa=sfa, sfb=sfb)
        a_t, b_n = letters[0] == "t", letters[1] == "n"
        m, k = (a.shape[1], a.shape[0]) if a_t else (a.shape[0], a.shape[1])
        n = b.shape[1] if b_n else b.shape[0]
        # sfb arrives transposed like B for nn/tt-style layouts; _gran_mn reads the logical [N-rows, K-cols] view
        recipe, recipe_a, recipe_b = _fp8_recipes(op, sfa, sfb.mT if b_n else sfb, m, n, k, recipe, recipe_a, recipe_b)
        if d.dtype == torch.bfloat16 and n % 8 != 0:
            raise Unsupported(f"{op}: N = {n}; DeepGEMM's SM90 1D2D kernel traps unless N % 8 == 0")
        if a_t:
            a = _stored_mn_major(a)
        if b_n:
            b = _stored_mn_major(b)
        _require_tma_strides(op, a=a, b=b, d=d)
        getattr(deep_gemm, op)((a, sfa), (b, sfb), d, c=c, recipe=recipe, recipe_a=recipe_a, recipe_b=recipe_b)

    run.__name__ = op
    return run


def fp8_gemm_nt_skip_head_mid(a, sfa, b, sfb, d, head_splits, recipe=None, **_):
    op = "fp8_gemm_nt_skip_head_mid"
    _require_fp8(op, a=a, b=b)
    _require_fp32_scales(op, sfa=sfa, sfb=sfb)
    recipe, _, _ = _fp8_recipes(op, sfa, sfb, a.shape[0], b.shape[0], a.shape[1], recipe, None, None)
    _require_tma_strides(op, a=a, b=b, d=d)
    deep_gemm.fp8_gemm_nt_skip_head_mid((a, sfa), (b, sfb), d, _tuple(head_splits), recipe=recipe)


def _set_mk_alignment(mk_alignment):
    want = 128 if mk_alignment is None else int(mk_alignment)  # DeepGEMM's default (kLegacyMKAlignment...)
    if deep_gemm.get_mk_alignment_for_contiguous_layout() != want:
        deep_gemm.set_mk_alignment_for_contiguous_layout(want)


def _m_grouped_contiguous(letters, prefix="m_grouped_fp8_gemm"):
    op = f"{prefix}_{letters}_contiguous"

    def run(a, sfa, b, sfb, d, grouped_layout, use_psum_layout=False, expected_m_for_psum_layout=None,
            mk_alignment=None, recipe=None, recipe_a=None, recipe_b=None, **_):
        _require_fp8(op, a=a, b=b)
        _require_fp32_scales(op, sfa=sfa, sfb=sfb)
        b_n = letters[1] == "n"
        n = b.shape[2] if b_n else b.shape[1]
        recipe, recipe_a, recipe_b = _fp8_recipes(op, sfa, sfb.mT if b_n else sfb, a.shape[0], n, a.shape[1],
                                                  recipe, recipe_a, recipe_b)
        _set_mk_alignment(mk_alignment)
        kwargs = {"recipe": recipe, "recipe_a": recipe_a, "recipe_b": recipe_b, "use_psum_layout": bool(use_psum_layout)}
        if b_n:
            b = _stored_mn_major(b)
        elif expected_m_for_psum_layout is not None and use_psum_layout:
            kwargs["expected_m_for_psum_layout"] = int(expected_m_for_psum_layout)
        _require_tma_strides(op, a=a, b=b, d=d)
        getattr(deep_gemm, op)((a, sfa), (b, sfb), d, grouped_layout, **kwargs)

    run.__name__ = op
    return run


def _expected_m(expected_m, masked_m):
    if expected_m is not None:
        return int(expected_m)
    values = masked_m.tolist()  # the builders' rule: the rounded mean, at least 1
    return max(1, round(sum(values) / max(1, len(values))))


def _m_grouped_masked(op):
    def run(a, sfa, b, sfb, d, masked_m, expected_m=None, recipe=None, recipe_a=None, recipe_b=None, **_):
        _require_fp8(op, a=a, b=b)
        _require_fp32_scales(op, sfa=sfa, sfb=sfb)
        recipe, recipe_a, recipe_b = _fp8_recipes(op, sfa, sfb, a.shape[1], b.shape[1], a.shape[2],
                                                  recipe, recipe_a, recipe_b)
        _require_tma_strides(op, a=a, b=b, d=d)
        getattr(deep_gemm, op)((a, sfa), (b, sfb), d, masked_m, _expected_m(expected_m, masked_m),
                               recipe=recipe, recipe_a=recipe_a, recipe_b=recipe_b)

    run.__name__ = op
    return run


def _ks_list(ks, grouped_layout):
    return [int(x) for x in (ks if ks is not None else grouped_layout.tolist())]


def k_grouped_fp8_gemm_nt_contiguous(a, sfa, b, sfb, d, grouped_layout, c=None, ks=None, recipe=None,
                                     use_psum_layout=False, **_):
    op = "k_grouped_fp8_gemm_nt_contiguous"
    _require_fp8(op, a=a, b=b)
    _require_fp32_scales(op, sfa=sfa, sfb=sfb)
    if use_psum_layout:
        raise Unsupported(f"{op}: psum layout is SM100-only (SM90 FP8 NT takes ks_cpu)")
    if recipe is not None and _tuple(recipe) != (1, 1, 128):
        raise Unsupported(f"{op}: recipe {tuple(recipe)}; SM90 takes (1, 1, 128) only")
    if c is None:
        c = d.clone()  # DeepGEMM requires C; D starts as the oracle's d
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, _ks_list(ks, grouped_layout), grouped_layout,
                                               c, recipe=(1, 1, 128))


def fp8_einsum(expr, a, sfa, b, sfb, d, c=None, recipe=None, **_):
    op = "fp8_einsum"
    _require_fp8(op, a=a, b=b)
    _require_fp32_scales(op, sfa=sfa, sfb=sfb)
    if expr != "bhr,hdr->bhd":
        raise Unsupported(f"fp8_einsum '{expr}': SM90 DeepGEMM has 'bhr,hdr->bhd' only")
    kwargs = {} if recipe is None else {"recipe": _tuple(recipe)}
    deep_gemm.fp8_einsum(expr, (a, sfa), (b, sfb), d, c=c, **kwargs)


# ---------------------------------------------------------------------------------------------------------------
# BF16 GEMMs


def _bf16_gemm(letters):
    op = f"bf16_gemm_{letters}"

    def run(a, b, d, c=None, **_):
        _require_tma_strides(op, a=a, b=b, d=d)
        getattr(deep_gemm, op)(a, b, d, c=c)

    run.__name__ = op
    return run


def _m_grouped_bf16_contiguous(letters):
    op = f"m_grouped_bf16_gemm_{letters}_contiguous"

    def run(a, b, d, grouped_layout, use_psum_layout=False, ensure_zero_padding=None, mk_alignment=None,
            expected_m_for_psum_layout=None, **_):
        _set_mk_alignment(mk_alignment)
        _require_tma_strides(op, a=a, b=b, d=d)
        kwargs = {"use_psum_layout": bool(use_psum_layout)}
        if ensure_zero_padding is not None:
            kwargs["ensure_zero_padding"] = bool(ensure_zero_padding)
        if letters == "nt" and use_psum_layout and expected_m_for_psum_layout is not None:
            kwargs["expected_m_for_psum_layout"] = int(expected_m_for_psum_layout)
        getattr(deep_gemm, op)(a, b, d, grouped_layout, **kwargs)

    run.__name__ = op
    return run


def _m_grouped_bf16_masked(op):
    def run(a, b, d, masked_m, expected_m=None, **_):
        _require_tma_strides(op, a=a, b=b, d=d)
        getattr(deep_gemm, op)(a, b, d, masked_m, _expected_m(expected_m, masked_m))

    run.__name__ = op
    return run


def k_grouped_bf16_gemm_tn_contiguous(a, b, d, grouped_layout, c=None, ks=None, use_psum_layout=False, **_):
    op = "k_grouped_bf16_gemm_tn_contiguous"
    if use_psum_layout:
        raise Unsupported(f"{op}: psum layout is SM100-only")
    if c is None:
        c = d.clone()
    deep_gemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, _ks_list(ks, grouped_layout), grouped_layout, c)


def einsum(expr, a, b, d, c=None, use_cublaslt=False, **_):
    if use_cublaslt:
        raise Unsupported("einsum with use_cublaslt=True runs cuBLASLt, not the DeepGEMM kernel of model bf16")
    deep_gemm.einsum(expr, a, b, d, c=c)


# ---------------------------------------------------------------------------------------------------------------
# MQA logits, HyperConnection, cuBLASLt


_LOGITS_DTYPES = {None: "float32", "f32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16"}


def _logits_dtype(op, logits_dtype):
    if logits_dtype not in _LOGITS_DTYPES:
        raise Unsupported(f"{op}: logits_dtype {logits_dtype!r}")
    return getattr(torch, _LOGITS_DTYPES[logits_dtype])


def _mqa_logits(op):
    def run(q, kv, kv_sf, weights, cu_seq_len_k_start, cu_seq_len_k_end, logits=None, q_sf=None,
            clean_logits=True, max_seqlen_k=0, logits_dtype=None, **_):
        if q_sf is not None or q.dtype != torch.float8_e4m3fn:
            raise Unsupported(f"{op}: FP4 Q/KV (packed UE8M0 scales) is SM100-only")
        if weights.dtype != torch.float32:
            raise Unsupported(f"{op}: {weights.dtype} weights are SM100-only (SM90 takes fp32)")
        clean, width = bool(clean_logits), int(max_seqlen_k or 0)
        if op == "fp8_mqa_logits":
            if logits_dtype not in (None, "f32", "float32"):
                raise Unsupported(f"{op}: the legacy API writes fp32 logits only")
            out = deep_gemm.fp8_mqa_logits(q, (kv, kv_sf), weights, cu_seq_len_k_start, cu_seq_len_k_end,
                                           clean_logits=clean, max_seqlen_k=width)
        else:
            out = deep_gemm.fp8_fp4_mqa_logits((q, None), (kv, kv_sf), weights, cu_seq_len_k_start, cu_seq_len_k_end,
                                               clean_logits=clean, max_seqlen_k=width,
                                               logits_dtype=_logits_dtype(op, logits_dtype))
        result = _write(logits, out)
        return None if logits is not None else {"logits": result}

    run.__name__ = op
    return run


def _paged_mqa_logits(op):
    def run(q, kv_cache, weights, context_lens, block_table, logits=None, schedule_meta=None, q_sf=None,
            max_context_len=None, clean_logits=False, logits_dtype=None, indices=None, **_):
        if q_sf is not None or q.dtype != torch.float8_e4m3fn:
            raise Unsupported(f"{op}: FP4 Q and KV cache are SM100-only")
        if indices is not None:
            raise Unsupported(f"{op}: varlen (indices) is SM100-only")
        if clean_logits:
            raise Unsupported(f"{op}: DeepGEMM rejects clean_logits=True with 2-D context_lens (the only form it takes)")
        if weights.dtype != torch.float32:
            raise Unsupported(f"{op}: {weights.dtype} weights are SM100-only")
        if schedule_meta is None:
            schedule_meta = deep_gemm.get_paged_mqa_logits_metadata(context_lens, kv_cache.shape[1],
                                                                    deep_gemm.get_num_sms())
        width = int(max_context_len if max_context_len is not None else logits.shape[-1])
        if op == "fp8_paged_mqa_logits":
            if logits_dtype not in (None, "f32", "float32"):
                raise Unsupported(f"{op}: the legacy API writes fp32 logits only")
            out = deep_gemm.fp8_paged_mqa_logits(q, kv_cache, weights, context_lens, block_table, schedule_meta,
                                                 width, clean_logits=False)
        else:
            out = deep_gemm.fp8_fp4_paged_mqa_logits((q, None), kv_cache, weights, context_lens, block_table,
                                                     schedule_meta, width, clean_logits=False,
                                                     logits_dtype=_logits_dtype(op, logits_dtype))
        result = _write(logits, out)
        return None if logits is not None else {"logits": result}

    run.__name__ = op
    return run


def get_paged_mqa_logits_metadata(context_lens, block_kv, num_sms, schedule_meta=None, indices=None, **_):
    if indices is not None:
        raise Unsupported("get_paged_mqa_logits_metadata: varlen (indices) is SM100-only")
    out = deep_gemm.get_paged_mqa_logits_metadata(context_lens, int(block_kv), int(num_sms))
    result = _write(schedule_meta, out)
    return None if schedule_meta is not None else {"schedule_meta": result}


def tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None, tf32_rounding=None, **_):
    if tf32_rounding not in (None, "rne"):
        raise Unsupported(f"tf32_hc_prenorm_gemm: tf32_rounding={tf32_rounding!r}; the H200's TMA TFLOAT32 load "
                          "rounds to nearest (the kernel has no truncating form)")
    deep_gemm.tf32_hc_prenorm_gemm(a, b, d, sqr_sum, num_splits=None if num_splits is None else int(num_splits))


def _cublaslt_gemm(letters):
    op = f"cublaslt_gemm_{letters}"

    def run(a, b, d, c=None, **_):
        if a.dtype == torch.float8_e4m3fn:
            # cuBLASLt's FP8 GEMMs take K-major operands only ("TN"); the values and logical views are unchanged
            if letters[0] == "t":
                a = _stored_mn_major(a)
            if letters[1] == "n":
                b = _stored_mn_major(b)
        getattr(deep_gemm, op)(a, b, d, c=c)

    run.__name__ = op
    return run


# ---------------------------------------------------------------------------------------------------------------
# Quantizers (deep_gemm.utils)


def _quantizer(op):
    def run(x, q=None, sf=None, gran_k=128, use_ue8m0=False, use_packed_ue8m0=False, **_):
        fn = getattr(deep_gemm.utils, op, None) or getattr(deep_gemm, op, None)
        if fn is None:
            raise Unsupported(f"this deep_gemm has no {op}")
        kwargs = {"use_ue8m0": bool(use_ue8m0), "gran_k": int(gran_k)}
        if op in ("per_token_cast_to_fp8", "per_token_cast_to_fp4"):
            kwargs["use_packed_ue8m0"] = bool(use_packed_ue8m0)
        elif use_packed_ue8m0:
            raise Unsupported(f"{op} has no packed UE8M0 form")
        codes, scales = fn(x, **kwargs)
        return {"q": codes, "sf": scales}

    run.__name__ = op
    return run


def build_ops():
    """Op name -> callable, for every name of DECLARED and QUANTIZERS."""
    ops = {}
    for letters in ("nt", "nn", "tn", "tt"):
        ops[f"fp8_gemm_{letters}"] = _fp8_gemm(letters)
        ops[f"fp8_fp4_gemm_{letters}"] = _fp8_gemm(letters, "fp8_fp4_gemm")
        ops[f"bf16_gemm_{letters}"] = _bf16_gemm(letters)
        ops[f"cublaslt_gemm_{letters}"] = _cublaslt_gemm(letters)
    ops["fp8_gemm_nt_skip_head_mid"] = fp8_gemm_nt_skip_head_mid
    for prefix in ("m_grouped_fp8_gemm", "m_grouped_fp8_fp4_gemm"):
        for letters in ("nt", "nn"):
            ops[f"{prefix}_{letters}_contiguous"] = _m_grouped_contiguous(letters, prefix)
        ops[f"{prefix}_nt_masked"] = _m_grouped_masked(f"{prefix}_nt_masked")
    ops["fp8_m_grouped_gemm_nt_masked"] = _m_grouped_masked("fp8_m_grouped_gemm_nt_masked")
    ops["k_grouped_fp8_gemm_nt_contiguous"] = k_grouped_fp8_gemm_nt_contiguous
    ops["fp8_einsum"] = fp8_einsum
    ops["m_grouped_bf16_gemm_nt_contiguous"] = _m_grouped_bf16_contiguous("nt")
    ops["m_grouped_bf16_gemm_nn_contiguous"] = _m_grouped_bf16_contiguous("nn")
    ops["m_grouped_bf16_gemm_nt_masked"] = _m_grouped_bf16_masked("m_grouped_bf16_gemm_nt_masked")
    ops["bf16_m_grouped_gemm_nt_masked"] = _m_grouped_bf16_masked("bf16_m_grouped_gemm_nt_masked")
    ops["k_grouped_bf16_gemm_tn_contiguous"] = k_grouped_bf16_gemm_tn_contiguous
    ops["einsum"] = einsum
    for op in ("fp8_mqa_logits", "fp8_fp4_mqa_logits"):
        ops[op] = _mqa_logits(op)
    for op in ("fp8_paged_mqa_logits", "fp8_fp4_paged_mqa_logits"):
        ops[op] = _paged_mqa_logits(op)
    ops["get_paged_mqa_logits_metadata"] = get_paged_mqa_logits_metadata
    ops["tf32_hc_prenorm_gemm"] = tf32_hc_prenorm_gemm
    for op in QUANTIZERS:
        ops[op] = _quantizer(op)
    missing = (set(DECLARED) | set(FP8_FP4_NAMES) | set(QUANTIZERS)) - set(ops)
    assert not missing, f"declared without an implementation: {sorted(missing)}"
    return ops


def import_libraries():
    """Imports torch and deep_gemm into this module; returns None, or the exit message's parts on failure."""
    global torch, deep_gemm
    try:
        import torch as _torch  # noqa: PLC0415
    except ImportError as e:
        return "PyTorch", e, "this adapter needs torch with CUDA and DeepGEMM on an SM90 GPU machine"
    try:
        import deep_gemm as _deep_gemm  # noqa: PLC0415
    except ImportError as e:
        return "deep_gemm", e, "build DeepGEMM (github.com/deepseek-ai/DeepGEMM) and put it on PYTHONPATH"
    torch, deep_gemm = _torch, _deep_gemm
    return None


def library_info():
    info = {"library": f"deep_gemm {getattr(deep_gemm, '__version__', '?')}", "torch": torch.__version__,
            "jit": "nvrtc" if os.environ.get("DG_JIT_USE_NVRTC", "0") not in ("", "0") else "nvcc"}
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        info["device"] = f"{torch.cuda.get_device_name()} (sm_{major}{minor}, {deep_gemm.get_num_sms()} SMs)"
    return info


def main(argv):
    common = _load_common()
    declared = dict(DECLARED)
    if "--fp8-fp4-names" in argv:
        declared.update(FP8_FP4_NAMES)
    if "--quantizers" in argv:
        declared.update(QUANTIZERS)
    if "--declare" in argv:
        return common.print_declaration(NAME, declared)
    failure = import_libraries()
    if failure:
        return common.unusable(SCRIPT, *failure)
    if not torch.cuda.is_available():
        sys.stderr.write(f"{SCRIPT}: torch sees no CUDA device; DeepGEMM needs an SM90 GPU\n")
        return 2
    major, _ = torch.cuda.get_device_capability()
    if major != 9:
        sys.stderr.write(f"{SCRIPT}: this adapter declares SM90 models; the device is sm_{major}x\n")
        return 2
    package = common.import_package(SCRIPT)
    if package is None:
        return 2
    global Unsupported
    Unsupported = package.Unsupported
    ops = build_ops()
    package.serve({op: ops[op] for op in declared}, name=NAME, models=declared, tensors="torch", device="cuda",
                  info=library_info())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
