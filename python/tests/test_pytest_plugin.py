"""The pytest plugin, in a child pytest: the fixture, --gemm-oracle-home, and tests parametrized over cases."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import REPO
from gemm_oracle.client import OracleError, find_oracle_command

KERNEL_TESTS = textwrap.dedent(
    '''
    import pytest
    import gemm_oracle as go
    from gemm_oracle.pytest_plugin import cases_param

    @pytest.mark.parametrize("case", go.cases("fp8_gemm_tt", suite="all"), ids=lambda c: c.id)
    def test_a_kernel_equal_to_the_reference_passes(case):
        case.assert_bitexact(case.reference())

    @cases_param("fp8_gemm_nn", suite="edge")
    def test_the_fixture_is_the_shared_oracle(case, gemm_oracle):
        assert isinstance(gemm_oracle, go.Oracle) and gemm_oracle is go.client.default_oracle()
        assert case.op == "fp8_gemm_nn"
    '''
)


def child_pytest(tmp_path, env, *args):
    (tmp_path / "test_kernel.py").write_text(KERNEL_TESTS)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "gemm_oracle.pytest_plugin", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


def test_kernel_tests_parametrized_over_the_oracles_cases(tmp_path, child_env):
    try:
        find_oracle_command(REPO)
    except OracleError as e:
        pytest.skip(f"no oracle: {e}")
    child_env.pop("GEMM_ORACLE_CMD", None)
    r = child_pytest(tmp_path, child_env, "--gemm-oracle-home", str(REPO), "-vv", "test_kernel.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_a_kernel_equal_to_the_reference_passes[fixtures/fp8_gemm_tt" in r.stdout
    assert "test_a_kernel_equal_to_the_reference_passes[edge/fp8_tt] PASSED" in r.stdout
    assert "test_the_fixture_is_the_shared_oracle[edge/fp8_nn] PASSED" in r.stdout


def test_gemm_oracle_home_overrides_the_root(tmp_path, child_env):
    r = child_pytest(tmp_path, child_env, "--gemm-oracle-home", str(tmp_path), "test_kernel.py")
    assert r.returncode != 0
    assert "is not a gemm-oracle repository" in r.stdout + r.stderr
    r = child_pytest(tmp_path, child_env, "--help")
    assert "--gemm-oracle-home=DIR" in r.stdout
