"""Tensors in memory: what is accepted, what comes back, the format decoders, packed FP4 and packed UE8M0."""

from __future__ import annotations

import numpy as np
import pytest

from gemm_oracle.formats import decode, format_bits, format_value, is_nan
from gemm_oracle.tensors import (
    RawTensor,
    as_raw,
    dtype_of,
    pack_ue8m0,
    packed_fp4,
    packed_ue8m0_names,
    to_numpy,
    unpack_ue8m0,
    zeros,
)


def test_raw_tensor_checks_its_storage_type():
    assert RawTensor(np.zeros(2, np.int16), "BF16").bits.dtype == np.uint16  # same width: viewed
    with pytest.raises(TypeError, match="BF16 bits must be a uint16 array, got float32"):
        RawTensor(np.zeros(2, np.float32), "BF16")
    with pytest.raises(ValueError, match="F4 codes must be 0-15"):
        RawTensor(np.array([16], np.uint8), "F4")
    with pytest.raises(ValueError, match="unknown dtype 'F8'"):
        RawTensor(np.zeros(1, np.uint8), "F8")


@pytest.mark.parametrize(
    "dtype,name", [(np.float32, "F32"), (np.float16, "F16"), (np.int32, "I32"), (np.int64, "I64"), (np.uint8, "U8"),
                   (np.int8, "I8")]
)
def test_native_numpy_arrays_keep_their_dtype(dtype, name):
    arr = np.arange(6, dtype=dtype).reshape(2, 3)
    assert dtype_of(arr) == name
    raw = as_raw(arr)
    assert raw.dtype == name and np.array_equal(raw.bits, arr)
    assert to_numpy(raw) is raw.bits


def test_non_contiguous_arrays_are_made_contiguous():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4).T
    raw = as_raw(arr)
    assert raw.bits.flags.c_contiguous and np.array_equal(raw.bits, arr)
    strided = RawTensor(np.arange(8, dtype=np.uint16)[::2], "BF16")
    assert strided.bits.flags.c_contiguous and strided.bits.tolist() == [0, 2, 4, 6]


def test_other_numpy_dtypes_are_refused_not_cast():
    for arr in (np.zeros(2, np.float64), np.zeros(2, bool), np.zeros(2, np.uint16)):
        with pytest.raises(TypeError, match="has no safetensors dtype"):
            as_raw(arr)
    with pytest.raises(TypeError, match="expected a numpy array"):
        as_raw([1.0, 2.0])


def test_without_ml_dtypes_the_missing_formats_come_back_raw():
    raw = RawTensor(np.array([0x38], np.uint8), "F8_E4M3")
    out = to_numpy(raw)
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        assert out is raw
    else:
        assert out.dtype.name == "float8_e4m3fn" and float(out[0]) == 1.0


def test_ml_dtypes_arrays_are_accepted_and_returned():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16)
    raw = as_raw(x)
    assert raw.dtype == "BF16" and raw.bits.tolist() == [0x3FC0, 0xC000]
    assert to_numpy(raw).dtype == x.dtype
    e8 = np.array([1.0], dtype=ml_dtypes.float8_e4m3fn)
    assert as_raw(e8).bits.tolist() == [0x38]


def test_packed_fp4_is_unpacked_low_nibble_first():
    packed = np.array([[0x21, 0x43], [0xF0, 0x0F]], np.uint8)
    raw = as_raw(packed_fp4(packed.view(np.int8)))
    assert raw.dtype == "F4" and raw.bits.tolist() == [[1, 2, 3, 4], [0, 0xF, 0xF, 0]]
    # Where F4 is expected, an int8 tensor of the packed shape is read as packed without the mark.
    assert as_raw(packed.view(np.int8), expect=("F4", (2, 4))).bits.tolist() == raw.bits.tolist()
    # ... and nothing else is reinterpreted.
    assert as_raw(packed, expect=("F4", (2, 2))).dtype == "U8"
    assert as_raw(np.array([7], np.uint8), expect=("F8_E8M0", (1,))).dtype == "F8_E8M0"
    assert as_raw(np.array([7], np.uint8), expect=("F8_E4M3", (1,))).dtype == "U8"
    with pytest.raises(TypeError, match="packed FP4 must be int8 or uint8"):
        as_raw(packed_fp4(np.zeros(2, np.float32)))


def test_packed_ue8m0_helpers():
    codes = RawTensor(np.arange(120, 128, dtype=np.uint8).reshape(1, 8), "F8_E8M0")
    packed = pack_ue8m0(codes)
    assert packed.dtype == np.int32 and packed.shape == (1, 2) and hex(int(packed[0, 0])) == "0x7b7a7978"
    assert unpack_ue8m0(packed).bits.tolist() == codes.bits.tolist()
    names = packed_ue8m0_names({"sfa": packed, "x_sf": packed, "kv_sf": packed.astype(np.float32), "masked_m": packed})
    assert names == ["sfa", "x_sf"]
    with pytest.raises(ValueError, match="divisible by 4"):
        pack_ue8m0(RawTensor(np.zeros(3, np.uint8), "F8_E8M0"))


def test_zeros_are_positive_zero_bits():
    z = zeros("F8_E5M2", [2, 3])
    assert z.shape == (2, 3) and not z.bits.any()


@pytest.mark.parametrize(
    "dtype,code,value",
    [
        ("F8_E4M3", 0x38, "1.0"),
        ("F8_E4M3", 0x7E, "448.0"),
        ("F8_E4M3", 0x01, repr(2.0**-9)),
        ("F8_E4M3", 0xFF, "nan"),
        ("F8_E5M2", 0x7C, "inf"),
        ("F8_E5M2", 0x7D, "nan"),
        ("F8_E5M2", 0xBC, "-1.0"),
        ("F8_E8M0", 127, "1.0"),
        ("F8_E8M0", 0, repr(2.0**-127)),
        ("F4", 0x7, "6.0"),
        ("F4", 0x9, "-0.5"),
        ("F4", 0x8, "-0.0"),
        ("BF16", 0x3FC0, "1.5"),
        ("BF16", 0xFF80, "-inf"),
    ],
)
def test_format_values(dtype, code, value):
    bits = np.array([code], np.uint16 if dtype == "BF16" else np.uint8)
    assert format_value(bits[0], dtype) == value


def test_nan_classes():
    assert is_nan(np.array([0x7F, 0xFF, 0x7E], np.uint8), "F8_E4M3").tolist() == [True, True, False]
    assert is_nan(np.array([0x7FC00001], np.uint32).view(np.float32), "F32").tolist() == [True]
    assert is_nan(np.array([0x7C00, 0x7C01], np.uint16).view(np.float16), "F16").tolist() == [False, True]
    assert not is_nan(np.arange(16, dtype=np.uint8), "F4").any()
    assert format_bits(np.float32(-0.0), "F32") == "0x80000000"
    assert format_bits(np.uint8(5), "F4") == "0x5"
    assert decode(np.array([1, -1], np.int32), "I32").tolist() == [1.0, -1.0]
