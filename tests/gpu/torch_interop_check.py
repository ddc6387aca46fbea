"""PyTorch interop and vendor cross-check, run on the GPU machine by tests/gpu/run.sh (step `torch`).

1. Every fixture loads with safetensors.torch.load_file into the matching torch dtypes (interfaces.md §5).
2. The quantizer fixtures' "gpu" outputs equal DeepGEMM's utility quantizers (deepgemm-ops.md §2) re-implemented here
   in PyTorch and run on CUDA: our "gpu semantics" claim (amax / 448 as a reciprocal multiply) meets the real thing.
3. The PyTorch user round trip: tensors saved with safetensors.torch.save_file, `deno task oracle run` on them, results
   loaded back, compared bit for bit with cuBLASLt's block-scaled FP8 GEMM (torch._scaled_mm, 1x128 / 128x128 scales),
   which numerics.md §8.2b found equal to the sm90_1d2d model (with split-K at some shapes).
Prints one line per check and a final 'N passed, N failed' line; exit 1 on any failure.
"""
import glob, json, os, subprocess, sys, tempfile
import torch
from safetensors.torch import load_file, save_file

passed = failed = 0
def report(ok, what):
    global passed, failed
    passed += ok; failed += (not ok)
    print(("PASS " if ok else "FAIL ") + what, flush=True)

EXPECT = {"F8_E4M3": torch.float8_e4m3fn, "BF16": torch.bfloat16, "F32": torch.float32, "I32": torch.int32,
          "F8_E8M0": torch.float8_e8m0fnu, "U8": torch.uint8, "I8": torch.int8, "F16": torch.float16, "I64": torch.int64}

def header(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))

# 1. load every fixture
files = sorted(glob.glob("fixtures/*/*.safetensors"))
for path in files:
    try:
        h = header(path); t = load_file(path)
        bad = [k for k, v in h.items() if k != "__metadata__" and v["dtype"] in EXPECT and t[k].dtype != EXPECT[v["dtype"]]]
        report(not bad and set(t) == set(h) - {"__metadata__"}, f"load {path}" + (f" dtype mismatch {bad}" if bad else ""))
    except Exception as e:  # noqa: BLE001
        report(False, f"load {path}: {e}")

# 2. quantizers on CUDA, re-implemented from deepgemm-ops.md §2 (PyTorch semantics, as DeepGEMM's utils/math.py runs them)
def ceil_to_ue8m0(x):
    bits = x.abs().float().view(torch.int32)
    e = ((bits >> 23) & 0xFF) + ((bits & 0x7FFFFF) != 0).int()
    return (e.clamp(1, 254) << 23).view(torch.float32)

def per_token(x, use_ue8m0, gran_k):
    m, n = x.shape; pn = (n + gran_k - 1) // gran_k * gran_k
    xp = torch.zeros(m, pn, dtype=x.dtype, device=x.device); xp[:, :n] = x
    v = xp.view(m, -1, gran_k); amax = v.abs().float().amax(dim=2).clamp(1e-4)
    sf = amax / 448.0
    if use_ue8m0: sf = ceil_to_ue8m0(sf)
    q = (v * (1.0 / sf.unsqueeze(2))).to(torch.float8_e4m3fn).view(m, pn)[:, :n].contiguous()
    return q, sf

def per_channel(x, use_ue8m0, gran_k):
    q, sf = per_token(x.t().contiguous(), use_ue8m0, gran_k)
    return q.t().contiguous(), sf.t().contiguous()

