"""The pytest plugin: a session-scoped ``gemm_oracle`` fixture and ``--gemm-oracle-home``.

Installed with the package it loads by itself (the ``pytest11`` entry point); with ``PYTHONPATH`` only, load it with
``pytest -p gemm_oracle.pytest_plugin``. ``--gemm-oracle-home DIR`` points every oracle of the session (the fixture
and the module-level ``gemm_oracle.run`` / ``cases``) at the repository in DIR, over ``GEMM_ORACLE_CMD`` and
``GEMM_ORACLE_HOME``.

Parametrizing a kernel repository's tests over the oracle's fixture and edge cases of an op::

    import pytest
    import gemm_oracle
    from my_kernels import fp8_gemm_nt          # the kernel under test: returns d

    CASES = gemm_oracle.cases("fp8_gemm_nt", suite="all")        # fixtures and edge cases, inputs loaded lazily

    @pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
    def test_fp8_gemm_nt_is_bitexact(case):
        args = {name: gemm_oracle.to_torch(t, "cuda") for name, t in case.inputs.items()}
        d = fp8_gemm_nt(**args, **case.scalars)
        case.assert_bitexact({"d": d}, model="sm90_1d2d")     # BitMismatch names the first differing element

    def test_one_shape(gemm_oracle):                              # the fixture: a gemm_oracle.Oracle
        ref = gemm_oracle.run("fp8_gemm_nt", my_inputs, model="sm90_1d2d")
        ...

``gemm_oracle.cases`` runs at collection time: the oracle starts once, when the test module is imported, and the
fixture hands the tests that same client. ``@cases_param("fp8_gemm_nt", suite="all")`` (from this module) is the
``parametrize`` mark above in one call.
"""

from __future__ import annotations

from typing import Any

import pytest

from . import client

__all__ = ["cases_param", "gemm_oracle", "pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: Any) -> None:
    """Adds ``--gemm-oracle-home``."""
    group = parser.getgroup("gemm_oracle", "gemm-oracle")
    group.addoption(
        "--gemm-oracle-home",
        action="store",
        default=None,
        metavar="DIR",
        help="the gemm-oracle repository whose 'oracle serve' the tests use (over GEMM_ORACLE_CMD / GEMM_ORACLE_HOME)",
    )


def pytest_configure(config: Any) -> None:
    """Applies ``--gemm-oracle-home`` before collection (so that ``cases()`` in ``parametrize`` sees it)."""
    home = config.getoption("--gemm-oracle-home", default=None)
    if home:
        client.set_default_home(home)


@pytest.fixture(scope="session")
def gemm_oracle() -> client.Oracle:
    """The session's oracle client (the process-wide one that the module-level functions use)."""
    return client.default_oracle()


def cases_param(op: str = "*", suite: str = "fixtures", argname: str = "case") -> Any:
    """``pytest.mark.parametrize(argname, gemm_oracle.cases(op, suite), ids=<case ids>)``."""
    found = client.cases(op, suite)
    return pytest.mark.parametrize(argname, found, ids=[c.id for c in found])
