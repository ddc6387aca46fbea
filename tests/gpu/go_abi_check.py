"""tests/gpu/go_abi.py's calls, run on the CPU backend (same C ABI) with numpy views of its allocations: each FP8 GEMM
(dense, contiguous, masked) with the operand layouts tests/gpu/head_to_head.py uses must come out as the float64
product of the same operands, to within bf16 rounding and the model's truncations; a wrong argument order or stride
would not. Run by tests/gpu/head_to_head_test.ts.

usage: python3 tests/gpu/go_abi_check.py LIBRARY   (prints PASS / FAIL lines; exit 1 on a failure)
"""

import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from go_abi import GO_BF16, GO_E4M3, GO_F32, GO_I32, Backend, gemm_call, go_tensor  # noqa: E402


def e4m3_values():
    """The value of each E4M3FN code (NaN for 0x7F and 0xFF)."""
    out = np.empty(256)
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        out[c] = np.nan if (c & 0x7F) == 0x7F else (-v if s else v)
    return out


E4M3 = e4m3_values()


class View:
    """A numpy array over a backend allocation, with the methods go_tensor reads (strides in elements)."""

    def __init__(self, backend, dtype, shape, strides):
        self.dtype = np.dtype(dtype)
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        self.ptr = backend.alloc(extent * self.dtype.itemsize)
        raw = (ctypes.c_uint8 * (extent * self.dtype.itemsize)).from_address(self.ptr)
        flat = np.frombuffer(raw, dtype=self.dtype)
        self.a = np.lib.stride_tricks.as_strided(flat, shape, [s * self.dtype.itemsize for s in strides])
        self.backend = backend

    def data_ptr(self):
        return self.ptr

    def dim(self):
        return self.a.ndim

    def size(self, i):
        return self.a.shape[i]

    def stride(self, i):
        return self.a.strides[i] // self.dtype.itemsize


def case(backend, rng, kind, g, m, n, k, masked_m=None):
    """Runs one GEMM through go_abi.gemm_call; returns the largest error over the largest magnitude."""
    kb, nb = (k + 127) // 128, (n + 127) // 128
    mmax = (m + 127) // 128 * 128
    rows = m if kind == "dense" else g * (m if kind == "contiguous" else mmax)
    gb = 1 if kind == "dense" else g
    if kind == "masked":
        a = View(backend, np.uint8, (g, mmax, k), (mmax * k, k, 1))
        sa = View(backend, np.float32, (g, mmax, kb), (mmax * kb, 1, mmax))
        d = View(backend, np.uint16, (g, mmax, n), (mmax * n, n, 1))
    else:
        a = View(backend, np.uint8, (rows, k), (k, 1))
        sa = View(backend, np.float32, (rows, kb), (1, rows))  # MN-major, as head_to_head.py lays it out
        d = View(backend, np.uint16, (rows, n), (n, 1))
    b = View(backend, np.uint8, (gb, n, k), (n * k, k, 1)) if gb > 1 or kind != "dense" else \
        View(backend, np.uint8, (n, k), (k, 1))
    sb = View(backend, np.float32, (gb, nb, kb), (nb * kb, kb, 1)) if kind != "dense" else \
        View(backend, np.float32, (nb, kb), (kb, 1))
    for v in (a, b):
        codes = rng.integers(0, 256, size=v.a.shape, dtype=np.uint8)
        codes[(codes & 0x7F) == 0x7F] = 0x38  # no NaN
        v.a[...] = codes
    sa.a[...] = rng.uniform(0.5, 1.5, size=sa.a.shape)
    sb.a[...] = rng.uniform(0.5, 1.5, size=sb.a.shape)
    d.a[...] = 0
    desc = [go_tensor(a, GO_E4M3), go_tensor(sa, GO_F32), go_tensor(b, GO_E4M3), go_tensor(sb, GO_F32),
            go_tensor(d, GO_BF16)]
    index = None
    if kind == "contiguous":
        index = View(backend, np.int32, (rows,), (1,))
        index.a[...] = np.repeat(np.arange(g, dtype=np.int32), m)
    elif kind == "masked":
        index = View(backend, np.int32, (g,), (1,))
        index.a[...] = masked_m
    if index is not None:
        desc.append(go_tensor(index, GO_I32))
    gemm_call(backend, kind)(desc)
    backend.synchronize()
    got = (d.a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    # float64 reference: A's scale per row and 128-wide K block, B's per 128 x 128 block.
    ka = np.repeat(np.arange(kb), 128)[:k]
    ab = E4M3[a.a] * (sa.a[..., ka])
    bs = E4M3[b.a]
    if kind == "dense":
        want = ab @ (bs * sb.a[np.arange(n) // 128][:, ka]).T
        err, scale = np.abs(got - want).max(), np.abs(want).max()
    elif kind == "contiguous":
        grp = np.repeat(np.arange(g), m)
        bb = bs * sb.a[:, np.arange(n) // 128][:, :, ka]  # [g, n, k]
        want = np.einsum("rk,rnk->rn", ab, bb[grp])
        err, scale = np.abs(got - want).max(), np.abs(want).max()
    else:
        bb = bs * sb.a[:, np.arange(n) // 128][:, :, ka]
        want = np.einsum("gmk,gnk->gmn", ab, bb)
        err = max(np.abs(got[i, :masked_m[i]] - want[i, :masked_m[i]]).max() for i in range(g))
        scale = max(np.abs(want[i, :masked_m[i]]).max() for i in range(g))
    return err / scale


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    backend = Backend(sys.argv[1])
    rng = np.random.default_rng(26)
    failed = 0
    for kind, g, m, n, k, masked_m in [("dense", 1, 40, 256, 384, None), ("contiguous", 2, 128, 136, 256, None),
                                       ("masked", 2, 100, 128, 256, [37, 100])]:
        try:
            rel = case(backend, rng, kind, g, m, n, k, masked_m)
            ok = rel < 1e-2
            print(f"{'PASS' if ok else 'FAIL'} {kind} {g}x{m}x{n}x{k}: largest error {rel:.2e} of the largest value")
        except Exception as exc:  # noqa: BLE001 - reported
            ok = False
            print(f"FAIL {kind} {g}x{m}x{n}x{k}: {exc}")
        failed += not ok
    # A refusal comes back as the backend's message: a dense call whose A is an f32 tensor.
    try:
        bad = View(backend, np.float32, (4, 128), (128, 1))
        t = go_tensor(bad, GO_F32)
        gemm_call(backend, "dense")([t, t, t, t, t])
        print("FAIL a refused call raised nothing")
        failed += 1
    except RuntimeError as exc:
        ok = "go_fp8_gemm: status 1" in str(exc) and "dtype f32" in str(exc)
        print(f"{'PASS' if ok else 'FAIL'} a refused call raises: {exc}")
        failed += not ok
    print(f"{3 + 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
