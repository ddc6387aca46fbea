"""The adapter side of the backend protocol (docs/backend-protocol.md §1-3): a Python kernel as an oracle backend.

``serve({"fp8_gemm_nt": my_fn}, models="sm90_1d2d", tensors="torch")`` is a whole adapter. It writes the hello,
then for each request: reads the input file, builds the keyword arguments (the inputs; every output of ``out``,
pre-allocated as zeros of its dtype and shape unless it is also an input, which it then starts as; the scalars),
passes the callable only the names its signature accepts (all of them when it takes ``**kwargs``), converts the
tensors to numpy form or to torch tensors on ``device``, and calls it.

The callable returns a dict of outputs (numpy / ml_dtypes arrays, RawTensor or torch tensors), a single tensor when
``out`` has one output, or None when it filled the pre-allocated outputs in place. Every output of ``out`` must then
be present with exactly its dtype and shape, else the answer is an error naming it. Raising
:class:`Unsupported` (any ``NotImplementedError``) answers ``unsupported``: the case is a SKIP. Any other exception
answers ``error`` with ``Type: message``, and ``restart: true`` when it looks like a CUDA fault, so that the oracle
starts a fresh process. The traceback goes to stderr.

While serving, protocol lines go to the stream ``sys.stdout`` was when :func:`serve` started (normally file
descriptor 1), and both ``sys.stdout`` and file descriptor 1 point at stderr, so prints from Python or C cannot
corrupt the protocol. :func:`serve` returns at the end of input
(the adapter script then exits 0).

>>> import numpy as np
>>> def scale(x, d, factor=2):
...     d[...] = x * factor
>>> host = Adapter({"demo_scale": (scale, "exact")})
>>> host.hello()["ops"]
{'demo_scale': 'exact'}
>>> host.handle({"id": 1, "op": "other"})
{'id': 1, 'status': 'unsupported', 'message': 'python does not declare other'}
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import traceback
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from .safetensors import read_safetensors, write_safetensors
from .tensors import DTYPES, PACKED_UE8M0_KEY, as_raw, is_tensor, packed_ue8m0_names, to_numpy, to_torch, zeros

__all__ = ["Adapter", "Unsupported", "serve", "BACKEND_PROTOCOL", "BACKEND_VERSION"]

#: The hello's ``protocol``.
BACKEND_PROTOCOL = "gemm-oracle-backend"
#: The protocol version spoken.
BACKEND_VERSION = 1

OpEntry = Union[Callable[..., Any], Tuple[Callable[..., Any], str]]


class Unsupported(NotImplementedError):
    """Raised by an op to say "a valid request this backend does not implement" (a layout, a model, a dtype): the
    oracle reports the case as SKIP with the message. Any ``NotImplementedError`` counts the same."""


class _RequestError(Exception):
    """A request that cannot be served (a protocol fault or an invalid output): an error answer, no restart."""


def _looks_like_cuda_fault(e: BaseException) -> bool:
    kind = type(e)
    text = f"{kind.__name__}: {e}"
    return (
        (kind.__module__ or "").startswith("torch.cuda")
        or kind.__name__ in ("AcceleratorError", "CudaError", "CUDARuntimeError")
        or any(s in text for s in ("CUDA error", "illegal memory access", "device-side assert", "CUDA_ERROR_"))
    )


def _accepted_names(fn: Callable[..., Any]) -> Optional[frozenset]:
    """The keyword names ``fn`` accepts, or None when it takes ``**kwargs`` (or has no readable signature)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names = set()
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            names.add(p.name)
    return frozenset(names)


