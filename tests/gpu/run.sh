#!/usr/bin/env bash
# The GPU script (run on an H200 through the device tool, from the repository root):
#   builds the CUDA backend (deno task build --cuda; a plain nvcc line if that fails) and the CPU backend,
#   runs tests/gpu/check.cpp (CUDA vs CPU backend vs embedded models, bit for bit, 20 reruns each) three times:
#   default kernels, GO_CUDA_KERNEL=simple (simple kernels only) and GO_CUDA_BLOCK_N=128 (fast kernel, wide tiles),
#   runs compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the small shapes of every kernel,
#   times the FP8 GEMMs (tests/gpu/bench.cpp, tests/gpu/bench_torch.py), and, guarded, `deno task verify --backend cuda`.
# Reports go to $OUT (or ./gpu-out): env.log build.log check.log sanitizer.log bench.log verify.log torch.log summary.txt.
# STEPS selects parts (default: "build check sanitize bench verify torch").
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
STEPS=${STEPS:-build check sanitize bench verify torch}
B=${BUILD_DIR:-/tmp/go-gpu-build}
mkdir -p "$B"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
has() { [[ " $STEPS " == *" $1 "* ]]; }
note() { echo "$*" | tee -a "$SUMMARY"; }

{
  date -u
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvcc --version | tail -2
  g++ --version | head -1
  command -v compute-sanitizer
} >"$OUT/env.log" 2>&1
note "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x $(nvidia-smi -L 2>/dev/null | wc -l)"

CUDA_SO=$B/libgo_cuda.so
CPU_SO=$B/libgo_cpu.so
if has build; then
  {
    set -x
    # CPU backend and the drivers build in the background while the CUDA backend compiles.
    (g++ -O2 -std=c++17 -fPIC -shared -pthread -o "$CPU_SO" kernels/cpu/*.cpp && echo "cpu backend ok") &
    (g++ -O2 -std=c++17 -ffp-contract=off -o "$B/check" tests/gpu/check.cpp -ldl && g++ -O2 -std=c++17 -o "$B/bench" tests/gpu/bench.cpp -ldl && echo "drivers ok") &
    built=""
    if [ -x .device/enter.sh ]; then
      if timeout 300 bash .device/enter.sh deno task build --cuda; then
        built=$(ls -t .cache/kernels/cuda-*/libgemm_oracle_cuda.so 2>/dev/null | head -1)
      fi
    fi
    if [ -n "$built" ]; then
      cp "$built" "$CUDA_SO"
      echo "cuda backend from deno task build: $built"
    else
      echo "deno task build unavailable or failed: compiling with nvcc directly"
      for f in kernels/cuda/*.cu; do
        nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Xcompiler -fPIC -Xptxas -v -c "$f" -o "$B/$(basename "$f" .cu).o" &
      done
      wait
      nvcc -shared -o "$CUDA_SO" "$B"/*.o
    fi
    wait
    set +x
  } >"$OUT/build.log" 2>&1
  [ -f "$CUDA_SO" ] && note "build: cuda ok" || note "build: CUDA BACKEND FAILED (see build.log)"
  [ -f "$CPU_SO" ] && note "build: cpu ok" || note "build: cpu backend failed"
fi

if has check; then
  cpu_arg=-
  [ -f "$CPU_SO" ] && cpu_arg=$CPU_SO
  timeout 420 "$B/check" "$CUDA_SO" "$cpu_arg" --reruns "${RERUNS:-20}" >"$OUT/check.log" 2>&1
  rc=$?
  note "check (fast FP8 path where eligible): exit $rc; $(grep SUMMARY "$OUT/check.log" | tail -1)"
  # The same cases through the simple kernels only: both paths must give the models' bits.
  echo "==== GO_CUDA_KERNEL=simple ====" >>"$OUT/check.log"
  GO_CUDA_KERNEL=simple timeout 300 "$B/check" "$CUDA_SO" "$cpu_arg" --reruns 2 >>"$OUT/check.log" 2>&1
  rc=$?
  note "check (simple kernels only): exit $rc; $(grep SUMMARY "$OUT/check.log" | tail -1)"
  # The fast kernel picks BLOCK_N = 64 for small problems; force 128 so both instantiations are checked.
  echo "==== GO_CUDA_BLOCK_N=128 ====" >>"$OUT/check.log"
  GO_CUDA_BLOCK_N=128 timeout 300 "$B/check" "$CUDA_SO" "$cpu_arg" --reruns 2 >>"$OUT/check.log" 2>&1
  rc=$?
  note "check (fast kernel with BLOCK_N = 128 forced): exit $rc; $(grep SUMMARY "$OUT/check.log" | tail -1)"
fi

if has sanitize; then
  : >"$OUT/sanitizer.log"
  for tool in memcheck racecheck synccheck initcheck; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    echo "==== $tool ====" >>"$OUT/sanitizer.log"
    timeout 300 compute-sanitizer --tool "$tool" $extra --error-exitcode 99 "$B/check" "$CUDA_SO" - --small --reruns 1 \
      >>"$OUT/sanitizer.log" 2>&1
    rc=$?
    note "sanitizer $tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)"
  done
fi

if has bench; then
  {
    echo "== CUDA backend (tests/gpu/bench.cpp) =="
    GO_CUDA_ASYNC=1 timeout 300 "$B/bench" "$CUDA_SO" ${BENCH_QUICK:+--quick}
    echo "== CUDA backend, simple kernel (GO_CUDA_KERNEL=simple) =="
    GO_CUDA_ASYNC=1 GO_CUDA_KERNEL=simple timeout 120 "$B/bench" "$CUDA_SO" --quick
    if [ -z "${SKIP_TORCH:-}" ]; then
      echo "== torch (tests/gpu/bench_torch.py) =="
      timeout 240 python3 tests/gpu/bench_torch.py
    fi
  } >"$OUT/bench.log" 2>&1
  note "bench: $(wc -l <"$OUT/bench.log") lines"
fi

if has verify; then
  # The suite's own verify through Deno; guarded so a failure here cannot hide the driver's results above.
  if [ -x .device/enter.sh ]; then
    timeout ${VERIFY_TIMEOUT:-180} bash .device/enter.sh deno task verify --backend cuda ${VERIFY_ARGS:-} \
      --json "$OUT/verify.json" >"$OUT/verify.log" 2>&1
    note "deno task verify --backend cuda ${VERIFY_ARGS:-}: exit $?; $(grep -E '^verify: [0-9]+ cases' "$OUT/verify.log" | tail -1)"
  else
    note "verify: .device/enter.sh not carried"
  fi
fi
if has torch; then
  # PyTorch interop and vendor cross-check (fixtures load in torch; quantizers on CUDA; oracle run vs cuBLASLt).
  if [ -x .device/enter.sh ]; then
    timeout ${TORCH_TIMEOUT:-240} bash .device/enter.sh python3 tests/gpu/torch_interop_check.py >"$OUT/torch.log" 2>&1
    note "torch interop check: exit $?; $(tail -1 "$OUT/torch.log")"
  else
    note "torch: .device/enter.sh not carried"
  fi
fi
cat "$SUMMARY"
