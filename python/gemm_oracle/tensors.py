"""Tensors in memory: what the package accepts, what it hands back, and the conversions between them.

Every tensor crosses the oracle boundary as a safetensors dtype (``F32``, ``F16``, ``BF16``, ``F8_E4M3``,
``F8_E5M2``, ``F8_E8M0``, ``F4``, ``I32``, ``I64``, ``U8``, ``I8``) and its bit patterns. numpy has no bf16, fp8 or
fp4, so:

* **Accepted as input** (anywhere a tensor is expected):

  - numpy arrays of float32, float16, int32, int64, uint8, int8;
  - ml_dtypes arrays (``bfloat16``, ``float8_e4m3fn``, ``float8_e5m2``, ``float8_e8m0fnu``, ``float4_e2m1fn``);
  - :class:`RawTensor` (bit patterns and a dtype name);
  - torch tensors on any device (copied to the CPU): float32, float16, bfloat16, float8_e4m3fn, float8_e5m2,
    float8_e8m0fnu, int32, int64, uint8, int8, and ``float4_e2m1fn_x2`` (two E2M1 codes per byte, element 0 in the
    low nibble: the last dimension doubles);
  - packed FP4 as DeepGEMM stores it (an int8 or uint8 array / tensor of ``[..., K // 2]`` bytes, element 0 in the
    low nibble), marked with :func:`packed_fp4`. Where the expected dtype is known (an adapter's ``F4`` output, an
    ``F4`` output given to ``assert_bitexact``), an int8 / uint8 tensor of the packed shape is read as packed FP4
    without the mark, and a uint8 tensor where ``F8_E8M0`` is expected is read as its codes (torch before 2.7 has
    no ``float8_e8m0fnu``).

  Non-contiguous arrays and tensors are made contiguous; nothing is ever cast between value types.

* **Handed back** by :func:`to_numpy` (and by ``run``, ``cases`` and ``read_safetensors``): numpy arrays for the
  native dtypes; ml_dtypes arrays for the others when ml_dtypes is importable, else :class:`RawTensor` (uint16 bits
  for BF16, uint8 codes for F8_* and for F4, one code per element). :func:`to_torch` gives torch tensors of the
  matching dtype, FP4 packed as DeepGEMM's int8 ``[..., K // 2]`` (or ``float4_e2m1fn_x2`` / uint8 on request).

* **Packed UE8M0 scales** (four E8M0 codes per int32, byte ``j`` the scale of K-group ``4p + j``: DeepGEMM's layout)
  are plain ``I32`` tensors; files list their names in the JSON array ``__metadata__["packed_ue8m0"]``
  (:data:`PACKED_UE8M0_KEY`, :func:`packed_ue8m0_names`). :func:`unpack_ue8m0` / :func:`pack_ue8m0` convert.

>>> import numpy as np
>>> t = RawTensor(np.array([0x3F80, 0xC000], dtype=np.uint16), "BF16")
>>> t.shape, t.dtype
((2,), 'BF16')
>>> as_raw(np.arange(3, dtype=np.int32)).dtype
'I32'
>>> as_raw(packed_fp4(np.array([[0x21, 0x43]], dtype=np.uint8))).bits.tolist()
[[1, 2, 3, 4]]
>>> unpack_ue8m0(np.array([0x7F7E7D7C], dtype=np.int32)).bits.tolist()
[124, 125, 126, 127]
"""

from __future__ import annotations

import dataclasses
import re
import sys
from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "DTYPES",
    "DTypeInfo",
    "PACKED_UE8M0_KEY",
    "PackedFP4",
    "RawTensor",
    "as_raw",
    "dtype_of",
    "is_tensor",
    "pack_ue8m0",
    "packed_fp4",
    "packed_ue8m0_names",
    "to_numpy",
    "to_torch",
    "unpack_ue8m0",
    "zeros",
]

#: Metadata key listing (as a JSON array) the I32 tensors that hold packed UE8M0 scales.
PACKED_UE8M0_KEY = "packed_ue8m0"


