"""safetensors files with numpy only: a strict reader and a deterministic writer, byte-compatible with the oracle's.

The reader validates the whole header before it touches data, and every fault is a :class:`SafetensorsError` that
names the file: the 8-byte header length (present, at most 100,000,000, within the file), a UTF-8 JSON object with
no duplicate keys, each tensor entry with exactly ``dtype`` / ``shape`` / ``data_offsets``, a known dtype, a shape of
non-negative integers (rank at most 16), ``data_offsets`` spanning exactly the bytes the shape needs, the tensors'
data contiguous from the first byte to the last (no holes, no overlap), ``__metadata__`` mapping strings to strings,
a valid ``f4_nibble_order`` (``low_first``, or ``high_first`` on read) and a valid ``packed_ue8m0`` list.

The writer orders tensors widest element first, then by name; writes the header JSON without spaces,
``__metadata__`` first with sorted keys; pads the header with spaces to a multiple of 8 bytes; and packs ``F4`` two
codes per byte, element 0 in the low nibble, recording ``f4_nibble_order: low_first`` (a key the writer owns: it is
set when F4 tensors are written and dropped otherwise). The oracle's writer makes the same bytes.

dtypes: F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E8M0, F4, I32, I64, U8, I8 (see :mod:`gemm_oracle.tensors`).

>>> import numpy as np
>>> from gemm_oracle.tensors import RawTensor
>>> data = serialize_safetensors({"x": RawTensor(np.array([0x3F80], np.uint16), "BF16")}, {"op": "demo"})
>>> f = parse_safetensors(data, "mem", raw=True)
>>> f.tensors["x"].bits.tolist(), f.metadata
([16256], {'op': 'demo'})
"""

from __future__ import annotations

import dataclasses
import json
import os
import struct
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from .tensors import DTYPES, PACKED_UE8M0_KEY, RawTensor, as_raw, to_numpy

__all__ = [
    "F4_NIBBLE_ORDER_KEY",
    "MAX_HEADER_BYTES",
    "SafetensorsError",
    "SafetensorsFile",
    "parse_safetensors",
    "read_safetensors",
    "serialize_safetensors",
    "write_safetensors",
]

#: Largest header accepted (as the reference implementation's ``MAX_HEADER_SIZE``).
MAX_HEADER_BYTES = 100_000_000
#: Metadata key recording the F4 nibble order.
F4_NIBBLE_ORDER_KEY = "f4_nibble_order"
_LOW_FIRST, _HIGH_FIRST = "low_first", "high_first"
_UNSUPPORTED = ("BOOL", "F6_E2M3", "F6_E3M2", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "U32", "U64", "F64", "C64")

PathLike = Union[str, "os.PathLike[str]"]


class SafetensorsError(ValueError):
    """A malformed safetensors file (or tensors that cannot be written): ``file`` and ``fault`` say which and what."""

    def __init__(self, file: str, fault: str):
        super().__init__(f"{file}: {fault}")
        self.file = file
        self.fault = fault


@dataclasses.dataclass
class SafetensorsFile:
    """A file's contents: tensors by name (in data-offset order) and ``__metadata__`` (empty when absent)."""

    #: Tensors by name: numpy form (:func:`gemm_oracle.tensors.to_numpy`), or :class:`RawTensor` with ``raw=True``.
    tensors: Dict[str, Any]
    #: ``__metadata__``, string → string, as stored.
    metadata: Dict[str, str]

    @property
    def packed_ue8m0(self) -> list:
        """The tensors ``__metadata__["packed_ue8m0"]`` lists (packed UE8M0 scales)."""
        return json.loads(self.metadata[PACKED_UE8M0_KEY]) if PACKED_UE8M0_KEY in self.metadata else []


