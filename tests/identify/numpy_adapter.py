"""A backend adapter whose "kernel" is a float64 numpy GEMM (`verify --backend 'cmd:python3
tests/identify/numpy_adapter.py MODE'`), for the tests of verify's diagnosis of failing cases and of identify.
numpy only. `python3 tests/identify/numpy_adapter.py --files IN OUT` runs the float64 kernel once on the tensors of
the safetensors file IN and writes `d` to OUT.

MODE float64 (default): fp8_gemm_nt computed in float64 and rounded once at the end, declared as DeepGEMM's
`sm90_1d2d`, the mistake a new user makes: verify fails, and identify must name the output `exact`.
MODE tile_bug: the same result declared as `exact`, with the lowest bit flipped in one 8 x 128 block of the output
(rows 40-47, or the last 8 rows, and columns 128-255 clipped to N, or the first 128): the mismatch map must say
"one tile" and identify must find no variant, the nearest being `exact`.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from gemm_oracle import Unsupported, serve  # noqa: E402
from gemm_oracle.tensors import RawTensor, as_raw  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "float64"


def _e4m3_table():
    t = np.zeros(256, np.float64)
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        if e == 15 and m == 7:
            v = np.nan
        elif e == 0:
            v = m * 2.0**-9
        else:
            v = (8 + m) * 2.0 ** (e - 10)
        t[c] = -v if s else v
    return t


E4M3 = _e4m3_table()


def values(x):
    raw = as_raw(x)
    if raw.dtype == "F8_E4M3":
        return E4M3[raw.bits]
    if raw.dtype == "F32":
        return raw.bits.astype(np.float64)
    if raw.dtype == "BF16":
        return (raw.bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    raise Unsupported(f"numpy_adapter reads e4m3, f32 and bf16 tensors, not {raw.dtype}")


def bf16_rne(x):
    """float64 -> bf16 bits, rounded once (to nearest, ties to even), normal range."""
    m, e = np.frexp(x)
    v = np.ldexp(np.rint(np.ldexp(m, 8)), e - 8)
    bits = v.astype(np.float32).view(np.uint32) >> 16
    bits = np.where(np.isnan(x), 0x7FFF, bits)
    return bits.astype(np.uint16)


def fp8_gemm_nt(a, sfa, b, sfb, d, c=None, **_scalars):
    A, B, SA, SB = values(a), values(b), values(sfa), values(sfb)
    M, K = A.shape
    N = B.shape[0]
    G = SA.shape[1] if SA.ndim == 2 else 0
    acc = np.zeros((M, N), np.float64)
    for g in range(G):
        k0, k1 = g * 128, min(K, (g + 1) * 128)
        sa = SA[:, g][:, None]
        rows_b = SB.shape[0]
        sb = SB[np.arange(N) // (1 if rows_b == N else 128), g][None, :]
        acc += (A[:, k0:k1] @ B[:, k0:k1].T) * (sa * sb)
    out = as_raw(d)
    if c is not None:
        acc = acc + values(c)
    if out.dtype == "F32":
        bits = acc.astype(np.float32)
    else:
        bits = bf16_rne(acc)
    if MODE == "tile_bug" and M > 0 and N > 0:
        r0 = max(0, min(40, M - 8))
        c0 = 128 if N > 128 else 0
        bits = bits.copy()
        bits.view(np.uint32 if bits.dtype == np.float32 else np.uint16)[r0:r0 + 8, c0:min(N, c0 + 128)] ^= 1
    return {"d": RawTensor(bits.reshape(out.shape), out.dtype)}


def main():
    if MODE == "--files":
        from gemm_oracle.safetensors import read_safetensors, write_safetensors

        tensors = read_safetensors(sys.argv[2], raw=True).tensors
        a, b = tensors["a"], tensors["b"]
        d = RawTensor(np.zeros((a.shape[0], b.shape[0]), np.uint16), "BF16")
        out = fp8_gemm_nt(tensors["a"], tensors["sfa"], tensors["b"], tensors["sfb"], d)
        write_safetensors(sys.argv[3], out)
        return
    if MODE not in ("float64", "tile_bug"):
        sys.exit(f"numpy_adapter: unknown mode {MODE!r} (float64, tile_bug, --files IN OUT)")
    model = "sm90_1d2d" if MODE == "float64" else "exact"
    serve({"fp8_gemm_nt": fp8_gemm_nt}, name=f"numpy-{MODE}", models={"fp8_gemm_nt": model})


if __name__ == "__main__":
    main()
