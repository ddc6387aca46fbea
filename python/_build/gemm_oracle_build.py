"""An in-tree PEP 517 build backend for the gemm-oracle Python package, standard library only.

Why not setuptools: `pip install --no-build-isolation ./python` must work offline on a machine with python3,
numpy, setuptools and pytest alone. setuptools before 70.1 builds wheels only through the separate `wheel`
package, which such a machine may lack (python3.11 with setuptools 65.5.0 here), and pip 23.1 and later no longer
fall back to `setup.py install`. A wheel is a zip of the package, its metadata and a RECORD of hashes
(PEP 427), which this module writes directly. PEP 660's `build_editable` gives `pip install -e` a `.pth` file
pointing at the sources.

The hooks: get_requires_for_build_wheel, get_requires_for_build_editable, prepare_metadata_for_build_wheel,
build_wheel, build_editable, build_sdist.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "gemm_oracle"
DIST = "gemm_oracle"
VERSION = "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIR = os.path.join(ROOT, NAME)
TAG = "py3-none-any"

METADATA = f"""Metadata-Version: 2.1
Name: gemm-oracle
Version: {VERSION}
Summary: Bit-exact oracle of DeepGEMM-family low-precision GEMM kernels: adapters, reference runs, pytest plugin
Requires-Python: >=3.9
Requires-Dist: numpy
Provides-Extra: torch
Requires-Dist: torch; extra == "torch"
Provides-Extra: ml-dtypes
Requires-Dist: ml_dtypes; extra == "ml-dtypes"
"""

# Named as the module, so that `pytest -p gemm_oracle.pytest_plugin` is a no-op when the package is installed.
ENTRY_POINTS = "[pytest11]\ngemm_oracle.pytest_plugin = gemm_oracle.pytest_plugin\n"

WHEEL = f"Wheel-Version: 1.0\nGenerator: gemm_oracle_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _readme() -> str:
    try:
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _metadata() -> str:
    readme = _readme()
    return METADATA + ("Description-Content-Type: text/markdown\n\n" + readme if readme else "")


def _dist_info_files() -> dict[str, bytes]:
    di = f"{DIST}-{VERSION}.dist-info"
    return {
        f"{di}/METADATA": _metadata().encode(),
        f"{di}/WHEEL": WHEEL.encode(),
        f"{di}/entry_points.txt": ENTRY_POINTS.encode(),
        f"{di}/top_level.txt": f"{NAME}\n".encode(),
    }


def _package_files() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name in sorted(os.listdir(PACKAGE_DIR)):
        if name.endswith(".py"):
            with open(os.path.join(PACKAGE_DIR, name), "rb") as f:
                files[f"{NAME}/{name}"] = f.read()
    return files


def _hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: dict[str, bytes]) -> str:
    """Writes a wheel of `files` (archive path -> bytes) plus its RECORD; returns the wheel's file name."""
    name = f"{DIST}-{VERSION}-{TAG}.whl"
    record_path = f"{DIST}-{VERSION}.dist-info/RECORD"
    record = "".join(f"{path},{_hash(data)}\n" for path, data in files.items()) + f"{record_path},,\n"
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in [*files.items(), (record_path, record.encode())]:
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))  # reproducible
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di = f"{DIST}-{VERSION}.dist-info"
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for path, data in _dist_info_files().items():
        with open(os.path.join(metadata_directory, path), "wb") as f:
            f.write(data)
    return di


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {**_package_files(), **_dist_info_files()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth line puts the source folder on sys.path: edits take effect without reinstalling.
    pth = {f"__editable__.{DIST}.pth": (ROOT + "\n").encode()}
    return _write_wheel(wheel_directory, {**pth, **_dist_info_files()})


def build_sdist(sdist_directory, config_settings=None):
    base = f"{DIST}-{VERSION}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "_build/gemm_oracle_build.py",
                    *[f"{NAME}/{n}" for n in sorted(os.listdir(PACKAGE_DIR)) if n.endswith(".py")]]:
            path = os.path.join(ROOT, rel)
            if os.path.exists(path):
                tar.add(path, arcname=f"{base}/{rel}")
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        tar.addfile(info, io.BytesIO(pkg_info))
    return name
