"""A command backend that hits a real CUDA fault, for tests/gpu/run.sh's verify step.

Its "kernel" is the oracle's own reference (gemm_oracle.run), so every answer it gives is right, except that the
first process to serve a third request first makes the GPU fault: an out-of-bounds gather on the device trips a
device-side assert, which leaves the CUDA context unusable. gemm_oracle.serve answers that case `error` with
`restart: true`; verify must report it as an ERROR row naming the CUDA error, start a fresh adapter, and pass the
remaining cases. A marker file (GO_CUDA_FAULT_MARKER) makes the fault happen once per run.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import torch  # noqa: E402
from gemm_oracle import run, serve  # noqa: E402

MARKER = os.environ.get("GO_CUDA_FAULT_MARKER", "/tmp/gemm_oracle_cuda_fault.marker")
calls = 0


def fp8_gemm_nt(a, sfa, b, sfb, c=None, recipe=None):
    global calls
    calls += 1
    if calls == 3 and not os.path.exists(MARKER):
        open(MARKER, "w").close()
        x = torch.zeros(4, device="cuda")
        bad = torch.tensor([1 << 30], device="cuda")
        x[bad] += 1  # device-side assert: the context is lost
        torch.cuda.synchronize()
    inputs = {"a": a, "sfa": sfa, "b": b, "sfb": sfb}
    if c is not None:
        inputs["c"] = c
    scalars = {"recipe": recipe} if recipe is not None else {}
    return {"d": run("fp8_gemm_nt", inputs, model="sm90_1d2d", **scalars)["d"]}


serve({"fp8_gemm_nt": fp8_gemm_nt}, name="cuda-fault", models="sm90_1d2d", tensors="numpy")
