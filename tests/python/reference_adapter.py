"""A backend adapter whose "kernel" is the oracle's own reference (through gemm_oracle.run): `verify` must pass every
case of the ops it declares. It exercises the whole chain a user's adapter goes through: serve(), the protocol, the
tensor files, and verify's comparison. numpy only."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from gemm_oracle import run, serve  # noqa: E402

OPS = ("fp8_gemm_nt", "m_grouped_fp8_gemm_nt_masked", "bf16_gemm_nt")
MODELS = {"fp8_gemm_nt": "sm90_1d2d", "m_grouped_fp8_gemm_nt_masked": "sm90_1d2d", "bf16_gemm_nt": "bf16"}


def kernel(op):
    def fn(**kw):
        names = {"fp8_gemm_nt": ["a", "sfa", "b", "sfb", "c"], "m_grouped_fp8_gemm_nt_masked":
                 ["a", "sfa", "b", "sfb", "masked_m"], "bf16_gemm_nt": ["a", "b", "c"]}[op]
        inputs = {k: kw[k] for k in names if kw.get(k) is not None}
        scalars = {k: v for k, v in kw.items() if k not in inputs and k not in ("d",) and not hasattr(v, "shape")}
        out = run(op, inputs, model=MODELS[op], **scalars)
        return {"d": out["d"]}
    return fn


serve({op: kernel(op) for op in OPS}, name="reference-adapter", models=MODELS)
