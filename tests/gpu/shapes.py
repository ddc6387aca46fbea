"""The benchmark's shapes and their names, without torch (tests/gpu/shapes_check.py runs on CI machines).

A shape is (kind, g, m, n, k): kind "dense" (g = 1), "contiguous" (g groups of m rows) or "masked" (g groups, Mmax = m,
masked_m = m in every group). Its name is the one the tables print: "dense 4096x7168x16384",
"masked 32x20x4096x2048".

>>> shape_name(*parse_shape_name("contiguous 4x8192x4096x2048"))
'contiguous 4x8192x4096x2048'
"""

import re

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


_NAME = re.compile(r"^(dense) (\d+)x(\d+)x(\d+)$|^(contiguous|masked) (\d+)x(\d+)x(\d+)x(\d+)$")


def parse_shape_name(name):
    """The shape a name stands for (shape_name's inverse), for shapes outside the 45; ValueError names the fault.
    Dimensions are positive, on the grid of the 45 that go_abi.set_layout's operands assume: M a multiple of 4 (A's
    scales are MN-major with 16-byte aligned columns), N of 64, K of 128, and a contiguous group's rows of 128 (the
    layout's alignment)."""
    mt = _NAME.match(name.strip())
    if mt is None:
        raise ValueError(f"shape {name!r}: expected 'dense MxNxK', 'contiguous GxMxNxK' or 'masked GxMxNxK'")
    if mt.group(1):
        kind, dims = "dense", [1] + [int(x) for x in mt.group(2, 3, 4)]
    else:
        kind, dims = mt.group(5), [int(x) for x in mt.group(6, 7, 8, 9)]
    g, m, n, k = dims
    if min(dims) <= 0:
        raise ValueError(f"shape {name!r}: every dimension must be positive")
    if m % 4 or n % 64 or k % 128:
        raise ValueError(f"shape {name!r}: M must be a multiple of 4, N of 64 and K of 128")
    if kind == "contiguous" and m % 128:
        raise ValueError(f"shape {name!r}: a contiguous group's rows must be a multiple of 128")
    return (kind, g, m, n, k)


def shape_flops(kind, g, m, n, k):
    """2 * rows * N * K over the real rows: M (dense) or G * m (grouped; masked: masked_m = m), as bench.cpp counts."""
    return 2.0 * (m if kind == "dense" else g * m) * n * k


if __name__ == "__main__":
    # The 45 names, one a line (tests/kernels/fast_walk_balance.cu reads them through xargs).
    print("\n".join(shape_name(*s) for s in all_shapes()))
