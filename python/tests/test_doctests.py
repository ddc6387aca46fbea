"""The examples in the package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["formats", "tensors", "safetensors", "bitexact", "serve", "client", "pytest_plugin"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"gemm_oracle.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of gemm_oracle.{name} failed"


def test_package_docstring():
    import gemm_oracle

    assert doctest.testmod(gemm_oracle).failed == 0
