"""Shared start-up of the adapters in this folder (loaded by file path, never imported by name).

Every adapter is run as `python3 adapters/NAME.py` from the repository root. Python then puts `adapters/` first on
`sys.path`, where `adapters/torch.py` would shadow the real PyTorch for every later `import torch` (DeepGEMM's own
included), so each adapter drops its folder from `sys.path` before it imports anything else, and loads this file
with `load_common()` below.

This module never imports torch or a kernel library: `--declare` (the hello as JSON, for tests and reviews) and the
"cannot import" exit must work on a CPU-only machine.
"""

import json
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON_PACKAGE_DIR = os.path.join(REPO_ROOT, "python")


def hello(name, declared, info=None):
    """The hello line an adapter sends (protocol version 1), without starting the serve loop."""
    message = {"protocol": "gemm-oracle-backend", "version": 1, "name": name, "ops": dict(declared)}
    if info:
        message["info"] = info
    return message


def print_declaration(name, declared, info=None):
    """`--declare`: the hello as one JSON line on stdout, then exit 0."""
    sys.stdout.write(json.dumps(hello(name, declared, info), sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


def unusable(script, what, error, hint):
    """Exit status 2 with a message naming what is missing (protocol: an unusable backend)."""
    sys.stderr.write(f"{script}: {what} is not importable here ({error.__class__.__name__}: {error}); {hint}\n")
    sys.stderr.flush()
    return 2


def import_package(script):
    """The `gemm_oracle` Python package (python/ of this repository), or None after printing why."""
    if PYTHON_PACKAGE_DIR not in sys.path:
        sys.path.insert(0, PYTHON_PACKAGE_DIR)
    try:
        import gemm_oracle  # noqa: PLC0415
    except ImportError as e:
        unusable(script, "the gemm_oracle package (python/gemm_oracle)", e,
                 "run from the repository root, or put its python/ folder on PYTHONPATH")
        return None
    return gemm_oracle