def _describe(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    return "a number"


def _strict_object(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {json.dumps(k)}")
        out[k] = v
    return out


def _no_constants(name: str):
    raise ValueError(f"{name} is not JSON")


def _index_list(file: str, name: str, key: str, v: Any) -> list:
    if not isinstance(v, list):
        raise SafetensorsError(file, f'tensor "{name}": "{key}" must be an array, got {_describe(v)}')
    for d in v:
        if isinstance(d, bool) or not isinstance(d, int) or d < 0 or d > 2**53 - 1:
            raise SafetensorsError(file, f'tensor "{name}": "{key}" holds {json.dumps(d)}, not a non-negative integer')
    return v


def _decode(dtype: str, shape: tuple, raw: memoryview, low_first: bool) -> RawTensor:
    info = DTYPES[dtype]
    if dtype == "F4":
        b = np.frombuffer(raw, dtype=np.uint8)
        codes = np.empty(b.size * 2, dtype=np.uint8)
        lo, hi = b & 0xF, b >> 4
        codes[0::2], codes[1::2] = (lo, hi) if low_first else (hi, lo)
        return RawTensor(codes.reshape(shape), "F4")
    little = info.storage.newbyteorder("<")
    arr = np.frombuffer(raw, dtype=little).astype(info.storage)  # astype copies (and swaps on big-endian hosts)
    return RawTensor(arr.reshape(shape), dtype)


def parse_safetensors(data: Union[bytes, bytearray, memoryview], file: str = "<bytes>", *, raw: bool = False):
    """Validates and decodes the bytes of a safetensors file.

    :param data: the whole file
    :param file: the name used in error messages
    :param raw: give every tensor as a :class:`RawTensor` instead of numpy form
    :returns: a :class:`SafetensorsFile`
    :raises SafetensorsError: naming the file and the fault, for every malformed input
    """
    buf = memoryview(data).cast("B")
    if len(buf) < 8:
        raise SafetensorsError(file, f"truncated: {len(buf)} bytes, fewer than the 8-byte header length")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > MAX_HEADER_BYTES:
        raise SafetensorsError(file, f"header length {n} exceeds the {MAX_HEADER_BYTES}-byte limit")
    if n > len(buf) - 8:
        raise SafetensorsError(
            file, f"header length {n} is beyond the end of the file ({len(buf) - 8} bytes follow it)"
        )
    if n < 2:
        raise SafetensorsError(file, f"header length {n} is too small for a JSON object")
    try:
        text = bytes(buf[8 : 8 + n]).decode("utf-8")
    except UnicodeDecodeError:
        raise SafetensorsError(file, "header is not valid UTF-8") from None
    if not text.startswith("{"):
        raise SafetensorsError(file, "header does not start with '{'")
    try:
        header = json.loads(text, object_pairs_hook=_strict_object, parse_constant=_no_constants)
    except (ValueError, RecursionError) as e:
        raise SafetensorsError(file, f"header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(file, "header is not a JSON object")

    metadata: Dict[str, str] = {}
    entries = []
    for name, v in header.items():
        if name == "__metadata__":
            if not isinstance(v, dict):
                raise SafetensorsError(file, f'"__metadata__" must be an object, got {_describe(v)}')
            for k, s in v.items():
                if not isinstance(s, str):
                    raise SafetensorsError(file, f'"__metadata__" value of "{k}" must be a string, got {_describe(s)}')
                metadata[k] = s
            continue
        if not isinstance(v, dict):
            raise SafetensorsError(file, f'tensor "{name}" must be an object, got {_describe(v)}')
        for k in v:
            if k not in ("dtype", "shape", "data_offsets"):
                raise SafetensorsError(file, f'tensor "{name}" has an unexpected key "{k}"')
        dt = v.get("dtype")
        if not isinstance(dt, str):
            raise SafetensorsError(file, f'tensor "{name}": "dtype" must be a string')
        if dt not in DTYPES:
            kind = "unsupported" if dt in _UNSUPPORTED else "unknown"
            raise SafetensorsError(
                file, f'tensor "{name}": {kind} dtype {json.dumps(dt)} (supported: {" ".join(DTYPES)})'
            )
        shape = _index_list(file, name, "shape", v.get("shape"))
        if len(shape) > 16:
            raise SafetensorsError(file, f'tensor "{name}": rank {len(shape)} exceeds 16')
        offsets = _index_list(file, name, "data_offsets", v.get("data_offsets"))
        if len(offsets) != 2:
            raise SafetensorsError(
                file, f'tensor "{name}": "data_offsets" must hold [begin, end], got {len(offsets)} numbers'
            )
        begin, end = offsets
        if end < begin:
            raise SafetensorsError(file, f'tensor "{name}": data_offsets [{begin}, {end}] end before begin')
        count = 1
        for d in shape:
            count *= d
        if count > 2**53 - 1:
            raise SafetensorsError(file, f'tensor "{name}": shape {shape} has too many elements')
        bits = DTYPES[dt].bits
        if (count * bits) % 8:
            raise SafetensorsError(
                file,
                f'tensor "{name}": {count} {dt} elements do not fill whole bytes (an F4 tensor needs an even element '
                "count)",
            )
        size = count * bits // 8
        if end - begin != size:
            raise SafetensorsError(
                file,
                f'tensor "{name}": shape {shape} x {dt} needs {size} bytes but data_offsets [{begin}, {end}] span '
                f"{end - begin}",
            )
        entries.append((name, dt, tuple(shape), begin, end))

    start = 8 + n
    data_len = len(buf) - start
    for name, _, _, begin, end in entries:
        if end > data_len:
            raise SafetensorsError(
                file, f'tensor "{name}": data_offsets [{begin}, {end}] out of range of the {data_len}-byte data section'
            )
    entries.sort(key=lambda e: (e[3], e[4]))
    pos = 0
    for name, _, _, begin, end in entries:
        if begin > pos:
            raise SafetensorsError(
                file, f'hole in the data: bytes [{pos}, {begin}) belong to no tensor (before "{name}")'
            )
        if begin < pos:
            raise SafetensorsError(file, f'tensor "{name}" overlaps another tensor at byte {begin}')
        pos = end
    if pos != data_len:
        raise SafetensorsError(file, f"hole in the data: bytes [{pos}, {data_len}) at the end belong to no tensor")

    order = metadata.get(F4_NIBBLE_ORDER_KEY, _LOW_FIRST)
    if order not in (_LOW_FIRST, _HIGH_FIRST):
        raise SafetensorsError(
            file, f'"__metadata__.{F4_NIBBLE_ORDER_KEY}" is {json.dumps(order)}, not "{_LOW_FIRST}" or "{_HIGH_FIRST}"'
        )
    dtypes = {e[0]: e[1] for e in entries}
    _check_packed_list(file, metadata, dtypes)

    tensors: Dict[str, Any] = {}
    for name, dt, shape, begin, end in entries:
        t = _decode(dt, shape, buf[start + begin : start + end], order == _LOW_FIRST)
        tensors[name] = t if raw else to_numpy(t)
    return SafetensorsFile(tensors, metadata)


def _check_packed_list(file: str, metadata: Mapping[str, str], dtypes: Mapping[str, str]) -> None:
    if PACKED_UE8M0_KEY not in metadata:
        return
    try:
        names = json.loads(metadata[PACKED_UE8M0_KEY])
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
        raise SafetensorsError(file, f'"__metadata__.{PACKED_UE8M0_KEY}" must be a JSON array of tensor names')
    for x in names:
        if dtypes.get(x) != "I32":
            what = "no tensor" if x not in dtypes else f"a {dtypes[x]} tensor"
            raise SafetensorsError(
                file, f'"__metadata__.{PACKED_UE8M0_KEY}" lists "{x}", which is {what} (packed UE8M0 scales are I32)'
            )


def read_safetensors(path: PathLike, *, raw: bool = False) -> SafetensorsFile:
    """Reads and validates a safetensors file (see :func:`parse_safetensors`).

    :param path: the file
    :param raw: give every tensor as a :class:`RawTensor`
    :returns: its tensors and metadata
    """
    with open(path, "rb") as f:
        data = f.read()
    return parse_safetensors(data, os.fspath(path), raw=raw)


def _tensor_bytes(name: str, t: RawTensor) -> bytes:
    if t.dtype == "F4":
        codes = t.bits.reshape(-1)
        if codes.size % 2:
            raise ValueError(
                f'tensor "{name}": F4 needs an even element count to pack two codes per byte, got {codes.size}'
            )
        return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8).tobytes()
    info = DTYPES[t.dtype]
    return np.ascontiguousarray(t.bits, dtype=info.storage.newbyteorder("<")).tobytes()


def serialize_safetensors(tensors: Mapping[str, Any], metadata: Optional[Mapping[str, str]] = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors`` (any accepted form) and ``metadata``.

    :param tensors: name → tensor
    :param metadata: string → string, written as ``__metadata__`` (``f4_nibble_order`` is the writer's own)
    :returns: the file's bytes, deterministic
    :raises SafetensorsError: (file ``<write>``) for a bad name, metadata value or ``packed_ue8m0`` list
    """
    where = "<write>"
    meta = {}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise SafetensorsError(where, f"metadata must map strings to strings, got {k!r}: {type(v).__name__}")
        if k != F4_NIBBLE_ORDER_KEY:
            meta[k] = v
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise SafetensorsError(where, f"tensor names must be strings, got {name!r}")
        if name == "__metadata__":
            raise SafetensorsError(where, 'tensor name "__metadata__" is reserved by safetensors')
        try:
            items.append((name, as_raw(t)))
        except (TypeError, ValueError) as e:
            raise SafetensorsError(where, f'tensor "{name}": {e}') from None
    if any(t.dtype == "F4" for _, t in items):
        meta[F4_NIBBLE_ORDER_KEY] = _LOW_FIRST
    _check_packed_list(where, meta, {n: t.dtype for n, t in items})
    items.sort(key=lambda it: (-DTYPES[it[1].dtype].bits, it[0].encode("utf-8")))

    def js(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    parts = []
    if meta:
        keys = sorted(meta, key=lambda k: k.encode("utf-8"))
        parts.append('"__metadata__":{' + ",".join(f"{js(k)}:{js(meta[k])}" for k in keys) + "}")
    blobs = []
    offset = 0
    for name, t in items:
        try:
            blob = _tensor_bytes(name, t)
        except ValueError as e:
            raise SafetensorsError(where, str(e)) from None
        blobs.append(blob)
        shape = ",".join(str(d) for d in t.shape)
        parts.append(
            f'{js(name)}:{{"dtype":"{t.dtype}","shape":[{shape}],"data_offsets":[{offset},{offset + len(blob)}]}}'
        )
        offset += len(blob)
    header = ("{" + ",".join(parts) + "}").encode("utf-8")
    header += b" " * ((8 - len(header) % 8) % 8)
    return b"".join([struct.pack("<Q", len(header)), header, *blobs])


def write_safetensors(path: PathLike, tensors: Mapping[str, Any], metadata: Optional[Mapping[str, str]] = None) -> None:
    """Writes ``tensors`` and ``metadata`` to a safetensors file (see :func:`serialize_safetensors`)."""
    data = serialize_safetensors(tensors, metadata)
    with open(path, "wb") as f:
        f.write(data)
