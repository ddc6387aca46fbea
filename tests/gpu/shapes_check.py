"""Checks tests/gpu/shapes.py without torch (tests/gpu/go_abi_test.ts runs it): every benchmark shape's name parses
back to the shape, a new shape parses, and bad names are refused with the fault named."""

import doctest
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shapes  # noqa: E402

failures = doctest.testmod(shapes).failed
for s in shapes.all_shapes():
    assert shapes.parse_shape_name(shapes.shape_name(*s)) == s, s
assert len(shapes.all_shapes()) == 45
assert shapes.parse_shape_name("dense 4096x4224x32768") == ("dense", 1, 4096, 4224, 32768)
assert shapes.parse_shape_name(" masked 32x20x4096x2048 ") == ("masked", 32, 20, 4096, 2048)
for bad, fault in [("dense 4096x4224", "expected"), ("dense 0x4096x512", "positive"), ("dense 4096x4100x512", "N"),
                   ("dense 4096x4096x500", "K"), ("dense 4097x4096x512", "M"), ("contiguous 4x100x4096x512", "128"),
                   ("grouped 4x128x4096x512", "expected")]:
    try:
        shapes.parse_shape_name(bad)
    except ValueError as exc:
        assert fault in str(exc) and repr(bad) in str(exc), (bad, str(exc))
    else:
        raise AssertionError(f"{bad!r} parsed")
print("shapes_check: ok" if failures == 0 else f"shapes_check: {failures} doctest failures")
sys.exit(1 if failures else 0)
