"""serve(): the adapter loop, driven in-process (Adapter) and as a real subprocess with hand-written requests."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gemm_oracle.safetensors import read_safetensors, write_safetensors
from gemm_oracle.serve import Adapter, Unsupported

ADAPTER = textwrap.dedent(
    '''
    import os
    import sys
    import numpy as np
    from gemm_oracle import RawTensor, Unsupported, serve

    def in_place(x, y):
        print("a stray print from python")
        os.write(1, b"a stray write to fd 1\\n")
        y[...] = x * 2

    def echo_kwargs(**kwargs):
        raise ValueError(",".join(sorted(kwargs)))

    def echo_named(x, beta=None):
        raise ValueError(f"x={x.shape} beta={beta}")

    def unsupported(x):
        raise Unsupported("no such layout here")

    def not_implemented(x):
        raise NotImplementedError

    def cuda_fault(x):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    OPS = {
        "in_place": in_place,
        "echo_kwargs": echo_kwargs,
        "echo_named": echo_named,
        "unsupported": unsupported,
        "not_implemented": not_implemented,
        "cuda_fault": cuda_fault,
        "single": lambda x: x * 3,
        "wrong_dtype": lambda x: {"y": x.astype(np.float16)},
        "wrong_shape": lambda x: {"y": x[:1]},
        "missing": lambda x: {"z": x},
        "bad_return": lambda x: 42,
        "bf16": lambda y: {"y": RawTensor(np.full(y.shape, 0x3F80, np.uint16), "BF16")},
        "fp4_packed": lambda: {"q": np.array([[0x21, 0x43]], np.int8)},
    }
    serve(OPS, name="test-adapter", models="exact", info={"pid": os.getpid()})
    print("after serve: stdout is back")
    '''
)


class Host:
    """The adapter script as a child process, talking JSON lines."""

    def __init__(self, tmp_path, env):
        script = tmp_path / "adapter.py"
        script.write_text(ADAPTER)
        self.dir = tmp_path
        self.proc = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, text=True, bufsize=1,
        )
        self.hello = json.loads(self.proc.stdout.readline())
        self.next_id = 0

    def send_line(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def run(self, op, inputs, out, scalars=None) -> tuple:
        self.next_id += 1
        i = self.next_id
        in_path, out_path = self.dir / f"{i}.in.safetensors", self.dir / f"{i}.out.safetensors"
        write_safetensors(in_path, inputs)
        request = {"id": i, "op": op, "model": "exact", "inputs": str(in_path), "outputs": str(out_path),
                   "scalars": scalars or {}, "out": out}
        answer = self.send_line(json.dumps(request))
        assert answer["id"] == i
        return answer, (read_safetensors(out_path, raw=True) if answer["status"] == "ok" else None)

    def close(self) -> tuple:
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        stderr = self.proc.stderr.read()
        return self.proc.wait(timeout=30), rest, stderr


X = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
Y_OUT = {"y": {"dtype": "F32", "shape": [2, 3]}}


@pytest.fixture
def host(tmp_path, child_env):
    h = Host(tmp_path, child_env)
    yield h
    if h.proc.poll() is None:
        h.proc.kill()
        h.proc.wait()


def test_the_hello_declares_every_op_with_its_model(host):
    assert host.hello["protocol"] == "gemm-oracle-backend" and host.hello["version"] == 1
    assert host.hello["name"] == "test-adapter"
    assert host.hello["ops"]["in_place"] == "exact" and len(host.hello["ops"]) == 13
    assert host.hello["info"]["pid"] == host.proc.pid


def test_outputs_filled_in_place_and_stray_prints_go_to_stderr(host):
    answer, out = host.run("in_place", X, Y_OUT)
    assert answer == {"id": 1, "status": "ok"}
    assert out.tensors["y"].bits.tolist() == (X["x"] * 2).tolist()
    answer, out = host.run("single", X, Y_OUT)  # a lone tensor answers the one output
    assert answer["status"] == "ok" and out.tensors["y"].bits.tolist() == (X["x"] * 3).tolist()
    status, rest, stderr = host.close()
    assert status == 0
    assert "a stray print from python" in stderr and "a stray write to fd 1" in stderr
    assert rest == "after serve: stdout is back\n"  # serve() gives stdout back at the end of input


def test_an_output_that_is_also_an_input_starts_with_its_contents(host):
    answer, out = host.run("in_place", {"x": X["x"], "y": np.full((2, 3), 7, np.float32)}, Y_OUT)
    assert answer["status"] == "ok" and out.tensors["y"].bits.tolist() == (X["x"] * 2).tolist()


def test_the_callable_gets_only_the_names_it_accepts(host):
    answer, _ = host.run("echo_kwargs", X, Y_OUT, {"alpha": 1, "recipe": [1, 128, 128]})
    assert answer["status"] == "error" and answer["message"] == "ValueError: alpha,recipe,x,y"
    answer, _ = host.run("echo_named", X, Y_OUT, {"alpha": 1, "beta": [1, 2]})
    assert answer["message"] == "ValueError: x=(2, 3) beta=[1, 2]"


def test_unsupported_error_and_restart_answers(host):
    answer, _ = host.run("unsupported", X, Y_OUT)
    assert answer == {"id": 1, "status": "unsupported", "message": "no such layout here"}
    answer, _ = host.run("not_implemented", X, Y_OUT)
    assert answer == {"id": 2, "status": "unsupported", "message": "NotImplementedError"}
    answer, _ = host.run("cuda_fault", X, Y_OUT)
    assert answer == {"id": 3, "status": "error", "restart": True,
                      "message": "RuntimeError: CUDA error: an illegal memory access was encountered"}
    answer, _ = host.run("no_such_op", X, Y_OUT)
    assert answer["status"] == "unsupported" and answer["message"] == "test-adapter does not declare no_such_op"
    status, _, stderr = host.close()
    assert status == 0 and "Traceback" in stderr  # the traceback of an error goes to stderr


@pytest.mark.parametrize(
    "op,message",
    [
        ("wrong_dtype", "output 'y' has dtype F16; the oracle expects F32"),
        ("wrong_shape", "output 'y' has shape [1, 3]; the oracle expects [2, 3]"),
        ("missing", "missing returned no output 'y' (returned: z)"),
        ("bad_return", "bad_return returned int; expected a dict of outputs, None"),
    ],
)
def test_invalid_outputs_are_errors_naming_them(host, op, message):
    answer, _ = host.run(op, X, Y_OUT)
    assert answer["status"] == "error" and message in answer["message"]
    assert "restart" not in answer


def test_raw_bf16_and_packed_fp4_outputs(host):
    answer, out = host.run("bf16", X, {"y": {"dtype": "BF16", "shape": [2, 3]}})
    assert answer["status"] == "ok" and out.tensors["y"].dtype == "BF16"
    assert out.tensors["y"].bits.tolist() == [[0x3F80] * 3] * 2
    answer, out = host.run("fp4_packed", {}, {"q": {"dtype": "F4", "shape": [1, 4]}})
    assert answer["status"] == "ok" and out.tensors["q"].bits.tolist() == [[1, 2, 3, 4]]


def test_malformed_lines_are_answered_and_the_loop_goes_on(host):
    assert host.send_line("this is not json") == {
        "id": None,
        "status": "error",
        "message": "the request line is not JSON: Expecting value: line 1 column 1 (char 0)",
    }
    assert host.send_line("[1, 2]")["id"] is None
    assert host.send_line('{"id": 0, "op": "in_place"}')["message"].startswith('"id" must be a positive integer')
    bad = host.send_line('{"id": 5, "op": "in_place", "inputs": "/nonexistent.safetensors", "outputs": "/tmp/o", '
                         '"scalars": {}, "out": {}}')
    assert bad["id"] == 5 and bad["status"] == "error" and "FileNotFoundError" in bad["message"]
    no_out = host.send_line('{"id": 6, "op": "in_place", "inputs": "x", "outputs": "y"}')
    assert no_out == {"id": 6, "status": "error", "message": 'the request\'s "out" must be an object'}
    answer, _ = host.run("in_place", X, Y_OUT)
    assert answer["status"] == "ok"
    assert host.close()[0] == 0


def test_every_op_needs_a_model():
    fn = lambda x: x  # noqa: E731
    with pytest.raises(ValueError, match="no model for b"):
        Adapter({"a": (fn, "exact"), "b": fn})
    with pytest.raises(ValueError, match="no model for a, b"):
        Adapter({"a": fn, "b": fn}, models={})
    with pytest.raises(ValueError, match="models names ops that ops does not have: c"):
        Adapter({"a": fn}, models={"a": "exact", "c": "exact"})
    with pytest.raises(ValueError, match="tensors must be 'numpy' or 'torch'"):
        Adapter({"a": fn}, models="exact", tensors="jax")
    with pytest.raises(ValueError, match="non-empty dict"):
        Adapter({}, models="exact")
    hello = Adapter({"a": fn, "b": (fn, "sm100_1d1d")}, models={"a": "sm90_1d2d"}, name="n").hello()
    assert hello == {"protocol": "gemm-oracle-backend", "version": 1, "name": "n",
                     "ops": {"a": "sm90_1d2d", "b": "sm100_1d1d"}}


def test_adapter_in_process(tmp_path):
    def op(x, y, alpha=1):
        y[...] = x * alpha

    adapter = Adapter({"scale": op}, models="exact")
    write_safetensors(tmp_path / "in.safetensors", X)
    request = {"id": 3, "op": "scale", "inputs": str(tmp_path / "in.safetensors"),
               "outputs": str(tmp_path / "out.safetensors"), "scalars": {"alpha": 5}, "out": Y_OUT}
    assert adapter.handle(request) == {"id": 3, "status": "ok"}
    assert read_safetensors(tmp_path / "out.safetensors").tensors["y"].tolist() == (X["x"] * 5).tolist()
    assert adapter.handle_line(b"\xff\n")["status"] == "error"
    assert issubclass(Unsupported, NotImplementedError)


def test_torch_tensors_on_the_cpu(tmp_path):
    torch = pytest.importorskip("torch")

    def op(x, y):
        assert isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)
        y.copy_((x * 2).to(torch.bfloat16))

    adapter = Adapter({"double": op}, models="exact", tensors="torch", device="cpu")
    write_safetensors(tmp_path / "in.safetensors", X)
    request = {"id": 1, "op": "double", "inputs": str(tmp_path / "in.safetensors"),
               "outputs": str(tmp_path / "out.safetensors"), "scalars": {},
               "out": {"y": {"dtype": "BF16", "shape": [2, 3]}}}
    assert adapter.handle(request) == {"id": 1, "status": "ok"}
    y = read_safetensors(tmp_path / "out.safetensors", raw=True).tensors["y"]
    assert y.bits.tolist() == [[0, 0x4000, 0x4080], [0x40C0, 0x4100, 0x4120]]
