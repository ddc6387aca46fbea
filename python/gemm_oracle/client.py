"""The oracle from Python: one long-lived ``oracle serve`` process (docs/backend-protocol.md §5), started on first
use and reused by every call of the process.

::

    import gemm_oracle
    inputs = {"a": a, "sfa": sfa, "b": b, "sfb": sfb}        # numpy, ml_dtypes, RawTensor or torch tensors
    ref = gemm_oracle.run("fp8_gemm_nt", inputs, model="sm90_1d2d")                # {"d": ...}
    gemm_oracle.assert_bitexact("fp8_gemm_nt", inputs, {"d": my_kernel(**inputs)}, model="sm90_1d2d")
    for case in gemm_oracle.cases("fp8_gemm_nt", suite="all"):                     # fixtures and edge cases
        case.assert_bitexact({"d": my_kernel(**case.inputs, **case.scalars)}, model="sm90_1d2d")
    found = gemm_oracle.identify("fp8_gemm_nt", inputs, {"d": my_kernel(**inputs)})  # which rounding behaviour?
    print(found["verdict"])                 # "bit for bit: sm90_1d2d = DeepGEMM SM90 FP8 1D2D kernel ..."

How the oracle is found, first match wins:

1. an explicit ``home`` (``Oracle(home=...)``, :func:`set_default_home`, pytest's ``--gemm-oracle-home``): the
   repository root;
2. ``GEMM_ORACLE_CMD``: a full command line (``deno run -A /src/gemm-oracle/cli.ts serve``), run as is;
3. ``GEMM_ORACLE_HOME``: the repository root;
4. the repository this package sits in (found by walking up from this file: works with ``PYTHONPATH=python`` and
   editable installs).

A root is run as ``deno run -A <root>/cli.ts serve`` in ``<root>``, with ``deno`` from ``GEMM_ORACLE_DENO``, else
``PATH``, else ``npx -y deno@2.9.6``. Tensor files travel through a scratch directory removed at exit.
"""

from __future__ import annotations

import atexit
import collections
import itertools
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .bitexact import check_outputs
from .safetensors import read_safetensors, write_safetensors
from .tensors import PACKED_UE8M0_KEY, packed_ue8m0_names, to_numpy

__all__ = [
    "Case",
    "DENO_VERSION",
    "Oracle",
    "OracleError",
    "assert_bitexact",
    "cases",
    "default_oracle",
    "find_oracle_command",
    "identify",
    "run",
    "set_default_home",
]

#: The Deno release the oracle is developed with (fetched through npx when no deno is installed).
DENO_VERSION = "2.9.6"
_SERVE_PROTOCOL = "gemm-oracle-serve"
_STDERR_TAIL = 8192


class OracleError(RuntimeError):
    """The oracle could not be found or started, exited, or answered a request with an error."""


def _is_root(path: Path) -> bool:
    return (path / "cli.ts").is_file() and (path / "deno.json").is_file()


def _package_root() -> Optional[Path]:
    for parent in Path(__file__).resolve().parents:
        if _is_root(parent):
            return parent
    return None


def _deno() -> List[str]:
    explicit = os.environ.get("GEMM_ORACLE_DENO")
    if explicit:
        return [explicit]
    found = shutil.which("deno")
    if found:
        return [found]
    npx = shutil.which("npx")
    if npx:
        return [npx, "-y", f"deno@{DENO_VERSION}"]
    raise OracleError(
        f"cannot run the oracle: no deno (set GEMM_ORACLE_DENO to a deno {DENO_VERSION} executable, put deno on PATH, "
        "or install Node.js for npx), or set GEMM_ORACLE_CMD to a command that runs 'oracle serve'"
    )


def find_oracle_command(home: Union[str, os.PathLike, None] = None) -> Tuple[List[str], Optional[str]]:
    """The command line that starts ``oracle serve`` and its working directory (see the module doc for the order).

    :param home: the repository root, overriding the environment
    :returns: ``(argv, cwd)``
    :raises OracleError: when no oracle or no deno is found
    """
    if home is None:
        cmd = os.environ.get("GEMM_ORACLE_CMD")
        if cmd:
            argv = shlex.split(cmd)
            if not argv:
                raise OracleError("GEMM_ORACLE_CMD is empty")
            return argv, None
        env_home = os.environ.get("GEMM_ORACLE_HOME")
        if env_home:
            home, source = env_home, "GEMM_ORACLE_HOME"
        else:
            found = _package_root()
            if found is None:
                raise OracleError(
                    "cannot find the oracle: set GEMM_ORACLE_HOME to the gemm-oracle repository (the folder with "
                    f"cli.ts), or GEMM_ORACLE_CMD to a command that runs 'oracle serve' (package at {__file__})"
                )
            home, source = found, "the package's repository"
    else:
        source = "home"
    root = Path(home).expanduser().resolve()
    if not _is_root(root):
        raise OracleError(f"{source} {str(root)!r} is not a gemm-oracle repository (no cli.ts and deno.json there)")
    return [*_deno(), "run", "-A", str(root / "cli.ts"), "serve"], str(root)