@dataclasses.dataclass(frozen=True)
class DTypeInfo:
    """One safetensors dtype: how it is stored here and what it is called elsewhere."""

    #: The safetensors name (``BF16``).
    name: str
    #: The numpy dtype of :attr:`RawTensor.bits` (float32 for F32, uint16 for BF16, uint8 for F8_* and F4, ...).
    storage: np.dtype
    #: Bits per element in a safetensors file (F4: 4, two codes per byte).
    bits: int
    #: The torch dtype's attribute name (``bfloat16``; F4: the packed ``float4_e2m1fn_x2``).
    torch: str
    #: The ml_dtypes attribute name, or None when numpy has the type itself.
    ml_dtypes: Optional[str]

    @property
    def native(self) -> bool:
        """True when numpy holds the values itself (no ml_dtypes or RawTensor needed)."""
        return self.ml_dtypes is None


def _info(name: str, storage: str, bits: int, torch: str, ml: Optional[str]) -> DTypeInfo:
    return DTypeInfo(name, np.dtype(storage), bits, torch, ml)


#: The dtypes, by safetensors name.
DTYPES: Mapping[str, DTypeInfo] = {
    d.name: d
    for d in (
        _info("F32", "float32", 32, "float32", None),
        _info("F16", "float16", 16, "float16", None),
        _info("BF16", "uint16", 16, "bfloat16", "bfloat16"),
        _info("F8_E4M3", "uint8", 8, "float8_e4m3fn", "float8_e4m3fn"),
        _info("F8_E5M2", "uint8", 8, "float8_e5m2", "float8_e5m2"),
        _info("F8_E8M0", "uint8", 8, "float8_e8m0fnu", "float8_e8m0fnu"),
        _info("F4", "uint8", 4, "float4_e2m1fn_x2", "float4_e2m1fn"),
        _info("I32", "int32", 32, "int32", None),
        _info("I64", "int64", 64, "int64", None),
        _info("U8", "uint8", 8, "uint8", None),
        _info("I8", "int8", 8, "int8", None),
    )
}

_NUMPY_NATIVE = {"float32": "F32", "float16": "F16", "int32": "I32", "int64": "I64", "uint8": "U8", "int8": "I8"}
_BY_ML_NAME = {d.ml_dtypes: d.name for d in DTYPES.values() if d.ml_dtypes}
_BY_TORCH_NAME = {d.torch: d.name for d in DTYPES.values()}


def dtype_info(dtype: str) -> DTypeInfo:
    """The :class:`DTypeInfo` of a safetensors dtype name; ValueError naming the known ones otherwise."""
    try:
        return DTYPES[dtype]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dtype {dtype!r}; known: {' '.join(DTYPES)}") from None


