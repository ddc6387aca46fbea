"""What the bits of each element format mean: decoding codes to numbers and telling NaNs apart.

The oracle compares bit patterns; numbers are only for messages. The tables follow the OCP / PyTorch definitions
of the formats DeepGEMM uses:

==========  ==========================================  ===========================
dtype        layout                                      NaN / infinity
==========  ==========================================  ===========================
F32, F16    IEEE 754 binary32 / binary16                exponent all ones
BF16        the top half of a binary32                  exponent all ones
F8_E4M3     1-4-3, bias 7 (``float8_e4m3fn``)            ``S.1111.111`` only; no inf
F8_E5M2     1-5-2, bias 15 (IEEE-like)                  exponent all ones
F8_E8M0     8-bit exponent, 2**(code - 127)             ``0xFF``; no sign, no zero
F4          1-2-1 E2M1, bias 1 (one code per element)   none
==========  ==========================================  ===========================

>>> import numpy as np
>>> decode(np.array([0x38, 0x7F], dtype=np.uint8), "F8_E4M3").tolist()
[1.0, nan]
>>> is_nan(np.array([0x7FC0, 0x7F80], dtype=np.uint16), "BF16").tolist()
[True, False]
>>> format_value(np.uint16(0x3FC0), "BF16")
'1.5'
"""

from __future__ import annotations

import numpy as np

__all__ = ["decode", "is_nan", "format_value", "format_bits", "FLOAT_DTYPES"]

#: The dtypes whose codes are numbers with a NaN class (compared NaN-to-NaN, whatever the payload).
FLOAT_DTYPES = frozenset({"F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4"})

#: Bits per element of each dtype as the oracle stores it (F4: one 4-bit code per element).
_WIDTH = {
    "F32": 32, "F16": 16, "BF16": 16, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "F4": 4,
    "I32": 32, "I64": 64, "U8": 8, "I8": 8,
}


def _e4m3(c: int) -> float:
    s, e, m = c >> 7, (c >> 3) & 0xF, c & 7
    if e == 15 and m == 7:
        return float("nan")
    v = (m / 8) * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -v if s else v


def _e5m2(c: int) -> float:
    s, e, m = c >> 7, (c >> 2) & 0x1F, c & 3
    if e == 31:
        v = float("inf") if m == 0 else float("nan")
    else:
        v = (m / 4) * 2.0**-14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15)
    return -v if s else v


def _e2m1(c: int) -> float:
    s, e, m = c >> 3, (c >> 1) & 3, c & 1
    v = m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1)
    return -v if s else v


_TABLES = {
    "F8_E4M3": np.array([_e4m3(c) for c in range(256)]),
    "F8_E5M2": np.array([_e5m2(c) for c in range(256)]),
    "F8_E8M0": np.array([float("nan") if c == 255 else 2.0 ** (c - 127) for c in range(256)]),
    "F4": np.array([_e2m1(c) for c in range(16)]),
}


def decode(bits: np.ndarray, dtype: str) -> np.ndarray:
    """The numbers that stored codes stand for, as float64 (integers as their values).

    :param bits: the stored codes (``RawTensor.bits``: float32/float16 arrays for F32/F16, unsigned codes for the
        formats numpy lacks, the integers themselves for I*/U8)
    :param dtype: the safetensors dtype name
    :returns: a float64 array of the same shape
    """
    bits = np.asarray(bits)
    if dtype in ("F32", "F16"):
        return bits.astype(np.float64)
    if dtype == "BF16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype in _TABLES:
        return _TABLES[dtype][bits.astype(np.intp) & (0xF if dtype == "F4" else 0xFF)]
    if dtype in ("I32", "I64", "U8", "I8"):
        return bits.astype(np.float64)
    raise ValueError(f"unknown dtype {dtype!r}")


def _unsigned(bits: np.ndarray, dtype: str) -> np.ndarray:
    width = _WIDTH[dtype]
    if width == 4:
        return np.asarray(bits).astype(np.uint8) & 0xF
    return np.ascontiguousarray(bits).view(np.dtype(f"u{width // 8}"))


def is_nan(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Where the codes are NaN (any sign, any payload); all False for integers and E2M1.

    :param bits: stored codes, as for :func:`decode`
    :param dtype: the safetensors dtype name
    :returns: a bool array of the same shape
    """
    if dtype not in _WIDTH:
        raise ValueError(f"unknown dtype {dtype!r}")
    u = _unsigned(np.asarray(bits), dtype)
    if dtype == "F32":
        return (u & 0x7FFFFFFF) > 0x7F800000
    if dtype == "F16":
        return (u & 0x7FFF) > 0x7C00
    if dtype == "BF16":
        return (u & 0x7FFF) > 0x7F80
    if dtype == "F8_E4M3":
        return (u & 0x7F) == 0x7F
    if dtype == "F8_E5M2":
        return (u & 0x7F) > 0x7C
    if dtype == "F8_E8M0":
        return u == 0xFF
    return np.zeros(u.shape, dtype=bool)


def format_bits(code, dtype: str) -> str:
    """One element's bit pattern in hex, as wide as the format (``0x3fc0`` for BF16, ``0x7`` for F4).

    >>> format_bits(np.float32(1.0), "F32")
    '0x3f800000'
    """
    width = _WIDTH[dtype]
    u = int(_unsigned(np.asarray(code).reshape(1), dtype)[0])
    return f"0x{u:0{max(1, width // 4)}x}"


def format_value(code, dtype: str) -> str:
    """One element's value for a message: the shortest exact decimal (``-0.0``, ``nan`` and ``inf`` spelled out).

    >>> format_value(np.uint8(0xFF), "F8_E8M0")
    'nan'
    """
    if dtype in ("I32", "I64", "U8", "I8"):
        return str(int(np.asarray(code)))
    return repr(float(decode(np.asarray(code).reshape(1), dtype)[0]))
