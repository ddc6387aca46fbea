"""gemm_oracle.identify against the real `oracle serve`: a kernel's output named by its rounding behaviour, and a
local fault found by its mismatch map."""

from __future__ import annotations

import numpy as np
import pytest

import gemm_oracle
from gemm_oracle.client import OracleError
from gemm_oracle.tensors import RawTensor, as_raw


def raw_fp8_gemm(m=16, n=128, k=512, seed=5):
    rng = np.random.default_rng(seed)

    def codes(*shape):  # finite e4m3 values of both signs (0x7F / 0xFF are NaN)
        magnitude = rng.integers(0, 0x7F, shape, dtype=np.uint8)
        return RawTensor(magnitude | (rng.integers(0, 2, shape, dtype=np.uint8) << 7), "F8_E4M3")

    return {"a": codes(m, k), "b": codes(n, k)}


def test_identify_names_cublaslt_without_fast_accumulation(oracle):
    inputs = raw_fp8_gemm()
    promoted = oracle.run("cublaslt_gemm_nt", inputs, model="cublaslt")  # promotion to fp32 every 128 K
    found = oracle.identify("cublaslt_gemm_nt", inputs, promoted)
    assert found["matches"][0]["label"] == "cublaslt"
    assert "fast accumulation off" in found["verdict"]
    assert found["nearest"] == []


def test_identify_reports_the_nearest_variant_and_the_tile_of_a_local_fault(oracle):
    inputs = raw_fp8_gemm(m=64, n=256)
    d = as_raw(oracle.run("cublaslt_gemm_nt", inputs, model="exact")["d"]).copy()
    d.bits[8:16, 128:256] ^= 0x0001
    found = oracle.identify("cublaslt_gemm_nt", inputs, {"d": d}, top=2)
    assert found["matches"] == []
    nearest = found["nearest"][0]
    assert nearest["label"] == "exact" and nearest["mismatches"] == 8 * 128
    assert nearest["maps"]["d"]["classification"]["kind"] == "one_tile"
    assert len(found["nearest"]) == 2


def test_identify_is_a_module_function_and_refuses_outputs_of_another_shape():
    inputs = raw_fp8_gemm(m=4, n=8, k=128)
    with pytest.raises(OracleError, match="shape"):
        gemm_oracle.identify("cublaslt_gemm_nt", inputs, {"d": RawTensor(np.zeros((4, 9), np.uint16), "BF16")})