class RawTensor:
    """A tensor as bit patterns: ``bits`` (a C-contiguous numpy array of the dtype's storage type) and ``dtype``.

    The storage types: float32 (F32), float16 (F16), uint16 (BF16), uint8 (F8_E4M3, F8_E5M2, F8_E8M0; F4 unpacked,
    one code 0-15 per element), int32, int64, uint8, int8. Integer bits of another signedness but the same width
    are viewed, never converted. Write into ``bits`` to fill a pre-allocated output in place.

    >>> RawTensor(np.zeros((2, 3), np.uint8), "F8_E4M3")
    RawTensor(dtype='F8_E4M3', shape=(2, 3))
    """

    __slots__ = ("bits", "dtype")

    def __init__(self, bits: Any, dtype: str):
        info = dtype_info(dtype)
        arr = np.asarray(bits)
        if arr.dtype != info.storage:
            same_int_width = arr.dtype.kind in "iu" and info.storage.kind in "iu"
            if same_int_width and arr.dtype.itemsize == info.storage.itemsize:
                arr = arr.view(info.storage) if arr.flags.c_contiguous else arr.astype(info.storage)
            else:
                raise TypeError(f"{dtype} bits must be a {info.storage} array, got {arr.dtype}")
        arr = np.ascontiguousarray(arr)
        if dtype == "F4" and arr.size and int(arr.max()) > 0xF:
            raise ValueError(f"F4 codes must be 0-15 (one code per element, unpacked), got {int(arr.max())}")
        self.bits: np.ndarray = arr
        self.dtype: str = dtype

    @property
    def shape(self) -> Tuple[int, ...]:
        """The tensor's shape (that of ``bits``)."""
        return tuple(self.bits.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.bits.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(self.bits.size)

    def copy(self) -> "RawTensor":
        """A copy with its own bits."""
        return RawTensor(self.bits.copy(), self.dtype)

    def __repr__(self) -> str:
        return f"RawTensor(dtype={self.dtype!r}, shape={self.shape})"


class PackedFP4:
    """Marks an int8 / uint8 array or tensor as packed FP4: ``[..., K // 2]`` bytes holding E2M1 codes, element 0 of
    each pair in the low nibble (DeepGEMM's storage). Made by :func:`packed_fp4`."""

    __slots__ = ("data",)

    def __init__(self, data: Any):
        self.data = data

    def __repr__(self) -> str:
        return f"PackedFP4({_describe(self.data)})"


def packed_fp4(data: Any) -> PackedFP4:
    """Marks ``data`` (int8 / uint8, numpy or torch) as packed FP4, two E2M1 codes per byte, low nibble first.

    >>> as_raw(packed_fp4(np.array([0x7F], dtype=np.uint8))).shape
    (2,)
    """
    return PackedFP4(data)


def _torch_module():
    return sys.modules.get("torch")


def _is_torch(x: Any) -> bool:
    torch = _torch_module()
    return torch is not None and isinstance(x, torch.Tensor)


def _ml_dtypes_module():
    try:
        import ml_dtypes  # type: ignore[import-not-found]
    except ImportError:
        return None
    return ml_dtypes


def is_tensor(x: Any) -> bool:
    """True for everything the package accepts as a tensor (numpy array, RawTensor, PackedFP4, torch tensor)."""
    return isinstance(x, (np.ndarray, RawTensor, PackedFP4)) or _is_torch(x)


def _describe(x: Any) -> str:
    if isinstance(x, RawTensor):
        return repr(x)
    if isinstance(x, np.ndarray) or _is_torch(x):
        return f"{type(x).__module__}.{type(x).__name__} of {x.dtype} {tuple(x.shape)}"
    return type(x).__name__


def dtype_of(x: Any) -> str:
    """The safetensors dtype of an accepted tensor (``float4_e2m1fn_x2`` and :class:`PackedFP4` are ``F4``).

    >>> dtype_of(np.zeros(2, np.float16))
    'F16'
    """
    if isinstance(x, RawTensor):
        return x.dtype
    if isinstance(x, PackedFP4):
        return "F4"
    if isinstance(x, np.ndarray):
        name = x.dtype.name
        if name in _NUMPY_NATIVE:
            return _NUMPY_NATIVE[name]
        if name in _BY_ML_NAME:
            return _BY_ML_NAME[name]
        raise TypeError(
            f"numpy {name} has no safetensors dtype here; accepted: float32, float16, int32, int64, uint8, int8 and "
            "the ml_dtypes bfloat16 / float8_e4m3fn / float8_e5m2 / float8_e8m0fnu / float4_e2m1fn"
        )
    if _is_torch(x):
        name = str(x.dtype).replace("torch.", "")
        if name in _BY_TORCH_NAME:
            return _BY_TORCH_NAME[name]
        raise TypeError(f"torch.{name} has no safetensors dtype here; accepted: {', '.join(_BY_TORCH_NAME)}")
    raise TypeError(f"expected a numpy array, an ml_dtypes array, a RawTensor or a torch tensor, got {_describe(x)}")


def _unpack_fp4_bytes(packed: np.ndarray) -> np.ndarray:
    """``[..., n]`` bytes → ``[..., 2n]`` codes, element 0 in the low nibble."""
    b = np.ascontiguousarray(packed).view(np.uint8)
    codes = np.empty(b.shape[:-1] + (b.shape[-1] * 2,), dtype=np.uint8) if b.ndim else None
    if codes is None:
        raise ValueError("packed FP4 must have at least one dimension")
    codes[..., 0::2] = b & 0xF
    codes[..., 1::2] = b >> 4
    return codes


def _pack_fp4_codes(codes: np.ndarray) -> np.ndarray:
    """``[..., 2n]`` codes → ``[..., n]`` uint8 bytes, element 0 in the low nibble."""
    if codes.ndim == 0 or codes.shape[-1] % 2:
        raise ValueError(f"packing FP4 needs an even last dimension, got shape {tuple(codes.shape)}")
    return np.ascontiguousarray((codes[..., 0::2] & 0xF) | ((codes[..., 1::2] & 0xF) << 4)).astype(np.uint8)


def _torch_to_numpy(t: Any) -> Tuple[np.ndarray, str]:
    """A torch tensor's bits on the CPU, contiguous, and its safetensors dtype."""
    torch = _torch_module()
    dtype = dtype_of(t)
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    if dtype == "BF16":
        return t.view(torch.int16).numpy().view(np.uint16).copy(), dtype
    if dtype.startswith("F8_") or dtype == "F4":
        return t.view(torch.uint8).numpy().copy(), dtype
    return t.numpy().copy(), dtype


def _plain_bits(x: Any) -> np.ndarray:
    """The bytes of an int8 / uint8 array or tensor (for packed FP4 and E8M0 codes)."""
    if _is_torch(x):
        arr, _ = _torch_to_numpy(x)
    else:
        arr = np.ascontiguousarray(np.asarray(x))
    if arr.dtype not in (np.dtype(np.int8), np.dtype(np.uint8)):
        raise TypeError(f"packed FP4 must be int8 or uint8, got {arr.dtype}")
    return arr.view(np.uint8)


def as_raw(x: Any, *, expect: Optional[Tuple[str, Sequence[int]]] = None) -> RawTensor:
    """Any accepted tensor as a :class:`RawTensor` (bits copied to the CPU, contiguous).

    :param x: a numpy / ml_dtypes array, RawTensor, PackedFP4 or torch tensor
    :param expect: ``(dtype, shape)`` when the caller knows what it expects; then an int8 / uint8 tensor of the
        packed shape is read as packed FP4 where ``F4`` is expected, and a uint8 tensor as codes where ``F8_E8M0``
        is. Nothing else is reinterpreted: check the result's dtype and shape.
    :returns: the tensor's bits and dtype
    """
    if isinstance(x, RawTensor):
        return x
    if isinstance(x, PackedFP4):
        return RawTensor(_unpack_fp4_bytes(_plain_bits(x.data)), "F4")
    dtype = dtype_of(x)
    if expect is not None:
        want, shape = expect[0], tuple(int(d) for d in expect[1])
        got_shape = tuple(int(d) for d in x.shape)
        if want == "F4" and dtype in ("I8", "U8") and shape and got_shape == shape[:-1] + (shape[-1] // 2,):
            return RawTensor(_unpack_fp4_bytes(_plain_bits(x)), "F4")
        if want == "F8_E8M0" and dtype == "U8" and got_shape == shape:
            return RawTensor(_plain_bits(x), "F8_E8M0")
    if _is_torch(x):
        arr, dtype = _torch_to_numpy(x)
        if dtype == "F4":
            return RawTensor(_unpack_fp4_bytes(arr), "F4")
        return RawTensor(arr, dtype)
    arr = np.ascontiguousarray(x)
    info = DTYPES[dtype]
    if info.native:
        return RawTensor(arr, dtype)
    bits = arr.view(np.dtype(f"u{arr.dtype.itemsize}"))
    if dtype == "F4":
        bits = bits.astype(np.uint8) & 0xF
    return RawTensor(bits, dtype)


def to_numpy(x: Any) -> Any:
    """An accepted tensor in numpy form: a numpy array for the native dtypes, an ml_dtypes array for BF16 / F8_* /
    F4 when ml_dtypes (and that type in it) is importable, else a :class:`RawTensor`.

    >>> to_numpy(RawTensor(np.array([1.5], np.float32), "F32"))
    array([1.5], dtype=float32)
    """
    raw = as_raw(x)
    info = DTYPES[raw.dtype]
    if info.native:
        return raw.bits
    ml = _ml_dtypes_module()
    ml_type = getattr(ml, info.ml_dtypes, None) if ml is not None else None
    if ml_type is None:
        return raw
    return raw.bits.view(ml_type)


def to_torch(x: Any, device: Any = "cpu", *, fp4: str = "int8") -> Any:
    """An accepted tensor as a torch tensor on ``device`` (a copy).

    :param x: the tensor
    :param device: where it goes (``"cuda"``, ``"cuda:1"``, a ``torch.device``)
    :param fp4: how F4 is stored: ``"int8"`` (DeepGEMM's packed ``[..., K // 2]`` int8, the default), ``"uint8"``
        (the same bytes unsigned) or ``"float4_e2m1fn_x2"`` (torch's packed dtype). F8_E8M0 becomes uint8 codes on a
        torch without ``float8_e8m0fnu``.
    :returns: the torch tensor
    """
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        raise ImportError("to_torch() needs PyTorch (pip install torch)") from None
    raw = as_raw(x)
    bits = raw.bits
    if raw.dtype == "F4":
        packed = _pack_fp4_codes(bits)
        if fp4 == "int8":
            t = torch.from_numpy(packed.view(np.int8))
        elif fp4 == "uint8":
            t = torch.from_numpy(packed)
        elif fp4 == "float4_e2m1fn_x2":
            if not hasattr(torch, "float4_e2m1fn_x2"):
                raise TypeError(f"torch {torch.__version__} has no float4_e2m1fn_x2")
            t = torch.from_numpy(packed).view(torch.float4_e2m1fn_x2)
        else:
            raise ValueError(f"fp4 must be 'int8', 'uint8' or 'float4_e2m1fn_x2', got {fp4!r}")
    elif raw.dtype == "BF16":
        t = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
    elif raw.dtype.startswith("F8_"):
        name = DTYPES[raw.dtype].torch
        t = torch.from_numpy(bits)
        if hasattr(torch, name):
            t = t.view(getattr(torch, name))
        elif raw.dtype != "F8_E8M0":
            raise TypeError(f"torch {torch.__version__} has no {name}")
    else:
        t = torch.from_numpy(bits)
    return t.to(device).clone() if str(device) == "cpu" else t.to(device)


def zeros(dtype: str, shape: Sequence[int]) -> RawTensor:
    """A tensor of zero bits (+0.0 for the float formats).

    >>> zeros("BF16", [2]).bits.tolist()
    [0, 0]
    """
    return RawTensor(np.zeros(tuple(int(d) for d in shape), dtype=dtype_info(dtype).storage), dtype)


_PACKED_SF_NAME = re.compile(r"(^|_)sf[ab]?$")


def packed_ue8m0_names(tensors: Mapping[str, Any]) -> list:
    """The names, sorted, of the I32 tensors named like scale factors (``sfa``, ``sfb``, ``x_sf``, ``kv_sf``):
    DeepGEMM's packed UE8M0 scales, which files list under ``__metadata__["packed_ue8m0"]``.

    >>> packed_ue8m0_names({"sfa": np.zeros(1, np.int32), "sfb": np.zeros(1, np.float32), "a": np.zeros(1, np.int32)})
    ['sfa']
    """
    return sorted(n for n, t in tensors.items() if _PACKED_SF_NAME.search(n) and dtype_of(t) == "I32")


def unpack_ue8m0(x: Any) -> RawTensor:
    """Packed UE8M0 scales (int32, four codes each, byte ``j`` = K-group ``4p + j``) as ``F8_E8M0`` codes; the last
    dimension grows four times."""
    raw = as_raw(x)
    if raw.dtype != "I32":
        raise TypeError(f"packed UE8M0 scales are I32, got {raw.dtype}")
    if raw.ndim == 0:
        raise ValueError("packed UE8M0 scales need at least one dimension")
    b = np.ascontiguousarray(raw.bits.astype("<i4")).view(np.uint8)
    return RawTensor(b.reshape(raw.shape[:-1] + (raw.shape[-1] * 4,)), "F8_E8M0")


def pack_ue8m0(x: Any) -> np.ndarray:
    """``F8_E8M0`` codes ``[..., 4n]`` packed four per int32 ``[..., n]`` (the inverse of :func:`unpack_ue8m0`).

    >>> hex(int(pack_ue8m0(RawTensor(np.array([124, 125, 126, 127], np.uint8), "F8_E8M0"))[0]))
    '0x7f7e7d7c'
    """
    raw = as_raw(x)
    if raw.dtype not in ("F8_E8M0", "U8"):
        raise TypeError(f"packing UE8M0 needs F8_E8M0 codes, got {raw.dtype}")
    if raw.ndim == 0 or raw.shape[-1] % 4:
        raise ValueError(f"packing UE8M0 needs a last dimension divisible by 4, got shape {raw.shape}")
    return np.ascontiguousarray(raw.bits.view(np.uint8)).view("<i4").astype(np.int32)
