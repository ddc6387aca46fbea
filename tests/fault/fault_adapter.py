#!/usr/bin/env python3
"""A command backend (`verify --backend 'cmd:python3 tests/fault/fault_adapter.py'`) that misbehaves on purpose.

It speaks the backend protocol (docs/backend-protocol.md) by hand, with the standard library and numpy only, and
declares `fp8_gemm_nt` (model `sm90_1d2d`). It computes no GEMM: what it does with each run request is chosen by the
environment variable GO_FAULT:

  none           answers "unsupported" with a message naming the inputs it read (every case is a SKIP row); a
                 request that breaks the protocol's promises (unreadable inputs, no `d` in `out`) is an "error"
  segv           kills itself with SIGSEGV             abort       aborts (SIGABRT)
  exit3          exits with status 3                   loop        never answers (see below)
  garbage        prints a line that is not JSON, then answers with the status "banana"
  wrong_id       writes a correct-looking output, answers "ok" with another request's id
  no_output      answers "ok" without writing the output file
  wrong_shape    writes `d` with one row too many, answers "ok"
  error_restart  answers "error" with a message and `restart: true`
  bad_version    sends a hello of protocol version 2, then serves as `none`
  no_hello       writes a line to stderr and exits with status 1 before its hello
  crash_then_dead  the first host sends its hello and dies by SIGSEGV on its first request; every later host (a
                 marker file in GO_FAULT_STATE says so) exits with status 1 before its hello

Other variables: GO_FAULT_AFTER=N answers the first N-1 requests of each process as `none` and faults from the N-th
on (default 1); GO_FAULT_PIDFILE, when set, gets one line per process start, "start PID", and per fault, "fault PID"
(and "child PID" for the process `loop` starts); GO_FAULT_STATE is a directory for `crash_then_dead`'s marker; GO_FAULT_NOISE=1 writes a line with ANSI colour codes,
NUL, BEL, XML metacharacters and U+FFFE to stderr before a fault that ends or stalls the process.

`loop` ignores SIGTERM, starts a child process (`sleep 60`, in its process group, sharing its stdout) and waits
without answering: only a SIGKILL of the whole process group ends both, as the protocol requires of the oracle. It
exits by itself once its stdin is closed (the oracle went away), so a test that kills `verify` leaves no hung host.

Before a fault that ends or stalls the process, a line naming it goes to stderr ("fault_adapter: injecting ...").
"""

import json
import os
import select
import signal
import struct
import subprocess
import sys

import numpy as np

OP = "fp8_gemm_nt"
MODEL = "sm90_1d2d"
FAULTS = (
    "none segv abort exit3 loop garbage wrong_id no_output wrong_shape error_restart bad_version no_hello "
    "crash_then_dead"
).split()

# safetensors dtype -> numpy dtype of the same width (BF16 and FP8 codes are carried as unsigned integers)
NUMPY_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64, "I32": np.int32,
    "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.uint8, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8,
    "F8_E8M0": np.uint8,
}


def log(text):
    sys.stderr.write(f"fault_adapter: {text}\n")
    sys.stderr.flush()


def record(kind, pid=None):
    """Appends "KIND PID" to GO_FAULT_PIDFILE, when set (PID: this process unless given)."""
    path = os.environ.get("GO_FAULT_PIDFILE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{kind} {os.getpid() if pid is None else pid}\n")


def send(message):
    """One protocol line on stdout."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read_safetensors_header(path):
    """The tensors of a safetensors file: name -> (dtype, shape), after checking every extent lies in the file."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: {len(blob)} bytes, no header")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"{path}: header of {n} bytes exceeds the file")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data_len = len(blob) - 8 - n
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        start, end = t["data_offsets"]
        if not 0 <= start <= end <= data_len:
            raise ValueError(f"{path}: tensor {name} has data_offsets {start}..{end} outside {data_len} bytes")
        tensors[name] = (t["dtype"], list(t["shape"]))
    return tensors


def write_safetensors(path, tensors):
    """Writes name -> (safetensors dtype, numpy array) as a safetensors file."""
    header, chunks, offset = {}, [], 0
    for name, (dtype, array) in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def zeros(spec, extra_rows=0):
    dtype = spec["dtype"]
    if dtype not in NUMPY_DTYPES:
        raise ValueError(f"cannot write dtype {dtype}")
    shape = list(spec["shape"])
    if extra_rows:
        shape[0] += extra_rows
    return dtype, np.zeros(shape, dtype=NUMPY_DTYPES[dtype])


