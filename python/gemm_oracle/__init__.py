"""gemm_oracle: the bit-exact oracle of DeepGEMM-family GEMM kernels, from Python.

* :func:`serve`: a Python kernel as an ``oracle verify`` backend (docs/backend-protocol.md §1-3);
* :func:`run`, :func:`assert_bitexact`, :func:`cases`: the reference, through one long-lived ``oracle serve``;
* :func:`identify`: which rounding behaviour (kernel model variant) a kernel's output shows, or where it departs;
* :mod:`gemm_oracle.safetensors` and :mod:`gemm_oracle.tensors`: files and tensors with numpy only (ml_dtypes and
  torch are used when present, never required);
* :mod:`gemm_oracle.pytest_plugin`: a ``gemm_oracle`` fixture for kernel repositories' tests.

>>> import gemm_oracle
>>> issubclass(gemm_oracle.BitMismatch, AssertionError), issubclass(gemm_oracle.Unsupported, NotImplementedError)
(True, True)
"""

from .bitexact import BitMismatch
from .client import Case, Oracle, OracleError, assert_bitexact, cases, identify, run
from .safetensors import SafetensorsError, read_safetensors, write_safetensors
from .serve import Unsupported, serve
from .tensors import RawTensor, packed_fp4, to_numpy, to_torch

__version__ = "0.1.0"

__all__ = [
    "BitMismatch",
    "Case",
    "Oracle",
    "OracleError",
    "RawTensor",
    "SafetensorsError",
    "Unsupported",
    "assert_bitexact",
    "cases",
    "identify",
    "packed_fp4",
    "read_safetensors",
    "run",
    "serve",
    "to_numpy",
    "to_torch",
    "write_safetensors",
]
