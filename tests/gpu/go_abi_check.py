"""tests/gpu/go_abi.py's calls, run on the CPU backend (same C ABI) with numpy views of its allocations: each FP8 GEMM
(dense, contiguous, masked) on go_abi.set_layout's operands, the ones tests/gpu/head_to_head.py times, must come out
as the float64 product of the same operands, to within bf16 rounding and the model's truncations; a wrong argument
order or stride would not. Run by tests/gpu/go_abi_test.ts.

usage: python3 tests/gpu/go_abi_check.py LIBRARY   (prints PASS / FAIL lines; exit 1 on a failure)
"""

import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from go_abi import (  # noqa: E402
    GO_DTYPE, GO_F32, GO_I32, Backend, extent_bytes, gemm_call, go_tensor, index_values, set_layout)


def e4m3_values():
    """The value of each E4M3FN code (NaN for 0x7F and 0xFF)."""
    out = np.empty(256)
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        out[c] = np.nan if (c & 0x7F) == 0x7F else (-v if s else v)
    return out


E4M3 = e4m3_values()


NUMPY = {"e4m3": np.uint8, "f32": np.float32, "bf16": np.uint16, "i32": np.int32}


class View:
    """A numpy array over a backend allocation, with the methods go_tensor reads (strides in elements)."""

    def __init__(self, backend, element, shape, strides):
        self.dtype = np.dtype(NUMPY[element])
        nbytes = extent_bytes(element, shape, strides)
        self.ptr = backend.alloc(nbytes)
        flat = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(self.ptr), dtype=self.dtype)
        self.a = np.lib.stride_tricks.as_strided(flat, shape, [s * self.dtype.itemsize for s in strides])

    def data_ptr(self):
        return self.ptr

    def dim(self):
        return self.a.ndim

    def size(self, i):
        return self.a.shape[i]

    def stride(self, i):
        return self.a.strides[i] // self.dtype.itemsize


def case(backend, rng, kind, g, m, n, k, masked_m=None):
    """Runs one GEMM through go_abi.gemm_call on go_abi.set_layout's operands (masked: masked_m instead of m in every
    batch); returns the largest error over the largest magnitude."""
    kb = (k + 127) // 128
    layout = set_layout(kind, g, m, n, k)
    views = [View(backend, el, shape, strides) for _, el, shape, strides in layout]
    a, sa, b, sb, d = views
    for v in (a, b):
        codes = rng.integers(0, 256, size=v.a.shape, dtype=np.uint8)
        codes[(codes & 0x7F) == 0x7F] = 0x38  # no NaN
        v.a[...] = codes
    sa.a[...] = rng.uniform(0.5, 1.5, size=sa.a.shape)
    sb.a[...] = rng.uniform(0.5, 1.5, size=sb.a.shape)
    d.a[...] = 0
    desc = [go_tensor(v, GO_DTYPE[el]) for v, (_, el, _, _) in zip(views, layout)]
    values = masked_m if kind == "masked" else index_values(kind, g, m)
    if values is not None:
        index = View(backend, "i32", (len(values),), (1,))
        index.a[...] = values
        desc.append(go_tensor(index, GO_I32))
    gemm_call(backend, kind)(desc)
    backend.synchronize()
    got = (d.a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    # float64 reference: A's scale per row and 128-wide K block, B's per 128 x 128 block.
    ka = np.repeat(np.arange(kb), 128)[:k]
    nblock = np.arange(n) // 128
    ab = E4M3[a.a] * sa.a[..., ka]
    if kind == "dense":
        want = ab @ (E4M3[b.a] * sb.a[nblock][:, ka]).T
        return np.abs(got - want).max() / np.abs(want).max()
    bb = E4M3[b.a] * sb.a[:, nblock][:, :, ka]  # [g, n, k]
    if kind == "contiguous":
        want = np.einsum("rk,rnk->rn", ab, bb[np.repeat(np.arange(g), m)])
        return np.abs(got - want).max() / np.abs(want).max()
    want = np.einsum("gmk,gnk->gmn", ab, bb)
    err = max(np.abs(got[i, :masked_m[i]] - want[i, :masked_m[i]]).max() for i in range(g))
    return err / max(np.abs(want[i, :masked_m[i]]).max() for i in range(g))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    backend = Backend(sys.argv[1])
    rng = np.random.default_rng(26)
    failed = total = 0
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
        total += 1
    # A refusal comes back as the backend's message: a dense call whose A is an f32 tensor.
    total += 1
    try:
        bad = View(backend, "f32", (4, 128), (128, 1))
        t = go_tensor(bad, GO_F32)
        gemm_call(backend, "dense")([t, t, t, t, t])
        print("FAIL a refused call raised nothing")
        failed += 1
    except RuntimeError as exc:
        ok = "go_fp8_gemm: status 1" in str(exc) and "dtype f32" in str(exc)
        print(f"{'PASS' if ok else 'FAIL'} a refused call raises: {exc}")
        failed += not ok
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