def decline(request):
    """The honest answer of a backend that computes nothing: unsupported, naming what it read."""
    rid = request.get("id")
    try:
        tensors = read_safetensors_header(request["inputs"])
    except Exception as e:  # noqa: BLE001 - any unreadable input is the oracle's fault, reported as such
        return {"id": rid, "status": "error", "message": f"cannot read the inputs: {e}"}
    if request.get("op") != OP or "d" not in request.get("out", {}) or "a" not in tensors or "b" not in tensors:
        return {"id": rid, "status": "error", "message": f"unexpected request: {json.dumps(request)}"}
    shapes = ", ".join(f"{k} {v[0]}{v[1]}" for k, v in sorted(tensors.items()))
    return {"id": rid, "status": "unsupported", "message": f"fault_adapter computes no GEMM (inputs: {shapes})"}


def hang():
    """Never answers; ends only by SIGKILL, or by itself once stdin is closed."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "60"])
    record("child", child.pid)
    while True:
        readable, _, _ = select.select([0], [], [], 0.2)
        if readable and not os.read(0, 65536):
            child.kill()
            child.wait()
            os._exit(0)


def fault(kind, request):
    """Handles one request with the fault; returns the answer to send, or None for none."""
    rid = request["id"]
    out = request.get("out", {})
    if kind in ("segv", "abort", "exit3", "loop", "crash_then_dead"):
        if os.environ.get("GO_FAULT_NOISE"):
            # what coloured loggers and binary dumps leave in a crashed process's stderr
            sys.stderr.write("\x1b[31mE0101 device lost\x1b[0m NUL:\x00 BEL:\x07 <&> \ufffe\n")
        log(f"injecting {kind} into request {rid} (pid {os.getpid()})")
        record("fault")
        if kind in ("segv", "crash_then_dead"):
            if kind == "crash_then_dead":
                open(os.path.join(os.environ["GO_FAULT_STATE"], "crashed"), "w").close()
            os.kill(os.getpid(), signal.SIGSEGV)
        if kind == "abort":
            os.abort()
        if kind == "exit3":
            sys.exit(3)
        hang()
    record("fault")
    if kind == "garbage":
        sys.stdout.write("fault_adapter garbage: this line is not JSON\n")
        return {"id": rid, "status": "banana"}
    if kind == "wrong_id":
        write_safetensors(request["outputs"], {name: zeros(spec) for name, spec in out.items()})
        return {"id": rid + 1000, "status": "ok"}
    if kind == "no_output":
        return {"id": rid, "status": "ok"}
    if kind == "wrong_shape":
        write_safetensors(request["outputs"], {name: zeros(spec, extra_rows=1) for name, spec in out.items()})
        return {"id": rid, "status": "ok"}
    if kind == "error_restart":
        return {"id": rid, "status": "error", "message": "fault_adapter: sticky device error", "restart": True}
    return decline(request)


def main():
    kind = os.environ.get("GO_FAULT", "none")
    if kind not in FAULTS:
        log(f"unknown GO_FAULT {kind!r} (one of {', '.join(FAULTS)})")
        return 2
    after = int(os.environ.get("GO_FAULT_AFTER", "1"))
    record("start")
    if kind == "no_hello" or (
        kind == "crash_then_dead" and os.path.exists(os.path.join(os.environ["GO_FAULT_STATE"], "crashed"))
    ):
        log(f"injecting {kind}: exiting before the hello (pid {os.getpid()})")
        return 1
    send({
        "protocol": "gemm-oracle-backend",
        "version": 2 if kind == "bad_version" else 1,
        "name": f"fault_adapter-{kind}",
        "ops": {OP: MODEL},
        "info": {"fault": kind, "after": after},
    })
    served = 0
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0  # end of input: the oracle is done with this host
        request = json.loads(line)
        served += 1
        faulty = served >= after and kind not in ("none", "bad_version")
        send(fault(kind, request) if faulty else decline(request))


if __name__ == "__main__":
    sys.exit(main())