def per_block(x, use_ue8m0, gran_k):
    m, n = x.shape; pm = (m + gran_k - 1) // gran_k * gran_k; pn = (n + gran_k - 1) // gran_k * gran_k
    xp = torch.zeros(pm, pn, dtype=x.dtype, device=x.device); xp[:m, :n] = x
    v = xp.view(pm // gran_k, gran_k, pn // gran_k, gran_k)
    amax = v.abs().float().amax(dim=(1, 3), keepdim=True).clamp(1e-4)
    sf = amax / 448.0
    if use_ue8m0: sf = ceil_to_ue8m0(sf)
    q = (v * (1.0 / sf)).to(torch.float8_e4m3fn).view(pm, pn)[:m, :n].contiguous()
    return q, sf.view(pm // gran_k, pn // gran_k)

QUANT = {"per_token_cast_to_fp8": per_token, "per_channel_cast_to_fp8": per_channel, "per_block_cast_to_fp8": per_block}
for path in files:
    meta = header(path).get("__metadata__", {})
    op = meta.get("op")
    if op not in QUANT or "gpu/q" not in header(path):
        continue
    s = json.loads(meta.get("scalars", "{}"))
    if s.get("use_packed_ue8m0"):
        continue
    t = load_file(path)
    q, sf = QUANT[op](t["x"].cuda(), bool(s.get("use_ue8m0")), int(s.get("gran_k", 128)))
    okq = torch.equal(q.cpu().view(torch.uint8), t["gpu/q"].view(torch.uint8))
    oks = torch.equal(sf.cpu().view(torch.int32), t["gpu/sf"].contiguous().view(torch.int32))
    report(okq and oks, f"torch CUDA {op} == fixture gpu/q, gpu/sf ({os.path.basename(path)})")

# 3. the PyTorch user's round trip through `oracle run`, against cuBLASLt's block-scaled FP8 GEMM
def scaled_mm_blockwise(a, sfa, b, sfb):
    # torch._scaled_mm(A [M,K] row-major, B [K,N] column-major); 1x128 scales must be outer-dim-major (M-major)
    variants = [
        lambda: torch._scaled_mm(a, b.t(), scale_a=sfa.t().contiguous().t(), scale_b=sfb.t(), out_dtype=torch.bfloat16),
        lambda: torch._scaled_mm(a, b.t(), scale_a=sfa, scale_b=sfb.t(), out_dtype=torch.bfloat16),
        lambda: torch._scaled_mm(a, b.t(), scale_a=sfa.t().contiguous().t(), scale_b=sfb.t().contiguous(), out_dtype=torch.bfloat16),
    ]
    errs = []
    for v in variants:
        try:
            return v(), None
        except Exception as e:  # noqa: BLE001
            errs.append(str(e).splitlines()[0])
    return None, "; ".join(errs)

g = torch.Generator(device="cuda").manual_seed(1234)
for (m, n, k) in [(128, 512, 2048), (257, 384, 1152), (64, 256, 7168), (200, 136, 640), (1, 768, 512)]:
    x = torch.randn(m, k, device="cuda", generator=g).bfloat16(); y = torch.randn(n, k, device="cuda", generator=g).bfloat16()
    a, sfa = per_token(x, False, 128); b, sfb = per_block(y, False, 128)
    d, err = scaled_mm_blockwise(a, sfa, b, sfb)
    if d is None:
        print(f"SKIP cuBLASLt block-scaled refuses {m}x{n}x{k}: {err}"); continue
    with tempfile.TemporaryDirectory() as tmp:
        save_file({"a": a.cpu(), "sfa": sfa.cpu(), "b": b.cpu(), "sfb": sfb.cpu()}, f"{tmp}/in.safetensors")
        # cuBLASLt may split K (numerics.md §8.2b saw 2 halves at 64x256x7168): try split-K 1 and 2, one must match
        counts = {}
        for split in ([1, 2] if k >= 4096 else [1]):
            cmd = ["deno", "task", "-q", "oracle", "run", "fp8_gemm_nt", "--model", "sm90_1d2d", "--split-k", str(split),
                   f"{tmp}/in.safetensors", f"{tmp}/out{split}.safetensors"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                counts[split] = f"exit {r.returncode}: {r.stderr.strip()[-300:]}"; continue
            ref = load_file(f"{tmp}/out{split}.safetensors")["d"]
            counts[split] = (ref.view(torch.int16) == d.cpu().view(torch.int16)).sum().item()
        ok = any(v == m * n for v in counts.values())
        report(ok, f"oracle run fp8_gemm_nt sm90_1d2d == torch._scaled_mm block-scaled at {m}x{n}x{k}: bit-equal of {m * n} by split-K {counts}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