class Adapter:
    """The request handler :func:`serve` runs: the hello and one answer per request (usable without the I/O loop).

    Arguments as for :func:`serve`.
    """

    def __init__(
        self,
        ops: Mapping[str, OpEntry],
        *,
        name: str = "python",
        models: Union[str, Mapping[str, str], None] = None,
        tensors: str = "numpy",
        device: Any = "cuda",
        info: Optional[Mapping[str, Any]] = None,
    ):
        if not isinstance(ops, Mapping) or not ops:
            raise ValueError("ops must be a non-empty dict: op name -> callable, or -> (callable, model)")
        if tensors not in ("numpy", "torch"):
            raise ValueError(f"tensors must be 'numpy' or 'torch', got {tensors!r}")
        if isinstance(models, Mapping):
            stray = sorted(set(models) - set(ops))
            if stray:
                raise ValueError(f"models names ops that ops does not have: {', '.join(stray)}")
        elif models is not None and not isinstance(models, str):
            raise ValueError(f"models must be a str or a dict op -> model, got {type(models).__name__}")
        self.functions: Dict[str, Callable[..., Any]] = {}
        self.models: Dict[str, str] = {}
        missing = []
        for op, entry in ops.items():
            fn, model = entry if isinstance(entry, tuple) else (entry, None)
            if not callable(fn):
                raise ValueError(f"ops[{op!r}] must be a callable or (callable, model), got {type(fn).__name__}")
            if model is None:
                model = models.get(op) if isinstance(models, Mapping) else models
            if not isinstance(model, str) or not model:
                missing.append(op)
                continue
            self.functions[op] = fn
            self.models[op] = model
        if missing:
            raise ValueError(
                f"no model for {', '.join(missing)}: every op needs the reference model it matches "
                "(models='sm90_1d2d', models={op: model}, or ops={op: (fn, model)}; oracle run OP --help lists them)"
            )
        self.name = name
        self.tensors = tensors
        self.device = device
        self.info = dict(info) if info is not None else None

    def hello(self) -> Dict[str, Any]:
        """The hello line's object."""
        hello: Dict[str, Any] = {
            "protocol": BACKEND_PROTOCOL,
            "version": BACKEND_VERSION,
            "name": self.name,
            "ops": dict(self.models),
        }
        if self.info is not None:
            hello["info"] = self.info
        return hello

    def handle_line(self, line: Union[str, bytes]) -> Dict[str, Any]:
        """Answers one request line (never raises)."""
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            request = json.loads(text)
        except (UnicodeDecodeError, ValueError) as e:
            return {"id": None, "status": "error", "message": f"the request line is not JSON: {e}"}
        return self.handle(request)

    def handle(self, request: Any) -> Dict[str, Any]:
        """Answers one parsed request (never raises, except for KeyboardInterrupt / SystemExit)."""
        if not isinstance(request, dict):
            return {"id": None, "status": "error", "message": f"a request must be a JSON object, got {request!r:.80}"}
        rid = request.get("id")
        if isinstance(rid, bool) or not isinstance(rid, int) or rid < 1:
            return {"id": None, "status": "error", "message": f'"id" must be a positive integer, got {rid!r:.40}'}
        try:
            return self._run(rid, request)
        except _RequestError as e:
            return {"id": rid, "status": "error", "message": str(e)}
        except NotImplementedError as e:
            return {"id": rid, "status": "unsupported", "message": str(e) or type(e).__name__}
        except Exception as e:  # the kernel's own failure: reported, never fatal
            traceback.print_exc(file=sys.stderr)
            answer = {"id": rid, "status": "error", "message": f"{type(e).__name__}: {e}".strip()}
            if _looks_like_cuda_fault(e):
                answer["restart"] = True
            return answer

    def _field(self, request: Mapping[str, Any], key: str, kind: type) -> Any:
        v = request.get(key)
        if not isinstance(v, kind):
            raise _RequestError(f'the request\'s "{key}" must be {"an object" if kind is dict else "a string"}')
        return v

    def _convert(self, raw: Any) -> Any:
        return to_torch(raw, self.device) if self.tensors == "torch" else to_numpy(raw)

    def _run(self, rid: int, request: Mapping[str, Any]) -> Dict[str, Any]:
        op = self._field(request, "op", str)
        if op not in self.functions:
            return {"id": rid, "status": "unsupported", "message": f"{self.name} does not declare {op}"}
        in_path = self._field(request, "inputs", str)
        out_path = self._field(request, "outputs", str)
        scalars = request.get("scalars") or {}
        if not isinstance(scalars, dict):
            raise _RequestError('the request\'s "scalars" must be an object')
        out = self._field(request, "out", dict)
        specs = {}
        for name, spec in out.items():
            dtype = spec.get("dtype") if isinstance(spec, dict) else None
            shape = spec.get("shape") if isinstance(spec, dict) else None
            if dtype not in DTYPES or not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
            ):
                raise _RequestError(f'out["{name}"] must be {{"dtype": a safetensors dtype, "shape": [sizes]}}')
            specs[name] = (dtype, tuple(shape))

        inputs = read_safetensors(in_path, raw=True).tensors
        kwargs: Dict[str, Any] = {name: self._convert(t) for name, t in inputs.items()}
        for name, (dtype, shape) in specs.items():
            if name not in kwargs:
                kwargs[name] = self._convert(zeros(dtype, shape))
        kwargs.update(scalars)
        accepted = _accepted_names(self.functions[op])
        call_args = kwargs if accepted is None else {k: v for k, v in kwargs.items() if k in accepted}

        result = self.functions[op](**call_args)
        if self.tensors == "torch":
            _synchronize(self.device)

        if result is None:
            produced = {name: kwargs[name] for name in specs}
        elif isinstance(result, Mapping):
            produced = result
        elif is_tensor(result) and len(specs) == 1:
            produced = {next(iter(specs)): result}
        else:
            raise _RequestError(
                f"{op} returned {type(result).__name__}; expected a dict of outputs, None (outputs filled in place)"
                + (", or the one output's tensor" if len(specs) == 1 else "")
            )
        written = {}
        for name, (dtype, shape) in specs.items():
            if name not in produced:
                raise _RequestError(f"{op} returned no output '{name}' (returned: {', '.join(produced) or 'nothing'})")
            try:
                raw = as_raw(produced[name], expect=(dtype, shape))
            except (TypeError, ValueError) as e:
                raise _RequestError(f"output '{name}': {e}") from None
            if raw.dtype != dtype:
                raise _RequestError(f"output '{name}' has dtype {raw.dtype}; the oracle expects {dtype}")
            if raw.shape != shape:
                raise _RequestError(f"output '{name}' has shape {list(raw.shape)}; the oracle expects {list(shape)}")
            written[name] = raw
        packed = packed_ue8m0_names(written)
        write_safetensors(out_path, written, {PACKED_UE8M0_KEY: json.dumps(packed)} if packed else None)
        return {"id": rid, "status": "ok"}


