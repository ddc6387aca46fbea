"""Shared fixtures of the package's tests: the package on sys.path, one oracle for the session, the repository."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

from gemm_oracle.client import Oracle, OracleError, find_oracle_command  # noqa: E402


@pytest.fixture(scope="session")
def oracle():
    """An oracle client for the session (skips, with the reason, where no oracle can be started)."""
    try:
        find_oracle_command(REPO)
    except OracleError as e:
        pytest.skip(f"no oracle: {e}")
    with Oracle(home=REPO) as o:
        yield o


@pytest.fixture
def child_env():
    """The environment for Python children: this package importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), *filter(None, [env.get("PYTHONPATH")])])
    return env
