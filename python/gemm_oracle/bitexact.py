"""Bit-for-bit comparison of a kernel's outputs with the reference's, as ``oracle verify`` does it.

Two elements match when their bit patterns are equal, or when both are NaN (any sign, any payload: the NaN-class
rule). ``+0`` and ``-0`` differ. When the reference marks which elements it defines (``sample_mask`` for sampled
outputs, ``logits_defined`` for MQA logits), only those are compared, in every output of the mask's shape; the masks
themselves are not outputs.

>>> import numpy as np
>>> from gemm_oracle.tensors import RawTensor
>>> want = {"d": RawTensor(np.array([0x3FC0, 0x7FC0], np.uint16), "BF16")}
>>> check_outputs(want, {"d": RawTensor(np.array([0x3FC0, 0xFFFF], np.uint16), "BF16")})  # NaN == NaN
>>> try:
...     check_outputs(want, {"d": RawTensor(np.array([0x3FC1, 0x7FC0], np.uint16), "BF16")})
... except BitMismatch as e:
...     print(e)
output 'd': 1/2 elements differ; first at [0]: expected 1.5 (0x3fc0), got 1.5078125 (0x3fc1)
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

import numpy as np

from .formats import FLOAT_DTYPES, format_bits, format_value, is_nan
from .tensors import RawTensor, as_raw

__all__ = ["BitMismatch", "MASKS", "check_outputs", "mismatch_mask"]

#: Reference outputs that say which elements are defined; masks, not outputs of a kernel.
MASKS = ("sample_mask", "logits_defined")


class BitMismatch(AssertionError):
    """An output that is not bit-for-bit the reference's.

    Attributes: ``output`` (its name), ``mismatches`` and ``elements`` (compared), ``index`` (the first mismatching
    coordinate, or None for a dtype / shape / missing-output fault), ``expected`` and ``actual`` (``(value, bits)``
    strings at ``index``, or None).
    """

    def __init__(
        self,
        message: str,
        *,
        output: str,
        mismatches: int = 0,
        elements: int = 0,
        index: Optional[Tuple[int, ...]] = None,
        expected: Optional[Tuple[str, str]] = None,
        actual: Optional[Tuple[str, str]] = None,
    ):
        super().__init__(message)
        self.output = output
        self.mismatches = mismatches
        self.elements = elements
        self.index = index
        self.expected = expected
        self.actual = actual


def mismatch_mask(expected: RawTensor, actual: RawTensor) -> np.ndarray:
    """Where two tensors of one dtype and shape differ under the NaN-class rule (a bool array)."""
    e, a = expected.bits, actual.bits
    if expected.dtype in FLOAT_DTYPES:
        width = e.dtype.itemsize
        ue, ua = e.view(np.dtype(f"u{width}")), a.view(np.dtype(f"u{width}"))
        return (ue != ua) & ~(is_nan(e, expected.dtype) & is_nan(a, actual.dtype))
    return e != a


def _check_one(name: str, want: RawTensor, got: Any, mask: Optional[np.ndarray], prefix: str) -> None:
    try:
        got_raw = as_raw(got, expect=(want.dtype, want.shape))
    except (TypeError, ValueError) as e:
        raise BitMismatch(f"{prefix}output '{name}': {e}", output=name) from None
    if got_raw.dtype != want.dtype:
        raise BitMismatch(
            f"{prefix}output '{name}' has dtype {got_raw.dtype}; the reference's is {want.dtype}", output=name
        )
    if got_raw.shape != want.shape:
        raise BitMismatch(
            f"{prefix}output '{name}' has shape {list(got_raw.shape)}; the reference's is {list(want.shape)}",
            output=name,
        )
    differ = mismatch_mask(want, got_raw)
    elements = want.size
    if mask is not None and mask.shape == want.shape:
        defined = mask != 0
        differ &= defined
        elements = int(defined.sum())
    count = int(differ.sum())
    if count == 0:
        return
    index = tuple(int(i) for i in np.argwhere(differ)[0])
    exp = (format_value(want.bits[index], want.dtype), format_bits(want.bits[index], want.dtype))
    act = (format_value(got_raw.bits[index], want.dtype), format_bits(got_raw.bits[index], want.dtype))
    where = ", ".join(str(i) for i in index)
    raise BitMismatch(
        f"{prefix}output '{name}': {count}/{elements} elements differ; first at [{where}]: "
        f"expected {exp[0]} ({exp[1]}), got {act[0]} ({act[1]})",
        output=name,
        mismatches=count,
        elements=elements,
        index=index,
        expected=exp,
        actual=act,
    )


def check_outputs(reference: Mapping[str, Any], actual: Mapping[str, Any], *, context: str = "") -> None:
    """Raises :class:`BitMismatch` for the first output of ``reference`` that ``actual`` lacks or does not match.

    :param reference: the reference's outputs (masks included), any accepted tensor form
    :param actual: the kernel's outputs by name (names the reference does not have are ignored)
    :param context: a prefix for messages (``"fp8_gemm_nt (sm90_1d2d): "``)
    """
    raws = {k: as_raw(v) for k, v in reference.items()}
    masks = [raws[m].bits for m in MASKS if m in raws]
    mask = masks[0] if masks else None
    for name, want in raws.items():
        if name in MASKS:
            continue
        if name not in actual:
            given = ", ".join(sorted(actual)) or "nothing"
            raise BitMismatch(f"{context}no output '{name}' to compare (given: {given})", output=name)
        _check_one(name, want, actual[name], mask, context)