def _jsonable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "item") and callable(v.item) and getattr(v, "ndim", None) == 0:  # numpy / torch scalars
        return v.item()
    return v


class Case:
    """One fixture or edge case of the oracle: ``id``, ``op``, ``layout``, ``suite``; ``inputs`` (tensors in numpy
    form, see :mod:`gemm_oracle.tensors`) and ``scalars`` are loaded on first use."""

    __slots__ = ("id", "op", "layout", "suite", "_oracle", "_loaded")

    def __init__(self, oracle: "Oracle", id: str, op: str, layout: str, suite: str):
        self.id, self.op, self.layout, self.suite = id, op, layout, suite
        self._oracle = oracle
        self._loaded: Optional[Tuple[Dict[str, Any], Dict[str, Any]]] = None

    def _load(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        if self._loaded is None:
            self._loaded = self._oracle._load_case(self.id)
        return self._loaded

    @property
    def inputs(self) -> Dict[str, Any]:
        """The case's input tensors by DeepGEMM's argument names."""
        return self._load()[0]

    @property
    def scalars(self) -> Dict[str, Any]:
        """The case's scalar arguments by DeepGEMM's names."""
        return self._load()[1]

    def reference(self, model: Optional[str] = None) -> Dict[str, Any]:
        """The reference's outputs for this case (``model`` None: the op's default)."""
        return self._oracle.run(self.op, self.inputs, model, **self.scalars)

    def assert_bitexact(self, actual: Mapping[str, Any], model: Optional[str] = None) -> None:
        """Raises :class:`~gemm_oracle.bitexact.BitMismatch` unless ``actual`` is the reference's output, bit for
        bit."""
        self._oracle.assert_bitexact(self.op, self.inputs, actual, model, **self.scalars)

    def __repr__(self) -> str:
        return f"Case({self.id!r}, op={self.op!r}, layout={self.layout!r})"


_LIVE: "weakref.WeakSet[Oracle]" = weakref.WeakSet()


class Oracle:
    """A client of one ``oracle serve`` process, started on first use (thread-safe; one request at a time).

    :param command: the command line (a list, or a string split like a shell's), overriding the search
    :param home: the repository root, overriding the environment (ignored when ``command`` is given)
    """

    def __init__(self, command: Union[str, Sequence[str], None] = None, *, home: Union[str, os.PathLike, None] = None):
        self._command = shlex.split(command) if isinstance(command, str) else (list(command) if command else None)
        self._home = home
        self._proc: Optional[subprocess.Popen] = None
        self._hello: Optional[Dict[str, Any]] = None
        self._stderr: "collections.deque[str]" = collections.deque()
        self._stderr_size = 0
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._scratch: Optional[str] = None
        self._drainer: Optional[threading.Thread] = None
        _LIVE.add(self)

    # -- process --------------------------------------------------------------------------------------------------

    def _drain(self, stream) -> None:
        for line in iter(stream.readline, ""):
            self._stderr.append(line)
            self._stderr_size += len(line)
            while self._stderr_size > _STDERR_TAIL and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())

    def stderr_tail(self) -> str:
        """The last few kilobytes the oracle wrote to its stderr."""
        return "".join(self._stderr)

    def start(self) -> Dict[str, Any]:
        """Starts the process (when not running) and returns its hello."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None and self._hello is not None:
                return self._hello
            self._stop()
            self._stderr.clear()
            self._stderr_size = 0
            argv, cwd = (self._command, None) if self._command else find_oracle_command(self._home)
            try:
                self._proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env={**os.environ, "NO_COLOR": "1"},  # plain stderr text for messages
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                    bufsize=1,
                )
            except OSError as e:
                raise OracleError(f"cannot start the oracle ({shlex.join(argv)}): {e}") from None
            self._drainer = threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True)
            self._drainer.start()
            hello = self._read_message()
            if hello.get("protocol") != _SERVE_PROTOCOL or hello.get("version") != 1:
                self._stop()
                raise OracleError(
                    f"{shlex.join(argv)} is not 'oracle serve' version 1: its first line was {hello!r:.200}"
                )
            self._hello = hello
            return hello

    def _read_message(self) -> Dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        while True:
            line = self._proc.stdout.readline()
            if not line:
                status = self._proc.wait()
                if self._drainer is not None:
                    self._drainer.join(timeout=2)
                tail = self.stderr_tail().strip()
                self._proc = None
                ending = f"; its stderr ends:\n{tail}" if tail else ""
                raise OracleError(f"the oracle exited (status {status}){ending}")
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict):
                return message
            sys.stderr.write(f"[oracle] {line}")  # not a protocol line: a stray print

    def _stop(self) -> None:
        proc, self._proc, self._hello = self._proc, None, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()

    def close(self) -> None:
        """Ends the process (closing its stdin) and removes the scratch directory; the next call starts anew."""
        with self._lock:
            self._stop()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    def __enter__(self) -> "Oracle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def hello(self) -> Dict[str, Any]:
        """The oracle's hello (starts it when needed)."""
        return self.start()

    def ops(self) -> Dict[str, Dict[str, Any]]:
        """Every op the oracle runs: name → inputs, outputs, scalars, models, default_model."""
        return self.start()["ops"]

    def request(self, cmd: str, **fields: Any) -> Dict[str, Any]:
        """Sends one request and returns its ``ok`` answer; raises :class:`OracleError` with the message otherwise."""
        with self._lock:
            self.start()
            assert self._proc is not None and self._proc.stdin is not None
            rid = next(self._ids)
            line = json.dumps({"id": rid, "cmd": cmd, **_jsonable(fields)})
            try:
                self._proc.stdin.write(line + "\n")
                self._proc.stdin.flush()
            except OSError:
                pass  # the process is gone: reading says how it ended
            while True:
                answer = self._read_message()
                if answer.get("id") == rid or answer.get("id") is None:
                    break
            if answer.get("status") != "ok":
                raise OracleError(str(answer.get("message", answer)))
            return answer

    def _path(self, stem: str) -> str:
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="gemm-oracle-")
        return os.path.join(self._scratch, f"{stem}-{next(self._ids)}.safetensors")

    # -- the API --------------------------------------------------------------------------------------------------

    def _reference(
        self, op: str, inputs: Mapping[str, Any], model: Optional[str], scalars: Mapping[str, Any]
    ) -> Tuple[Dict[str, Any], str]:
        with self._lock:
            in_path, out_path = self._path("in"), self._path("out")
            packed = packed_ue8m0_names(inputs)
            try:
                write_safetensors(in_path, inputs, {PACKED_UE8M0_KEY: json.dumps(packed)} if packed else None)
                try:
                    answer = self.request(
                        "run", op=op, inputs=in_path, outputs=out_path, model=model, scalars=dict(scalars)
                    )
                except OracleError as e:
                    raise OracleError(f"{op}: {e}") from None
                return read_safetensors(out_path, raw=True).tensors, answer["model"]
            finally:
                for p in (in_path, out_path):
                    if os.path.exists(p):
                        os.remove(p)

    def run(self, op: str, inputs: Mapping[str, Any], model: Optional[str] = None, **scalars: Any) -> Dict[str, Any]:
        """The reference's outputs of ``op`` on ``inputs``, in numpy form (masks such as ``logits_defined`` included).

        :param op: DeepGEMM's op name (``fp8_gemm_nt``)
        :param inputs: tensors by DeepGEMM's argument names, any accepted form (numpy, ml_dtypes, RawTensor, torch)
        :param model: the reference model (``sm90_1d2d``; None: the op's default)
        :param scalars: the op's scalar arguments (``recipe=(1, 128, 128)``)
        :returns: output name → tensor
        """
        outputs, _ = self._reference(op, inputs, model, scalars)
        return {k: to_numpy(v) for k, v in outputs.items()}

    def assert_bitexact(
        self,
        op: str,
        inputs: Mapping[str, Any],
        actual: Mapping[str, Any],
        model: Optional[str] = None,
        **scalars: Any,
    ) -> None:
        """Raises :class:`~gemm_oracle.bitexact.BitMismatch` unless every reference output of ``op`` on ``inputs`` is
        in ``actual`` with the same dtype, shape and bits (NaN equals NaN whatever the payload; only the elements the
        reference defines are compared when it returns ``sample_mask`` / ``logits_defined``).

        :param actual: the kernel's outputs by name, any accepted form (an F4 output may be packed int8 / uint8)
        """
        outputs, used = self._reference(op, inputs, model, scalars)
        check_outputs(outputs, actual, context=f"{op} ({used}): ")

    def identify(
        self, op: str, inputs: Mapping[str, Any], actual: Mapping[str, Any], *, top: int = 5, **scalars: Any
    ) -> Dict[str, Any]:
        """Which rounding behaviour produced ``actual``: searches ``op``'s model space (every kernel model, tensor-core
        profile, promotion interval, split-K factor, output rounding) on ``inputs`` (``oracle identify``).

        :param inputs: tensors by DeepGEMM's argument names, any accepted form
        :param actual: the kernel's outputs by name (``{"d": ...}``), any accepted form
        :param top: nearest variants reported when none reproduces ``actual``
        :param scalars: the op's scalar arguments
        :returns: the result as a dict: ``verdict`` (one line), ``matches`` (each with ``label``, the ``oracle run``
            flags that reproduce it, and ``behaviours``, the real kernels it is known to describe), and, when none
            matches, ``nearest`` (each with ``label``, ``mismatches``, ``compared`` and ``maps``: per output the
            mismatch map, its ``classification`` ``{"kind", "text"}``, tiles and tile grid)
        """
        with self._lock:
            in_path, actual_path = self._path("in"), self._path("actual")
            try:
                packed = packed_ue8m0_names(inputs)
                write_safetensors(in_path, inputs, {PACKED_UE8M0_KEY: json.dumps(packed)} if packed else None)
                write_safetensors(actual_path, actual)
                try:
                    answer = self.request(
                        "identify", op=op, inputs=in_path, actual=actual_path, scalars=dict(scalars), top=top
                    )
                except OracleError as e:
                    raise OracleError(f"{op}: {e}") from None
            finally:
                for p in (in_path, actual_path):
                    if os.path.exists(p):
                        os.remove(p)
        return {k: v for k, v in answer.items() if k not in ("id", "status")}

    def cases(self, op: str = "*", suite: str = "fixtures") -> List[Case]:
        """The oracle's cases of ``op`` (a glob: ``*``, ``fp8_gemm_??``) in ``suite`` (``fixtures``, ``edge`` or
        ``all``).

        Inputs load lazily, on first use of ``case.inputs`` / ``case.scalars``.
        """
        answer = self.request("cases", op=op, suite=suite)
        return [Case(self, c["id"], c["op"], c["layout"], c["suite"]) for c in answer["cases"]]

    def case(self, id: str) -> Case:
        """One case by id (``fixtures/fp8_gemm_nt_m8_n64_k256_1d1d_c``, ``edge/fp8_nt_m1``), its inputs loaded."""
        with self._lock:
            tensors, scalars, answer = self._fetch_case(id)
        c = Case(self, answer["case"], answer["op"], answer["layout"], answer["suite"])
        c._loaded = (tensors, scalars)
        return c

    def _fetch_case(self, id: str) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, Any]]:
        path = self._path("case")
        try:
            answer = self.request("case", case=id, inputs=path)
            tensors = {k: to_numpy(v) for k, v in read_safetensors(path, raw=True).tensors.items()}
        finally:
            if os.path.exists(path):
                os.remove(path)
        return tensors, dict(answer.get("scalars") or {}), answer

    def _load_case(self, id: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        with self._lock:
            tensors, scalars, _ = self._fetch_case(id)
        return tensors, scalars


_default: Optional[Oracle] = None
_default_home: Union[str, os.PathLike, None] = None
_default_lock = threading.Lock()


def set_default_home(home: Union[str, os.PathLike, None]) -> None:
    """Points the module-level functions at the oracle in ``home`` (a repository root; None: the environment)."""
    global _default, _default_home
    with _default_lock:
        if _default is not None:
            _default.close()
            _default = None
        _default_home = home


def default_oracle() -> Oracle:
    """The process's shared :class:`Oracle` (what :func:`run`, :func:`assert_bitexact` and :func:`cases` use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Oracle(home=_default_home)
        return _default


def run(op: str, inputs: Mapping[str, Any], model: Optional[str] = None, **scalars: Any) -> Dict[str, Any]:
    """The reference's outputs of ``op`` on ``inputs`` (see :meth:`Oracle.run`)."""
    return default_oracle().run(op, inputs, model, **scalars)


def assert_bitexact(
    op: str, inputs: Mapping[str, Any], actual: Mapping[str, Any], model: Optional[str] = None, **scalars: Any
) -> None:
    """Raises ``BitMismatch`` unless ``actual`` is the reference's output, bit for bit (see
    :meth:`Oracle.assert_bitexact`)."""
    default_oracle().assert_bitexact(op, inputs, actual, model, **scalars)


def cases(op: str = "*", suite: str = "fixtures") -> List[Case]:
    """The oracle's fixture / edge cases of ``op`` (see :meth:`Oracle.cases`)."""
    return default_oracle().cases(op, suite)


def identify(
    op: str, inputs: Mapping[str, Any], actual: Mapping[str, Any], *, top: int = 5, **scalars: Any
) -> Dict[str, Any]:
    """Which rounding behaviour produced ``actual`` (see :meth:`Oracle.identify`)."""
    return default_oracle().identify(op, inputs, actual, top=top, **scalars)


@atexit.register
def _close_all() -> None:
    for oracle in list(_LIVE):
        oracle.close()