def _synchronize(device: Any) -> None:
    """Waits for the device so that an asynchronous CUDA fault surfaces inside the request that caused it."""
    torch = sys.modules.get("torch")
    if torch is not None and str(device).startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize(device)


def serve(
    ops: Mapping[str, OpEntry],
    *,
    name: str = "python",
    models: Union[str, Mapping[str, str], None] = None,
    tensors: str = "numpy",
    device: Any = "cuda",
    info: Optional[Mapping[str, Any]] = None,
) -> None:
    """Serves ``ops`` to the oracle over stdin / stdout until the end of input (docs/backend-protocol.md §1-3).

    :param ops: DeepGEMM op name → callable, or → ``(callable, model)``
    :param name: the backend's name in reports
    :param models: the reference model every op matches (a str), or op → model; each op needs one
    :param tensors: ``"numpy"`` (numpy / ml_dtypes arrays, or RawTensor) or ``"torch"`` (tensors on ``device``)
    :param device: the torch device for ``tensors="torch"``
    :param info: free-form facts for the report (library version, device name, ...)
    :raises ValueError: for an op without a model or a bad argument (before the hello is written)
    """
    adapter = Adapter(ops, name=name, models=models, tensors=tensors, device=device, info=info)
    sys.stdout.flush()
    # The protocol goes where sys.stdout points now: fd 1, or the private stream an adapter already set up (its fd 1
    # then points at stderr). fd 1 itself is pointed at stderr while serving, so C prints cannot reach the protocol.
    try:
        out_fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        out_fd = 1
    protocol = os.fdopen(os.dup(out_fd), "w", encoding="utf-8", newline="\n")
    saved_fd = os.dup(1) if out_fd == 1 else None
    saved_stdout = sys.stdout
    if saved_fd is not None:
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:

        def send(obj: Mapping[str, Any]) -> None:
            protocol.write(json.dumps(obj) + "\n")
            protocol.flush()

        send(adapter.hello())
        for line in sys.stdin.buffer:
            if line.strip():
                send(adapter.handle_line(line))
    finally:
        sys.stdout = saved_stdout
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)
        protocol.close()
