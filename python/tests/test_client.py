"""The client against the real `oracle serve`: run, assert_bitexact and its messages, cases, errors, discovery."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pytest

import gemm_oracle
from conftest import REPO
from gemm_oracle.bitexact import BitMismatch, check_outputs
from gemm_oracle.client import Oracle, OracleError, find_oracle_command
from gemm_oracle.safetensors import read_safetensors
from gemm_oracle.tensors import RawTensor, as_raw


def small_gemm():
    """A = 1 (e4m3 0x38), B = 0.5 (0x30), K = 32, unit scales: every element of D is 16 (bf16 0x4180)."""
    return {
        "a": RawTensor(np.full((4, 32), 0x38, np.uint8), "F8_E4M3"),
        "b": RawTensor(np.full((8, 32), 0x30, np.uint8), "F8_E4M3"),
        "sfa": np.ones((4, 1), np.float32),
        "sfb": np.ones((1, 1), np.float32),
    }


def random_gemm(m=8, n=64, k=256, seed=3):
    rng = np.random.default_rng(seed)

    def codes(*shape):  # finite e4m3 values of both signs (0x7F / 0xFF are NaN)
        magnitude = rng.integers(0, 0x7F, shape, dtype=np.uint8)
        return RawTensor(magnitude | (rng.integers(0, 2, shape, dtype=np.uint8) << 7), "F8_E4M3")

    return {"a": codes(m, k), "b": codes(n, k), "sfa": rng.uniform(0.5, 2, (m, k // 128)).astype(np.float32),
            "sfb": rng.uniform(0.5, 2, ((n + 127) // 128, k // 128)).astype(np.float32)}


def bits(t):
    return as_raw(t).bits


def test_run_computes_the_reference(oracle):
    out = oracle.run("fp8_gemm_nt", small_gemm(), model="sm90_1d2d")
    assert list(out) == ["d"]
    d = as_raw(out["d"])
    assert d.dtype == "BF16" and d.shape == (4, 8) and (d.bits == 0x4180).all()
    assert oracle.hello["ops"]["fp8_gemm_nt"]["default_model"] == "sm90_1d2d"


def test_assert_bitexact_passes_on_the_reference_and_names_a_flipped_bit(oracle):
    inputs = random_gemm()
    ref = oracle.run("fp8_gemm_nt", inputs, "sm90_1d2d")
    oracle.assert_bitexact("fp8_gemm_nt", inputs, ref, model="sm90_1d2d")
    d = as_raw(ref["d"]).copy()
    d.bits[5, 17] ^= 0x0001
    with pytest.raises(BitMismatch) as info:
        oracle.assert_bitexact("fp8_gemm_nt", inputs, {"d": d}, model="sm90_1d2d")
    e = info.value
    want, got = as_raw(ref["d"]).bits[5, 17], d.bits[5, 17]
    assert isinstance(e, AssertionError)
    assert (e.output, e.mismatches, e.elements, e.index) == ("d", 1, 8 * 64, (5, 17))
    message = str(e)
    assert message.startswith("fp8_gemm_nt (sm90_1d2d): output 'd': 1/512 elements differ; first at [5, 17]: ")
    assert f"expected {e.expected[0]} (0x{int(want):04x}), got {e.actual[0]} (0x{int(got):04x})" in message
    assert float(e.expected[0]) != float(e.actual[0])


def test_assert_bitexact_checks_dtype_shape_and_presence(oracle):
    inputs = small_gemm()
    with pytest.raises(BitMismatch, match="output 'd' has dtype F32; the reference's is BF16"):
        oracle.assert_bitexact("fp8_gemm_nt", inputs, {"d": np.full((4, 8), 16, np.float32)})
    with pytest.raises(BitMismatch, match=r"output 'd' has shape \[8, 4\]; the reference's is \[4, 8\]"):
        oracle.assert_bitexact("fp8_gemm_nt", inputs, {"d": RawTensor(np.zeros((8, 4), np.uint16), "BF16")})
    with pytest.raises(BitMismatch, match=r"no output 'd' to compare \(given: out\)"):
        oracle.assert_bitexact("fp8_gemm_nt", inputs, {"out": np.zeros(1, np.float32)})


def test_nan_of_any_payload_equals_nan_and_signed_zeros_differ():
    want = {"y": np.array([np.nan, 0.0, 1.0], np.float32)}
    other_nan = np.array([0xFFC00123, 0, 0x3F800000], np.uint32).view(np.float32)
    check_outputs(want, {"y": other_nan})
    with pytest.raises(BitMismatch, match=r"first at \[1\]: expected 0.0 \(0x00000000\), got -0.0 \(0x80000000\)"):
        check_outputs(want, {"y": np.array([np.nan, -0.0, 1.0], np.float32)})
    with pytest.raises(BitMismatch, match=r"expected nan \(0x7fc00000\), got 1.0"):
        check_outputs(want, {"y": np.array([1.0, 0.0, 1.0], np.float32)})


def test_only_the_elements_the_reference_defines_are_compared(oracle):
    case = next(c for c in oracle.cases("fp8_mqa_logits", "edge") if "compressed" in c.id)
    ref = case.reference()
    defined = ref["logits_defined"] != 0
    assert 0 < defined.sum() < defined.size
    logits = ref["logits"].copy()
    logits[~defined] = 12345.0  # garbage where DeepGEMM's contract leaves the output undefined
    case.assert_bitexact({"logits": logits})
    logits[np.argwhere(defined)[0][0], np.argwhere(defined)[0][1]] += 1
    with pytest.raises(BitMismatch, match=rf"output 'logits': 1/{int(defined.sum())} elements differ"):
        case.assert_bitexact({"logits": logits})


def test_cases_lists_and_loads_fixtures(oracle):
    fixtures = oracle.cases("fp8_gemm_nt")
    assert fixtures and all(c.id.startswith("fixtures/") and c.op == "fp8_gemm_nt" for c in fixtures)
    assert all(c.suite == "fixtures" for c in fixtures)
    edge = oracle.cases("fp8_gemm_nt", suite="edge")
    assert edge and all(c.id.startswith("edge/") for c in edge)
    assert [c.id for c in oracle.cases("fp8_gemm_nt", suite="all")] == [c.id for c in fixtures + edge]
    assert {c.op for c in oracle.cases("fp8_gemm_??", suite="all")} == {"fp8_gemm_nt", "fp8_gemm_nn", "fp8_gemm_tn",
                                                                       "fp8_gemm_tt"}
    case = next(c for c in fixtures if c.id == "fixtures/fp8_gemm_nt_m8_n64_k256_1d1d_c")
    assert set(case.inputs) == {"a", "sfa", "b", "sfb", "c"}
    assert as_raw(case.inputs["a"]).dtype == "F8_E4M3" and case.inputs["c"].dtype == np.float32
    # The reference on the loaded inputs reproduces the stored fixture's output, bit for bit.
    stored = read_safetensors(REPO / "fixtures" / "fp8_gemm_nt" / "fp8_gemm_nt_m8_n64_k256_1d1d_c.safetensors")
    case.assert_bitexact({"d": stored.tensors["sm90_1d1d/d"]}, model="sm90_1d1d")
    one = oracle.case("edge/fp8_nt_m7")
    assert one.op == "fp8_gemm_nt" and as_raw(one.inputs["a"]).shape == (7, 256) and one.scalars == {}


def test_errors_of_the_oracle_are_oracle_errors_and_the_process_survives(oracle):
    with pytest.raises(OracleError, match='nope: unknown op "nope"'):
        oracle.run("nope", small_gemm())
    with pytest.raises(OracleError, match='fp8_gemm_nt has no scalar "alpah"'):
        oracle.run("fp8_gemm_nt", small_gemm(), alpah=1)
    with pytest.raises(OracleError, match="unusable input"):
        oracle.run("bf16_gemm_nt", small_gemm())
    with pytest.raises(OracleError, match='unknown suite "deepseek-v3"'):
        oracle.cases("*", suite="deepseek-v3")
    with pytest.raises(OracleError, match='no case "fixtures/none"'):
        oracle.case("fixtures/none")
    assert as_raw(oracle.run("fp8_gemm_nt", small_gemm())["d"]).shape == (4, 8)


def test_a_dead_oracle_is_started_again_and_close_removes_the_scratch_dir():
    try:
        find_oracle_command(REPO)
    except OracleError as e:
        pytest.skip(f"no oracle: {e}")
    o = Oracle(home=REPO)
    o.run("fp8_gemm_nt", small_gemm())
    scratch = o._scratch
    assert scratch and os.path.isdir(scratch) and os.listdir(scratch) == []
    o._proc.kill()
    o._proc.wait()
    assert as_raw(o.run("fp8_gemm_nt", small_gemm())["d"]).shape == (4, 8)
    o.close()
    assert not os.path.exists(scratch)


def test_module_level_functions_share_one_oracle():
    try:
        find_oracle_command()
    except OracleError as e:
        pytest.skip(f"no oracle: {e}")
    out = gemm_oracle.run("fp8_gemm_nt", small_gemm())
    gemm_oracle.assert_bitexact("fp8_gemm_nt", small_gemm(), out)
    assert gemm_oracle.cases("fp8_gemm_tt", "edge")[0].id == "edge/fp8_tt"
    assert gemm_oracle.client.default_oracle() is gemm_oracle.client.default_oracle()


def test_torch_inputs_and_outputs(oracle):
    torch = pytest.importorskip("torch")
    inputs = {k: gemm_oracle.to_torch(v) for k, v in random_gemm(seed=5).items()}
    ref = oracle.run("fp8_gemm_nt", inputs)
    d = gemm_oracle.to_torch(ref["d"])
    assert d.dtype == torch.bfloat16
    oracle.assert_bitexact("fp8_gemm_nt", inputs, {"d": d.T.contiguous().T})  # any layout


def test_finding_the_oracle(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMM_ORACLE_CMD", "my-oracle --serve 'a b'")
    assert find_oracle_command() == (["my-oracle", "--serve", "a b"], None)
    monkeypatch.setenv("GEMM_ORACLE_DENO", "/opt/deno")
    argv, cwd = find_oracle_command(REPO)  # an explicit home wins over GEMM_ORACLE_CMD
    assert argv == ["/opt/deno", "run", "-A", str(REPO / "cli.ts"), "serve"] and cwd == str(REPO)
    monkeypatch.delenv("GEMM_ORACLE_CMD")
    monkeypatch.setenv("GEMM_ORACLE_HOME", str(tmp_path))
    with pytest.raises(OracleError, match="GEMM_ORACLE_HOME .* is not a gemm-oracle repository"):
        find_oracle_command()
    monkeypatch.delenv("GEMM_ORACLE_HOME")
    assert find_oracle_command()[1] == str(REPO)  # the repository this package sits in
    monkeypatch.delenv("GEMM_ORACLE_DENO")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OracleError, match="no deno"):
        find_oracle_command(REPO)


def test_a_command_that_is_not_the_oracle_is_refused():
    with pytest.raises(OracleError, match="is not 'oracle serve' version 1"):
        Oracle([sys.executable, "-c", "print('{\"hello\": 1}')"]).start()
    with pytest.raises(OracleError, match=r"the oracle exited \(status 3\); its stderr ends:\nboom"):
        Oracle([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"]).start()
    with pytest.raises(OracleError, match="cannot start the oracle"):
        Oracle([shutil.which("true") + "-no-such-program"]).start()
