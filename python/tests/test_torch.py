"""torch tensors in and out (skipped without PyTorch): every dtype, any layout, packed FP4, on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from gemm_oracle.tensors import DTYPES, RawTensor, as_raw, packed_fp4, to_torch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "name,dtype",
    [
        ("float32", "F32"), ("float16", "F16"), ("bfloat16", "BF16"), ("float8_e4m3fn", "F8_E4M3"),
        ("float8_e5m2", "F8_E5M2"), ("float8_e8m0fnu", "F8_E8M0"), ("int32", "I32"), ("int64", "I64"),
        ("uint8", "U8"), ("int8", "I8"),
    ],
)
def test_torch_tensors_round_trip_their_bits(name, dtype):
    if not hasattr(torch, name):
        pytest.skip(f"torch {torch.__version__} has no {name}")
    storage = DTYPES[dtype].storage
    raw_bytes = np.random.default_rng(1).integers(0, 256, (4, 6 * storage.itemsize), dtype=np.uint8)
    raw = RawTensor(raw_bytes.view(storage), dtype)
    t = to_torch(raw)
    assert str(t.dtype) == f"torch.{name}" and tuple(t.shape) == raw.shape
    back = as_raw(t)
    assert back.dtype == dtype and back.bits.tobytes() == raw.bits.tobytes()
    # A transposed (non-contiguous) view comes back contiguous, in logical order.
    tt = as_raw(t.T)
    assert tt.bits.tobytes() == np.ascontiguousarray(raw.bits.T).tobytes()


def test_fp4_goes_to_torch_packed_as_deepgemm_stores_it():
    codes = RawTensor(np.array([[1, 2, 3, 4]], np.uint8), "F4")
    t = to_torch(codes)
    assert t.dtype == torch.int8 and t.tolist() == [[0x21, 0x43]]
    assert as_raw(packed_fp4(t)).bits.tolist() == [[1, 2, 3, 4]]
    assert as_raw(t, expect=("F4", (1, 4))).dtype == "F4"
    assert to_torch(codes, fp4="uint8").dtype == torch.uint8
    if hasattr(torch, "float4_e2m1fn_x2"):
        x2 = to_torch(codes, fp4="float4_e2m1fn_x2")
        assert x2.dtype == torch.float4_e2m1fn_x2 and tuple(x2.shape) == (1, 2)
        assert as_raw(x2).bits.tolist() == [[1, 2, 3, 4]]


def test_to_torch_copies_and_moves():
    arr = np.zeros(3, np.float32)
    t = to_torch(arr)
    t += 1
    assert arr.tolist() == [0.0, 0.0, 0.0]
    assert to_torch(arr, device="cpu").device.type == "cpu"


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device (tests/gpu/run.sh runs these on an H200)")


@cuda
@pytest.mark.parametrize("name,dtype", [("bfloat16", "BF16"), ("float8_e4m3fn", "F8_E4M3"), ("float8_e8m0fnu", "F8_E8M0"),
                                        ("float32", "F32"), ("int32", "I32")])
def test_cuda_tensors_round_trip_their_bits(name, dtype):
    storage = DTYPES[dtype].storage
    raw_bytes = np.random.default_rng(2).integers(0, 256, (3, 5 * storage.itemsize), dtype=np.uint8)
    raw = RawTensor(raw_bytes.view(storage), dtype)
    t = to_torch(raw, device="cuda")
    assert t.device.type == "cuda" and str(t.dtype) == f"torch.{name}"
    assert as_raw(t).bits.tobytes() == raw.bits.tobytes()


@cuda
def test_an_adapter_on_cuda_gets_device_tensors_and_a_cuda_fault_asks_for_a_restart(tmp_path):
    from gemm_oracle.safetensors import read_safetensors, write_safetensors
    from gemm_oracle.serve import Adapter

    seen = {}

    def double(x, d):
        seen["device"] = x.device.type
        d.copy_(x * 2)

    def fault(x, d):
        bad = torch.tensor([1 << 30], device="cuda")
        d[bad] += 1  # a device-side assert: the context is lost
        torch.cuda.synchronize()

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_safetensors(str(tmp_path / "in.safetensors"), {"x": x})
    req = {"inputs": str(tmp_path / "in.safetensors"), "outputs": str(tmp_path / "out.safetensors"), "model": "m",
           "scalars": {}, "out": {"d": {"dtype": "F32", "shape": [2, 3]}}}
    ok = Adapter({"double": double}, models="m", tensors="torch", device="cuda").handle({**req, "id": 1, "op": "double"})
    assert ok == {"id": 1, "status": "ok"} and seen["device"] == "cuda"
    assert read_safetensors(str(tmp_path / "out.safetensors")).tensors["d"].tolist() == (x * 2).tolist()
    bad = Adapter({"fault": fault}, models="m", tensors="torch", device="cuda").handle({**req, "id": 2, "op": "fault"})
    assert bad["status"] == "error" and bad["restart"] is True and "CUDA" in bad["message"]
