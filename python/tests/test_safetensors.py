"""The safetensors reader and writer: round trips of every dtype, byte compatibility with the oracle's writer, and
a clear error naming the file and the fault for every malformed file."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from conftest import REPO
from gemm_oracle.safetensors import (
    SafetensorsError,
    parse_safetensors,
    read_safetensors,
    serialize_safetensors,
    write_safetensors,
)
from gemm_oracle.tensors import DTYPES, RawTensor

RNG = np.random.default_rng(7)


def sample(dtype: str, shape=(3, 4)) -> RawTensor:
    info = DTYPES[dtype]
    if dtype == "F4":
        return RawTensor(RNG.integers(0, 16, shape, dtype=np.uint8), dtype)
    if info.storage.kind == "f":
        bits = RNG.integers(0, 2 ** (8 * info.storage.itemsize), shape, dtype=np.uint64)
        return RawTensor(bits.astype(f"u{info.storage.itemsize}").view(info.storage), dtype)
    lo, hi = np.iinfo(info.storage).min, np.iinfo(info.storage).max
    return RawTensor(RNG.integers(lo, hi, shape, dtype=info.storage, endpoint=True), dtype)


def same_bits(a: RawTensor, b: RawTensor) -> bool:
    width = a.bits.dtype.itemsize
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        a.bits.view(f"u{width}"), b.bits.view(f"u{width}")
    )


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_every_dtype_round_trips_bit_for_bit(dtype, tmp_path):
    t = sample(dtype)
    path = tmp_path / "x.safetensors"
    write_safetensors(path, {"x": t, "empty": RawTensor(np.zeros((0, 2), DTYPES[dtype].storage), dtype)})
    back = read_safetensors(path, raw=True)
    assert same_bits(back.tensors["x"], t)
    assert back.tensors["empty"].shape == (0, 2)
    assert (back.metadata.get("f4_nibble_order") == "low_first") == (dtype == "F4")


def test_numpy_form_round_trips_native_dtypes():
    arrays = {
        "f32": np.array([1.5, -0.0, np.nan], np.float32),
        "f16": np.array([[1, 2], [3, 4]], np.float16),
        "i32": np.arange(6, dtype=np.int32).reshape(2, 3),
        "i64": np.array([-(2**62)], np.int64),
        "u8": np.array([255], np.uint8),
        "i8": np.array([-128], np.int8),
    }
    back = parse_safetensors(serialize_safetensors(arrays)).tensors
    for name, arr in arrays.items():
        assert back[name].dtype == arr.dtype and back[name].shape == arr.shape
        assert back[name].tobytes() == arr.tobytes()


def test_f4_packs_low_nibble_first_and_reads_high_first():
    data = serialize_safetensors({"q": RawTensor(np.array([1, 2, 0xF, 7], np.uint8), "F4")})
    assert data[-2:] == bytes([0x21, 0x7F])
    header = json.loads(data[8:-2])
    assert header["__metadata__"] == {"f4_nibble_order": "low_first"}
    assert header["q"] == {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]}
    header["__metadata__"]["f4_nibble_order"] = "high_first"
    high = build(header, data[-2:])
    assert parse_safetensors(high, raw=True).tensors["q"].bits.tolist() == [2, 1, 7, 0xF]


def test_metadata_and_packed_ue8m0_round_trip():
    meta = {"op": "fp8_gemm_nt", "packed_ue8m0": '["sfa"]', "ü": "ünïcode"}
    f = parse_safetensors(serialize_safetensors({"sfa": np.array([0x7F7F7F7F], np.int32)}, meta))
    assert f.metadata == meta
    assert f.packed_ue8m0 == ["sfa"]


def test_the_writer_reproduces_the_oracles_files_byte_for_byte():
    # Fixture files are written by the oracle's TypeScript writer; read and written again, they must not change.
    paths = sorted((REPO / "fixtures").glob("*/*.safetensors"))
    assert paths
    chosen = [p for p in paths if any(s in p.name for s in ("fp8_gemm_nt", "fp4", "packed", "mqa"))][:12]
    for path in chosen:
        original = path.read_bytes()
        f = parse_safetensors(original, str(path), raw=True)
        assert serialize_safetensors(f.tensors, f.metadata) == original, path.name


def test_the_writer_is_deterministic_and_orders_widest_first():
    tensors = {"b": np.zeros(1, np.uint8), "a": np.zeros(1, np.uint8), "w": np.zeros(1, np.int64)}
    data = serialize_safetensors(tensors)
    assert data == serialize_safetensors(dict(reversed(list(tensors.items()))))
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0
    assert list(json.loads(data[8 : 8 + n])) == ["w", "a", "b"]


def build(header, data=b"", *, raw_header=None) -> bytes:
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


GOOD = {"x": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}}

MALFORMED = [
    ("truncated", b"\x01\x00", "fewer than the 8-byte header length"),
    ("huge header", struct.pack("<Q", 200_000_000) + b"{}", "exceeds the 100000000-byte limit"),
    ("header past end", struct.pack("<Q", 50) + b"{}", "beyond the end of the file"),
    ("tiny header", struct.pack("<Q", 1) + b"{", "too small"),
    ("not utf-8", build(None, raw_header=b"{\xff}"), "not valid UTF-8"),
    ("not an object", build(None, raw_header=b"[1, 2]"), "does not start with '{'"),
    ("bad json", build(None, raw_header=b"{nope}"), "not valid JSON"),
    ("duplicate key", build(None, raw_header=b'{"a": {}, "a": {}}'), "duplicate key"),
    ("NaN constant", build(None, raw_header=b'{"__metadata__": {"a": NaN}}'), "not valid JSON"),
    ("entry not object", build({"x": 3}), 'tensor "x" must be an object'),
    ("extra key", build({"x": {**GOOD["x"], "more": 1}}, b"\0\0"), 'unexpected key "more"'),
    ("unknown dtype", build({"x": {**GOOD["x"], "dtype": "Q7"}}, b"\0\0"), 'unknown dtype "Q7"'),
    ("unsupported dtype", build({"x": {**GOOD["x"], "dtype": "F64"}}, b"\0\0"), 'unsupported dtype "F64"'),
    ("negative dim", build({"x": {**GOOD["x"], "shape": [-2]}}, b"\0\0"), "not a non-negative integer"),
    ("float dim", build({"x": {**GOOD["x"], "shape": [2.0]}}, b"\0\0"), "not a non-negative integer"),
    ("bool dim", build({"x": {**GOOD["x"], "shape": [True, 2]}}, b"\0\0"), "not a non-negative integer"),
    ("rank 17", build({"x": {**GOOD["x"], "shape": [1] * 17}}, b"\0\0"), "rank 17 exceeds 16"),
    ("three offsets", build({"x": {**GOOD["x"], "data_offsets": [0, 1, 2]}}, b"\0\0"), "[begin, end]"),
    ("end before begin", build({"x": {**GOOD["x"], "data_offsets": [2, 0]}}, b"\0\0"), "end before begin"),
    ("size mismatch", build({"x": {**GOOD["x"], "shape": [3]}}, b"\0\0"), "needs 3 bytes"),
    ("odd F4", build({"x": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}, b"\0\0"), "even element count"),
    ("out of range", build(GOOD, b"\0"), "out of range"),
    ("hole at start", build({"x": {**GOOD["x"], "data_offsets": [1, 3]}}, b"\0\0\0"), "hole in the data"),
    ("hole at end", build(GOOD, b"\0\0\0"), "at the end belong to no tensor"),
    (
        "overlap",
        build({"x": GOOD["x"], "y": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}, b"\0\0"),
        "overlaps",
    ),
    ("metadata not object", build({"__metadata__": [1]}), '"__metadata__" must be an object'),
    ("metadata value", build({"__metadata__": {"k": 1}}), 'value of "k" must be a string'),
    ("nibble order", build({"__metadata__": {"f4_nibble_order": "middle"}}), "not \"low_first\" or \"high_first\""),
    ("packed list not json", build({"__metadata__": {"packed_ue8m0": "sfa"}}), "must be a JSON array"),
    ("packed names a U8", build({"__metadata__": {"packed_ue8m0": '["x"]'}, **GOOD}, b"\0\0"), "a U8 tensor"),
    ("packed names nothing", build({"__metadata__": {"packed_ue8m0": '["sfa"]'}}), "no tensor"),
]


@pytest.mark.parametrize("data,fault", [(d, f) for _, d, f in MALFORMED], ids=[n for n, _, _ in MALFORMED])
def test_malformed_files_raise_errors_naming_the_file_and_the_fault(data, fault, tmp_path):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(SafetensorsError) as info:
        read_safetensors(path)
    assert str(path) in str(info.value)
    assert fault in info.value.fault
    assert info.value.file == str(path)


def test_an_empty_header_object_and_the_good_file_are_accepted():
    assert parse_safetensors(build({})).tensors == {}
    assert parse_safetensors(build(GOOD, b"\x01\x02")).tensors["x"].tolist() == [1, 2]


@pytest.mark.parametrize(
    "tensors,metadata,fault",
    [
        ({"__metadata__": np.zeros(1, np.uint8)}, None, "reserved"),
        ({"x": np.zeros(1, np.float64)}, None, "float64 has no safetensors dtype"),
        ({"x": RawTensor(np.zeros(3, np.uint8), "F4")}, None, "even element count"),
        ({"x": np.zeros(1, np.uint8)}, {"k": 1}, "strings to strings"),
        ({"sfa": np.zeros(1, np.float32)}, {"packed_ue8m0": '["sfa"]'}, "a F32 tensor"),
    ],
)
def test_the_writer_refuses_what_it_cannot_write(tensors, metadata, fault):
    with pytest.raises(SafetensorsError, match=fault):
        serialize_safetensors(tensors, metadata)
