#!/usr/bin/env bash
# The GPU script (run on an H200 through the device tool, from the repository root):
#   builds the CUDA backend (deno task build --cuda; a plain nvcc line if that fails) and the CPU backend,
#   runs tests/gpu/check.cpp (CUDA vs CPU backend vs embedded models, bit for bit, with reruns) once per fast-kernel
#   configuration in CHECK_CFGS (heuristic, forced JIT configurations, ahead-of-time kernels, simple kernels; in
#   CHECK_LANES processes at once, default 1), and
#   tests/gpu/pdl_check.cu (programmatic dependent launch against the hazards it could open),
#   runs compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on the small shapes of every kernel,
#   times the FP8 GEMMs (tests/gpu/bench.cpp; tests/gpu/bench_torch.py: cuBLASLt, torch BF16 and, where python3 can
#   import deep_gemm, a DeepGEMM column: bench/gpu_table.ts then compares ours with DeepGEMM per shape and per family,
#   issue 26; nothing here builds DeepGEMM, the caller puts it on PYTHONPATH), and, guarded, `deno task verify --backend
#   cuda` and `verify` with the Python adapters (adapters/deepgemm.py, adapters/torch.py) as backends.
#   The identify step records real kernels' outputs for `oracle identify` (tests/gpu/record_identify.sh; not in the
#   default STEPS).
#   The ops step (issue 28): `verify --backend cuda --suite all`, checked by tests/gpu/verify_coverage.ts (every case
#   passes or is skipped for another architecture), and cuBLASLt against the `cublaslt` model at the split-K cuBLASLt
#   chooses (tests/gpu/cublaslt_check.ts). check.cpp's quantizer and cuBLASLt cases run in the check and sanitize steps.
# Reports go to $OUT (or ./gpu-out): env.log build.log check.log pdl.log sanitizer.log bench.log verify.log
# verify_deepseek_v3_full.{log,json} (the DeepSeek-V3 table at its real M; VERIFY_FULL_SAMPLE, VERIFY_FULL_TIMEOUT) torch.log
# adapters.log adapters_deepgemm.json adapters_torch.json adapters_extra_*.json summary.txt; with PACK=1 all but
# summary.txt go into one reports.tgz.
# STEPS selects parts (default: "build check sanitize ops bench h2h verify torch adapters"; "h2h": ours and DeepGEMM in
# one process on the same operands, interleaved, see H2H_*, the table issue 26 gates on; also "profile": ncu, see
# PROFILE_*; "sass": cuobjdump of JIT kernels, see SASS_GREP; "trace": the profiling build's cycle traces, see TRACE_*;
# "ab": the working tree's kernels against copies of kernels/ in AB_SOURCES (AB_NULL=1: and an unmodified copy), timed in
# turn in the same call, and with AB_PROFILE profiled by Nsight Compute side by side, see AB_*;
# "clocks": ours and DeepGEMM under sustained load, time, SM clock, power and cycles per call, see CLOCK_*;
# "probe": the K loop's parts against the tensor cores, tests/gpu/ffma_wgmma_probe.cu, PROBE_ARGS).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
STEPS=${STEPS:-build check sanitize ops bench h2h verify torch adapters}
B=${BUILD_DIR:-/tmp/go-gpu-build}
mkdir -p "$B"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
has() { [[ " $STEPS " == *" $1 "* ]]; }
note() { echo "$*" | tee -a "$SUMMARY"; }
# The last line matching the ERE $2 in the log $1 after its last "==== " header line: the verdict of the run appended
# last, never an earlier run's (check.log, ab/check.log and sanitizer.log hold one run per header; a run killed before
# its summary has none, where the whole log's last match was the previous run's). None: $3 (default empty).
last_run_line() {
  awk -v p="$2" -v none="${3:-}" \
    'index($0, "==== ") == 1 { s = "" } $0 ~ p { s = $0 } END { print (s == "" ? none : s) }' "$1"
}
NO_SUMMARY="no SUMMARY line: the run ended before its summary"
# Nsight Compute, shared by the profile step and the ab step's AB_PROFILE. ncu_settle RC: on a timeout (RC 124)
# `timeout` ends the ncu launcher script at once, while the ncu process it started shuts the profiled program down and
# writes its results after (a metrics run at 4096x7168x16384 under a 90 s limit: its rows landed after the step had read
# the CSV); wait for it (up to 60 s), so that its results are read and no profile overlaps it.
ncu_settle() {
  [ "$1" = 124 ] || return 0
  local i
  for i in $(seq 60); do pgrep -x ncu >/dev/null || break; sleep 1; done
}
# ncu_profile BASE METRICS SET LIMIT NCU-KERNEL-OPTIONS... PROGRAM ARGS...: one profiled run, clocks left alone, within
# LIMIT seconds: with METRICS (comma-separated names) a metrics run, its CSV in BASE.metrics.csv among the program's own
# lines; else the section set SET (none where SET is empty: --section options among the kernel options name what to
# collect) into BASE.ncu-rep (ncu's log in BASE.run.txt). Waits for an ncu that outlived LIMIT (ncu_settle); status:
# the run's (124: timed out).
ncu_profile() {
  local base=$1 metrics=$2 set=$3 limit=$4 rc
  shift 4
  if [ -n "$metrics" ]; then
    timeout "$limit" ncu --clock-control none --metrics "$metrics" --csv "$@" >"$base.metrics.csv" 2>&1
  else
    timeout "$limit" ncu --clock-control none ${set:+--set "$set"} --import-source no -f -o "$base" "$@" \
      >"$base.run.txt" 2>&1
  fi
  rc=$?
  ncu_settle "$rc"
  return "$rc"
}
# ncu_report_pages BASE: BASE.ncu-rep's pages as text beside it (BASE.details.txt, BASE.sass.csv with the stall samples,
# BASE.raw.csv with every metric), then the report is dropped; status 1 where there is no report.
ncu_report_pages() {
  [ -f "$1.ncu-rep" ] || return 1
  ncu -i "$1.ncu-rep" --page details >"$1.details.txt" 2>&1
  ncu -i "$1.ncu-rep" --page source --print-source sass --csv >"$1.sass.csv" 2>&1
  ncu -i "$1.ncu-rep" --page raw --csv >"$1.raw.csv" 2>&1
  rm -f "$1.ncu-rep"
}

{
  date -u
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  nvcc --version | tail -2
  g++ --version | head -1
  command -v compute-sanitizer
} >"$OUT/env.log" 2>&1
note "gpu: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) x $(nvidia-smi -L 2>/dev/null | wc -l)"

# cuBLASLt for go_cublaslt_gemm (kernels/cuda/cublaslt.cu loads it at run time): the loader path, the CUDA toolkit, or
# the pip wheel PyTorch uses. Without one, cuBLASLt cases are SKIP rows naming the paths tried.
if [ -z "${GO_CUBLASLT_PATH:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt\.so'; then
  wheel=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null)
  for cand in /usr/local/cuda/lib64/libcublasLt.so* ${wheel:+"$wheel"/libcublasLt.so*}; do
    if [ -f "$cand" ]; then
      export GO_CUBLASLT_PATH=$cand
      break
    fi
  done
fi
note "cuBLASLt: ${GO_CUBLASLT_PATH:-from the loader path ($(ldconfig -p 2>/dev/null | grep -m1 -o 'libcublasLt\.so[^ ]*' || echo none found))}"

# The CUDA backend built by nvcc alone: every .cu of $1 (a kernels/cuda directory) compiled in parallel into $2 and
# linked as $3, its JIT reading the headers in $1; further arguments are extra nvcc flags. Fails when a unit did.
build_cuda_so() {
  local src=$1 dir=$2 so=$3 f
  shift 3
  mkdir -p "$dir" || return 1
  for f in "$src"/*.cu; do
    nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Xcompiler -fPIC -DGO_CUDA_SOURCE_DIR="\"$src\"" "$@" \
      -c "$f" -o "$dir/$(basename "$f" .cu).o" &
  done
  wait
  [ "$(ls "$dir"/*.o 2>/dev/null | wc -l)" = "$(ls "$src"/*.cu | wc -l)" ] && nvcc -shared -o "$so" "$dir"/*.o
}
# The ab step's copies of kernels/ (AB_SOURCES, ':'-separated). AB_NULL=1 adds the working tree's own kernels/, copied
# to $B/ab-null and built as the copies are: a side that differs from A only by the call's noise, whose shapes that lie
# apart from A (bench/ab_table.ts says what that means) show what chance gives in this call.
IFS=':' read -r -a ab_dirs <<<"${AB_SOURCES:-}"
if [ "${AB_NULL:-0}" = 1 ]; then
  rm -rf "$B/ab-null" && mkdir -p "$B/ab-null" && cp -r kernels "$B/ab-null/" && ab_dirs+=("$B/ab-null/kernels")
fi

CUDA_SO=$B/libgo_cuda.so
CPU_SO=$B/libgo_cpu.so
PROF_SO=$B/prof/libgo_cuda_prof.so  # the profiling build (-DGO_FAST_PROFILING: dbg= switches): pdl_check, trace, profile (dbg=)
if has build; then
  {
    set -x
    # CPU backend and the drivers build in the background while the CUDA backend compiles.
    (g++ -O2 -std=c++17 -fPIC -shared -pthread -o "$CPU_SO" kernels/cpu/*.cpp && echo "cpu backend ok") &
    (g++ -O2 -std=c++17 -ffp-contract=off -pthread -o "$B/check" tests/gpu/check.cpp -ldl && nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o "$B/bench" tests/gpu/bench.cpp -ldl && nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o "$B/pdl_check" tests/gpu/pdl_check.cu -ldl && nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o "$B/ffma_wgmma_probe" tests/gpu/ffma_wgmma_probe.cu -ldl && nvcc -x cu -gencode=arch=compute_90a,code=sm_90a -O2 -std=c++17 -o "$B/cluster_occupancy" tests/gpu/cluster_occupancy.cu -ldl && echo "drivers ok") &
    # The profiling build of the CUDA backend (sm90_fp8_fast_profile.cuh), which alone accepts dbg=: pdl_check's
    # hazard run (check step) compiles griddepcontrol.wait out with it, the trace step records cycles with it, and the
    # profile step runs its dbg= configurations on it.
    (has check || has trace || has profile) &&
      (build_cuda_so "$PWD/kernels/cuda" "$B/prof" "$PROF_SO" -DGO_FAST_PROFILING && echo "profiling build ok") &
    # The ab step's B libraries: kernels/ as copied into each directory of AB_SOURCES (':'-separated; gemm_oracle.h and
    # cuda/), the i-th built into $B/ab/i, its JIT reading the headers there and caching into $B/ab/i/jit (the cache
    # sits beside the library).
    if [ "${#ab_dirs[@]}" -gt 0 ]; then
      rm -rf "$B/ab"
      for i in "${!ab_dirs[@]}"; do
        ab_src=$(cd "${ab_dirs[$i]}" && pwd) || continue  # a missing copy: its library's note says FAILED
        (build_cuda_so "$ab_src/cuda" "$B/ab/$((i + 1))" "$B/ab/$((i + 1))/libgo_cuda.so" &&
          echo "ab library $((i + 1)) ok ($ab_src)") &
        # TRACE_AB=1 with the trace step: each copy's profiling build too, which the trace step traces.
        if has trace && [ "${TRACE_AB:-0}" = 1 ]; then
          (build_cuda_so "$ab_src/cuda" "$B/ab/$((i + 1))/prof" "$B/ab/$((i + 1))/prof/libgo_cuda_prof.so" \
            -DGO_FAST_PROFILING && echo "ab profiling library $((i + 1)) ok ($ab_src)") &
        fi
      done
    fi
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
      build_cuda_so "$PWD/kernels/cuda" "$B" "$CUDA_SO" -Xptxas -v
    fi
    wait
    set +x
  } >"$OUT/build.log" 2>&1
  [ -f "$CUDA_SO" ] && note "build: cuda ok" || note "build: CUDA BACKEND FAILED (see build.log)"
  [ -f "$CPU_SO" ] && note "build: cpu ok" || note "build: cpu backend failed"
  if [ "${#ab_dirs[@]}" -gt 0 ]; then
    for i in "${!ab_dirs[@]}"; do
      [ -f "$B/ab/$((i + 1))/libgo_cuda.so" ] && note "build: ab library $((i + 1)) ok (${ab_dirs[$i]})" ||
        note "build: AB LIBRARY $((i + 1)) FAILED (${ab_dirs[$i]}; see build.log)"
    done
  fi
fi

if has check; then
  cpu_arg=-
  [ -f "$CPU_SO" ] && cpu_arg=$CPU_SO
  : >"$OUT/check.log"
  # Every configuration family of the fast FP8 kernel gives the models' bits: the heuristic's choice (JIT), forced
  # configurations (multicast on/off, BLOCK_N that straddles scale blocks with 2 and 3 slots, one accumulator set, a
  # generic non-shape kernel, BLOCK_M 256 and 64 with and without multicast and straddling, SFA copied, spread=1,
  # ktma=2|4, three accumulator sets, BLOCK_M 256 on a capped grid (sms=) whose last round runs in halves, 4 stages of
  # BLOCK_M 256 whose epilogue stages by box), the ahead-of-time kernels (JIT off) and the simple kernels.
  CHECK_CFGS=${CHECK_CFGS:-"default;sfa=copy;mc=1;bn=112,mc=2;bn=176,acc=single;bn=48,mc=2;bn=128,acc=single,shape=0;bn=8,mc=2;bm=256,mc=2;bm=256,bn=96,mc=2;bm=256,bn=112;bm=256,bn=40,mc=2,shape=0;bm=256,sfa=copy;bm=256,mc=2,sfa=copy;bm=64;bm=64,bn=56;bm=64,bn=48,mc=2,sfa=copy;bm=64,bn=48,mc=2,spread=1;bm=256,spread=1;bm=128,bn=32,ktma=4,spread=0;bm=128,ktma=2,sfa=copy;acc=triple,bn=16;bm=128,bn=32,acc=triple;bm=256,sms=8;bm=256,mc=2,sms=16;bm=256,bn=128,mc=2,stages=4;bm=256,bn=128,stages=4,sms=8;bm=256,bn=128,stages=4,mc=2,sfa=copy;aot;aot128;simple"}
  IFS=';' read -r -a cfgs <<<"$CHECK_CFGS"
  # One configuration's run, appended to the log $2 under its header; its exit status goes to $2.rc.
  check_config() {
    local cfg=$1 log=$2 reruns=2 envs=()
    case "$cfg" in
      default) reruns=${RERUNS:-10} ;;
      aot) envs=(GO_CUDA_JIT=0) ;;
      aot128) envs=(GO_CUDA_JIT=0 GO_CUDA_BLOCK_N=128) ;;
      simple) envs=(GO_CUDA_KERNEL=simple) ;;
      *) envs=("GO_CUDA_FAST_CFG=$cfg") ;;
    esac
    echo "==== check: $cfg (${envs[*]:-heuristic}) ====" >>"$log"
    env "${envs[@]}" GO_CUDA_JIT_LOG=1 timeout "${CHECK_TIMEOUT:-150}" "$B/check" "$CUDA_SO" "$cpu_arg" --reruns "$reruns" >>"$log" 2>&1
    echo $? >"$log.rc"
  }
  # Configuration $1's log joined into check.log and its verdict noted (a configuration its lane never reached: named).
  report_config() {
    local i=$1 cfg=${cfgs[$1]} rc
    if [ ! -f "$OUT/check.lanes/$i.log.rc" ]; then
      note "check [$cfg]: not run (its lane stopped at a configuration that timed out)"
      return
    fi
    cat "$OUT/check.lanes/$i.log" >>"$OUT/check.log"
    rc=$(cat "$OUT/check.lanes/$i.log.rc")
    note "check [$cfg]: exit $rc; $(last_run_line "$OUT/check.lanes/$i.log" SUMMARY "$NO_SUMMARY")"
    if [ "$rc" = 124 ]; then
      note "check [$cfg] timed out (a hung kernel?): its lane stopped there; skipping the benchmark"
      HUNG=1
    fi
  }
  # CHECK_LANES (default 1) processes at once, configuration i in lane i mod CHECK_LANES, each lane in order; a lane
  # stops at a configuration that timed out. One lane took 368 s for 18 of the 28 default configurations (H200); four
  # lanes ran all 28 in one call of 346 s with three more run.sh lanes beside them. One lane reports each configuration
  # as it ends (a call cut short keeps what ran); several report when all have ended, in configuration order.
  lanes=${CHECK_LANES:-1}
  rm -rf "$OUT/check.lanes"
  mkdir -p "$OUT/check.lanes"
  if [ "$lanes" -le 1 ]; then
    for i in "${!cfgs[@]}"; do
      [ -z "${HUNG:-}" ] && check_config "${cfgs[$i]}" "$OUT/check.lanes/$i.log"
      report_config "$i"
    done
  else
    for ((l = 0; l < lanes; l++)); do
      (
        for ((i = l; i < ${#cfgs[@]}; i += lanes)); do
          check_config "${cfgs[$i]}" "$OUT/check.lanes/$i.log"
          [ "$(cat "$OUT/check.lanes/$i.log.rc")" = 124 ] && break
        done
      ) &
    done
    wait
    for i in "${!cfgs[@]}"; do report_config "$i"; done
  fi
  rm -rf "$OUT/check.lanes"
fi

if has check && [ -z "${HUNG:-}" ]; then
  # Programmatic dependent launch (tests/gpu/pdl_check.cu): a kernel ahead of the GEMM that writes its input or reads
  # its output late; then the same with the wait compiled out (dbg=8, the profiling build), where the check must see
  # the hazard.
  {
    echo "==== pdl_check ===="
    timeout 120 "$B/pdl_check" "$CUDA_SO"
    echo "exit $?"
    echo "==== pdl_check, dbg=8 (griddepcontrol.wait compiled out) ===="
    GO_CUDA_FAST_CFG=dbg=8 timeout 120 "$B/pdl_check" "$PROF_SO" --expect-hazard
    echo "exit $?"
  } >"$OUT/pdl.log" 2>&1
  note "pdl_check: $(grep SUMMARY "$OUT/pdl.log" | tr '\n' ' ')"
fi

if has sanitize; then
  : >"$OUT/sanitizer.log"
  # The cases' JIT kernels are compiled first, by one run outside the tool, so that the runs under it find each in the
  # cache: under compute-sanitizer 2025.3.1 memcheck, a run that JIT-compiled its multicast kernels (GO_CUDA_FAST_CFG
  # bm=128,mc=2 or bm=256,mc=2) died of SIGSEGV before its first case; with the kernels cached, or with the backend's
  # cluster occupancy query left out, the same run was clean (H200; docs/performance-history.md, twenty-first round).
  echo "==== JIT warm-up (no tool) ====" >>"$OUT/sanitizer.log"
  "$B/check" "$CUDA_SO" - --small --reruns 1 >>"$OUT/sanitizer.log" 2>&1
  rc=$?
  note "sanitizer JIT warm-up: exit $rc; $(last_run_line "$OUT/sanitizer.log" '^SUMMARY' "$NO_SUMMARY")"
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    echo "==== $tool ====" >>"$OUT/sanitizer.log"
    timeout 300 compute-sanitizer --tool "$tool" $extra --error-exitcode 99 "$B/check" "$CUDA_SO" - --small --reruns 1 \
      >>"$OUT/sanitizer.log" 2>&1
    rc=$?
    # A status past 128 with no summary line of this tool's run is compute-sanitizer itself killed by a signal (synccheck
    # exited 139 before its first report beside six other GPU processes, and ran clean alone): no verdict either way.
    verdict=$(last_run_line "$OUT/sanitizer.log" 'ERROR SUMMARY|RACECHECK SUMMARY')
    [ -z "$verdict" ] && [ "$rc" -gt 128 ] && verdict="no report: compute-sanitizer killed by signal $((rc - 128))"
    note "sanitizer $tool: exit $rc; ${verdict:-no summary line (see sanitizer.log)}"
  done
fi

if has ops && [ -z "${HUNG:-}" ]; then
  # Issue 28: every operation SM90 can run, through the C ABI, against the reference: verify --suite all (fixtures of
  # every op, the edge suite, DeepSeek-V3 shapes), then the coverage criterion on its report: each case passes or is
  # skipped because its operation needs SM100 (tests/gpu/verify_coverage.ts); then cuBLASLt at its own split-K choice
  # against the `cublaslt` model with reruns (tests/gpu/cublaslt_check.ts). The quantizers' determinism reruns and
  # sanitizer runs are check.cpp's (check and sanitize steps).
  if [ -x .device/enter.sh ]; then
    {
      echo "==== verify --backend cuda --suite all ===="
      timeout ${OPS_VERIFY_TIMEOUT:-420} bash .device/enter.sh deno task verify --backend cuda --suite all \
        --json "$OUT/verify_all.json"
      echo "verify exit $?"
      echo "==== coverage (tests/gpu/verify_coverage.ts) ===="
      timeout 60 bash .device/enter.sh deno run -A tests/gpu/verify_coverage.ts "$OUT/verify_all.json"
      echo "coverage exit $?"
      echo "==== cuBLASLt vs the cublaslt model (tests/gpu/cublaslt_check.ts) ===="
      timeout ${OPS_CUBLASLT_TIMEOUT:-300} bash .device/enter.sh deno run -A tests/gpu/cublaslt_check.ts \
        --json "$OUT/cublaslt.json" --reruns "${RERUNS_CUBLASLT:-5}"
      echo "cublaslt_check exit $?"
    } >"$OUT/ops.log" 2>&1
    note "ops: verify --suite all: $(grep -m1 '^verify exit' "$OUT/ops.log"); $(grep -E '^verify: [0-9]+ cases' "$OUT/ops.log" | tail -1)"
    note "ops: $(grep -m1 '^coverage:' "$OUT/ops.log") ($(grep -m1 '^coverage exit' "$OUT/ops.log"))"
    note "ops: $(grep -m1 '^SUMMARY cublaslt_check' "$OUT/ops.log") ($(grep -m1 '^cublaslt_check exit' "$OUT/ops.log"))"
  else
    note "ops: .device/enter.sh not carried"
  fi
fi

if has bench && [ -z "${HUNG:-}" ]; then
  # Ours (tests/gpu/bench.cpp, CUDA events, JSON), then a --quick rerun that finds the JIT disk cache warm (skip it with
  # BENCH_WARM=0), the baselines of tests/gpu/bench_torch.py (SKIP_TORCH=1 skips them): cuBLASLt, torch BF16 and
  # DeepGEMM where python3 can import deep_gemm (from PYTHONPATH; nothing here builds it; BENCH_DEEPGEMM=0 leaves it
  # out; its kernels JIT-compile first, in parallel, so TORCH_BENCH_TIMEOUT defaults to 300 s with it, 150 s without),
  # and the table (bench/gpu_table.ts: without deep_gemm one line says why, and summary.txt notes it). Only the first
  # run times the streaming floor (--floor: the table reads the floor from it alone). The first run
  # takes BENCH_FILTER (--filter, e.g. "dense 4096"), BENCH_SWEEP (--sweep "cfg1;cfg2": GO_CUDA_FAST_CFG strings such as
  # "bn=128,stages=5;bn=112,stages=6") and BENCH_ARGS (split on spaces: --quick, --sweep-only, --samples N, --no-prepare). The JSON files and
  # gpu_table.md come back bundled in bench.tgz (few files come back from $OUT); bench.log holds everything printed.
  rm -f "$OUT/bench_ours.json" "$OUT/bench_warm.json" "$OUT/bench_torch.json" "$OUT/bench_cfg2.json" "$OUT/gpu_table.md" "$OUT/bench.tgz" \
    "$OUT/bench_torch.json.tmp"
  # SM clock and board power once a second while the benchmarks run (clocks.csv in bench.tgz): the large GEMMs run
  # power-bound, and the table's TFLOPS depend on it.
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -l 1 \
    >"$OUT/clocks.csv" 2>/dev/null &
  clocks_pid=$!
  # The DeepGEMM column: bench_torch.py times it where python3 can import deep_gemm (else it records why).
  dg_ok=0
  if [ -z "${SKIP_TORCH:-}" ] && [ "${BENCH_DEEPGEMM:-1}" != 0 ]; then
    if python3 -c 'import deep_gemm' >/dev/null 2>&1; then
      dg_ok=1
    else
      note "bench: DeepGEMM column skipped: python3 cannot import deep_gemm ($(python3 -c 'import deep_gemm' 2>&1 | tail -1))"
    fi
  fi
  {
    echo "== CUDA backend (tests/gpu/bench.cpp), first run (cold JIT cache on a fresh machine) =="
    # shellcheck disable=SC2086
    GO_CUDA_ASYNC=1 timeout "${BENCH_TIMEOUT:-210}" "$B/bench" "$CUDA_SO" --floor --json "$OUT/bench_ours.json" \
      ${BENCH_FILTER:+--filter "$BENCH_FILTER"} ${BENCH_SWEEP:+--sweep "$BENCH_SWEEP"} ${BENCH_ARGS:-}
    echo "bench exit $?"
    if [ "${BENCH_WARM:-1}" != 0 ]; then
      echo "== CUDA backend, second run --quick (warm loads from the JIT disk cache) =="
      GO_CUDA_ASYNC=1 timeout 45 "$B/bench" "$CUDA_SO" --quick --json "$OUT/bench_warm.json"
      echo "bench (warm) exit $?"
    fi
    if [ -n "${BENCH_CFG2:-}" ]; then
      # Every shape again (grouped ones too, which --sweep leaves out) with GO_CUDA_FAST_CFG=$BENCH_CFG2, for an A/B
      # against the first run: bench_cfg2.json (bench/ab_table.ts compares the two).
      echo "== CUDA backend, every shape with GO_CUDA_FAST_CFG=$BENCH_CFG2 =="
      # shellcheck disable=SC2086
      GO_CUDA_FAST_CFG=$BENCH_CFG2 GO_CUDA_ASYNC=1 timeout "${BENCH_TIMEOUT:-210}" "$B/bench" "$CUDA_SO" \
        --json "$OUT/bench_cfg2.json" ${BENCH_FILTER:+--filter "$BENCH_FILTER"}
      echo "bench (cfg2) exit $?"
    fi
    if [ -n "${BENCH_SIMPLE:-}" ]; then
      echo "== CUDA backend, simple kernel (GO_CUDA_KERNEL=simple), --quick =="
      GO_CUDA_ASYNC=1 GO_CUDA_KERNEL=simple timeout 60 "$B/bench" "$CUDA_SO" --quick
    fi
    if [ -z "${SKIP_TORCH:-}" ]; then
      echo "== torch and DeepGEMM (tests/gpu/bench_torch.py) =="
      torch_timeout=150
      [ "$dg_ok" = 1 ] && torch_timeout=300
      dg_args=""
      [ "${BENCH_DEEPGEMM:-1}" = 0 ] && dg_args=--no-deepgemm
      # shellcheck disable=SC2086
      timeout "${TORCH_BENCH_TIMEOUT:-$torch_timeout}" python3 tests/gpu/bench_torch.py --json "$OUT/bench_torch.json" \
        ${BENCH_FILTER:+--filter "$BENCH_FILTER"} $dg_args
      echo "bench_torch exit $?"
    fi
    if [ -x .device/enter.sh ] && [ -f "$OUT/bench_ours.json" ]; then
      echo "== table (bench/gpu_table.ts) =="
      timeout 45 bash .device/enter.sh deno run -A bench/gpu_table.ts --ours "$OUT/bench_ours.json" \
        --torch "$OUT/bench_torch.json" --warm "$OUT/bench_warm.json" --write bench/RESULTS.md --out "$OUT/gpu_table.md"
      echo "gpu_table exit $?"
      # Cycle traces (GO_CUDA_FAST_CFG with dbg bit 6, e.g. BENCH_SWEEP="dbg=64;dbg=65"): their medians.
      if grep -q "^trace end" "$OUT/bench.log"; then
        echo "== traces (bench/trace_table.ts) =="
        timeout 30 bash .device/enter.sh deno run -A bench/trace_table.ts "$OUT/bench.log"
      fi
    else
      echo "table: skipped (.device/enter.sh not carried or no bench_ours.json)"
    fi
  } >"$OUT/bench.log" 2>&1
  kill "$clocks_pid" 2>/dev/null
  note "bench: $(wc -l <"$OUT/bench.log") lines; $(grep -m1 -E '^prepare: ' "$OUT/bench.log")"
  note "bench clocks: $(awk -F', ' '$3 + 0 >= 650 { n++; c = $2 + 0; if (!lo || c < lo) lo = c; if (c > hi) hi = c }
    END { printf "%d samples at >= 650 W, SM %d-%d MHz", n, lo, hi }' "$OUT/clocks.csv" 2>/dev/null)"
  if [ -f "$OUT/gpu_table.md" ]; then
    note "bench $(grep -m1 -E '^- geometric mean' "$OUT/gpu_table.md")"
    note "bench $(grep -m1 -E '^- ours / DeepGEMM' "$OUT/gpu_table.md")"
    note "bench $(grep -m1 -E '^- 4096×7168×16384' "$OUT/gpu_table.md")"
    note "bench $(grep -m1 -E '^- % of HBM bound' "$OUT/gpu_table.md")"
    if grep -q -E '^- the streaming floor' "$OUT/gpu_table.md"; then
      note "bench $(grep -m1 -E '^- the streaming floor' "$OUT/gpu_table.md")"
    fi
    # Each other family's time over its streaming floor (gpu_table.ts's familyFloor), a line each.
    while IFS= read -r line; do note "bench $line"; done < <(
      grep -E "^- .*, our time over the streaming floor's" "$OUT/gpu_table.md"
    )
  fi
  (cd "$OUT" && tar czf bench.tgz $(ls bench_ours.json bench_torch.json bench_warm.json bench_cfg2.json gpu_table.md clocks.csv 2>/dev/null)) 2>/dev/null
  rm -f "$OUT/bench_ours.json" "$OUT/bench_warm.json" "$OUT/bench_torch.json" "$OUT/bench_cfg2.json" "$OUT/gpu_table.md" \
    "$OUT/clocks.csv" "$OUT/bench_torch.json.tmp"
  note "bench: results in bench.tgz ($(tar tzf "$OUT/bench.tgz" 2>/dev/null | tr '\n' ' '))"
fi

if has ab && [ -z "${HUNG:-}" ]; then
  # A/B in one call: A, the working tree's CUDA backend; B1, B2, ..., the libraries the build step made from the
  # directories of AB_SOURCES (git-ignored, carried copies of kernels/, e.g. `git archive HEAD kernels | tar -x -C
  # .ab/hint` and then edited: AB_SOURCES=.ab/hint/kernels:.ab/other/kernels). Each JIT-compiles from its own sources
  # into its own cache. They run in turn, AB_RUNS rounds (default 3), on AB_FILTER's shapes, with AB_CFG_A / AB_CFG_B as
  # GO_CUDA_FAST_CFG where set, without the streaming floor (bench.cpp times it only with --floor); bench/ab_table.ts
  # compares each shape's mean, every B against A, and says which shapes' runs lie apart (with 3 runs a side a shape
  # lands apart by chance 1 time in 10; at 2, 1 in 3): ab_table.md. Then check.cpp runs on each B library. The runs'
  # JSON and logs come back in ab.tgz.
  rm -rf "$OUT/ab" "$OUT/ab.tgz" "$OUT/ab_table.md"
  mkdir -p "$OUT/ab"
  ab_filter=${AB_FILTER:-"dense 4096|contiguous 4x8192x4096x2048|contiguous 8x4096x7168x3072|masked 6x1024x7168x3072"}
  [ -z "${AB_FILTER:-}" ] && ab_filter="$ab_filter|masked 32x20x4096x4096|dense 128x4096x7168|dense 64x2112x7168"
  # AB_SHAPES: shapes outside the 45 (';'-separated, named as the tables name them: "masked 32x100x4096x2048"), timed
  # beside AB_FILTER's (bench.cpp's --shape).
  ab_shape_args=()
  IFS=';' read -r -a ab_shapes <<<"${AB_SHAPES:-}"
  for s in ${ab_shapes[@]+"${ab_shapes[@]}"}; do [ -n "$s" ] && ab_shape_args+=(--shape "$s"); done
  sides=(a)
  for i in "${!ab_dirs[@]}"; do
    if [ -f "$B/ab/$((i + 1))/libgo_cuda.so" ]; then
      sides+=("b$((i + 1))")
    else
      note "ab: no library for ${ab_dirs[$i]} ($B/ab/$((i + 1))/libgo_cuda.so): run the build step with the same AB_SOURCES and AB_NULL"
    fi
  done
  declare -A ab_lists=()
  [ "${#sides[@]}" = 1 ] && note "ab: nothing to compare the tree with (AB_SOURCES: '${AB_SOURCES:-}', AB_NULL: '${AB_NULL:-}')"
  for r in $( [ "${#sides[@]}" -gt 1 ] && seq 1 "${AB_RUNS:-3}"); do
    for side in "${sides[@]}"; do
      so=$CUDA_SO cfg=${AB_CFG_A:-}
      [ "$side" != a ] && so=$B/ab/${side#b}/libgo_cuda.so cfg=${AB_CFG_B:-}
      echo "== $side, run $r: $so ${cfg:+GO_CUDA_FAST_CFG=$cfg} ==" >>"$OUT/ab/ab.log"
      env ${cfg:+GO_CUDA_FAST_CFG=$cfg} GO_CUDA_ASYNC=1 timeout "${AB_TIMEOUT:-120}" "$B/bench" "$so" \
        --json "$OUT/ab/$side.$r.json" --filter "$ab_filter" ${ab_shape_args[@]+"${ab_shape_args[@]}"} \
        >>"$OUT/ab/ab.log" 2>&1
      echo "exit $?" >>"$OUT/ab/ab.log"
      ab_lists[$side]=${ab_lists[$side]:+${ab_lists[$side]},}$OUT/ab/$side.$r.json
    done
  done
  # Each B library's bits: check.cpp's cases with its heuristic (AB_CHECK=0 skips it), as the check step runs A's.
  if [ "${AB_CHECK:-1}" != 0 ]; then
    cpu_arg=-
    [ -f "$CPU_SO" ] && cpu_arg=$CPU_SO
    for side in "${sides[@]:1}"; do
      echo "==== check: ${ab_dirs[$((${side#b} - 1))]} ====" >>"$OUT/ab/check.log"
      timeout "${CHECK_TIMEOUT:-150}" "$B/check" "$B/ab/${side#b}/libgo_cuda.so" "$cpu_arg" --reruns 1 \
        >>"$OUT/ab/check.log" 2>&1
      note "ab check [${ab_dirs[$((${side#b} - 1))]}]: exit $?; $(last_run_line "$OUT/ab/check.log" SUMMARY "$NO_SUMMARY")"
    done
  fi
  # AB_PROFILE: shapes (';'-separated, named as the tables name them: "dense 4096x7168x2048") where each side's kernel
  # is profiled by Nsight Compute, one launch, the full set, clocks left alone, after a run outside the tool has
  # JIT-compiled it (as the sanitize step's warm-up does): ab/ncu/<side>.<n>.{details.txt,sass.csv,raw.csv} in ab.tgz,
  # and ab_profile.md, each B against A: bench/ncu_diff.ts (headline metrics; stall samples apart by more than 1.1x)
  # and bench/sass_stalls.ts's reasons. The thirty-seventh round profiled a variant this way (docs/performance-history.md).
  # AB_PROFILE_METRICS (comma-separated metric names): a metrics run instead of the full set (a few replay passes),
  # ab/ncu/<side>.<n>.metrics.csv, and ab_profile.md compares every metric that differs (bench/ncu_diff.ts reads both
  # forms); the thirty-eighth round's cycles, clock and tensor-pipe figures of BLOCK_M 192 came from such a run.
  # The profiled program calls the shape once on one input set (bench.cpp's --once). With --samples 1, which bench takes
  # as 20 after filling > 200 MB of rotating sets, one side's full set at 4096x7168x2048 outlived AB_PROFILE_TIMEOUT's
  # 150 s (thirty-eighth round); how much of that was the program's own run is not measured.
  IFS=';' read -r -a ab_profiles <<<"${AB_PROFILE:-}"
  pn=0
  : >"$OUT/ab_profile.md"
  for s in ${ab_profiles[@]+"${ab_profiles[@]}"}; do
    [ -z "$s" ] && continue
    pn=$((pn + 1))
    mkdir -p "$OUT/ab/ncu"
    for side in "${sides[@]}"; do
      so=$CUDA_SO cfg=${AB_CFG_A:-}
      [ "$side" != a ] && so=$B/ab/${side#b}/libgo_cuda.so cfg=${AB_CFG_B:-}
      tag=$OUT/ab/ncu/$side.$pn
      env ${cfg:+GO_CUDA_FAST_CFG=$cfg} timeout "${AB_TIMEOUT:-120}" "$B/bench" "$so" --shape "$s" --once \
        --stall 0 >"$tag.warmup.txt" 2>&1
      (
        [ -n "$cfg" ] && export GO_CUDA_FAST_CFG=$cfg
        ncu_profile "$tag" "${AB_PROFILE_METRICS:-}" full "${AB_PROFILE_TIMEOUT:-150}" --kernel-name go_fp8_fast \
          --launch-count 1 "$B/bench" "$so" --shape "$s" --once --no-prepare --stall 0
      )
      rc=$?
      if [ -n "${AB_PROFILE_METRICS:-}" ]; then
        if grep -q '^"[0-9]' "$tag.metrics.csv"; then
          note "ab profile $s [$side]: ncu exit $rc, metrics written"
        else
          note "ab profile $s [$side]: ncu exit $rc, NO METRICS (see ab/ncu/$side.$pn.metrics.csv)"
        fi
      elif ncu_report_pages "$tag"; then
        note "ab profile $s [$side]: ncu exit $rc, pages written"
      else
        note "ab profile $s [$side]: ncu exit $rc, NO REPORT (see ab/ncu/$side.$pn.run.txt)"
      fi
    done
    page=raw
    [ -n "${AB_PROFILE_METRICS:-}" ] && page=metrics
    for side in "${sides[@]:1}"; do
      [ -f "$OUT/ab/ncu/a.$pn.$page.csv" ] && [ -f "$OUT/ab/ncu/$side.$pn.$page.csv" ] || continue
      if [ -x .device/enter.sh ]; then
        {
          echo "## $s: B${side#b} (${ab_dirs[$((${side#b} - 1))]}) against A (the tree): ncu_diff, A first"
          if [ "$page" = metrics ]; then
            timeout 45 bash .device/enter.sh deno run -A bench/ncu_diff.ts "$OUT/ab/ncu/a.$pn.metrics.csv" \
              "$OUT/ab/ncu/$side.$pn.metrics.csv" --grep __ --factor 1.0001
            continue
          fi
          timeout 45 bash .device/enter.sh deno run -A bench/ncu_diff.ts "$OUT/ab/ncu/a.$pn.raw.csv" \
            "$OUT/ab/ncu/$side.$pn.raw.csv" --grep pcsamp_warps_issue_stalled --factor 1.1
          for x in a "$side"; do
            echo "### $x: sass_stalls"
            timeout 45 bash .device/enter.sh deno run -A bench/sass_stalls.ts "$OUT/ab/ncu/$x.$pn.sass.csv" --top 12
          done
        } >>"$OUT/ab_profile.md" 2>&1
      else
        note "ab profile: .device/enter.sh not carried: no comparison for $s (the pages are in ab.tgz)"
      fi
    done
  done
  [ -s "$OUT/ab_profile.md" ] || rm -f "$OUT/ab_profile.md"
  : >"$OUT/ab_table.md"
  for side in "${sides[@]:1}"; do
    label="B${side#b} (${ab_dirs[$((${side#b} - 1))]})"
    if [ -x .device/enter.sh ]; then
      echo "## $label against A (the tree)" >>"$OUT/ab_table.md"
      timeout 45 bash .device/enter.sh deno run -A bench/ab_table.ts "${ab_lists[a]}" "${ab_lists[$side]}" \
        --label-a "A (tree)" --label-b "$label" >>"$OUT/ab_table.md" 2>&1
      note "ab: $(grep -E 'speed-up, geomean' "$OUT/ab_table.md" | tail -1)"
      note "ab: $(grep -E '^- runs apart' "$OUT/ab_table.md" | tail -1)"
    else
      note "ab: .device/enter.sh not carried: no table for $label (the runs are in ab.tgz)"
    fi
  done
  (cd "$OUT" && tar czf ab.tgz ab && rm -rf ab)
fi

if has h2h && [ -z "${HUNG:-}" ]; then
  # Ours against DeepGEMM in one process on the same operands, in alternating rounds (tests/gpu/head_to_head.py;
  # H2H_FILTER, H2H_ROUNDS, H2H_SAMPLES, H2H_TIMEOUT; DeepGEMM on PYTHONPATH): h2h.json, and bench/h2h_table.ts's
  # report h2h.md, also written into bench/RESULTS.md's h2h region.
  # H2H_SHAPES: shapes outside the 45 (';'-separated, named as the tables name them), each a --shape of
  # head_to_head.py; without H2H_FILTER only they run. Such a run is not the table issue 26 gates on: RESULTS is left
  # alone, and bench/k_sweep.ts fits the shapes that differ only in K (its --shapes prints a sweep's H2H_SHAPES):
  # k_sweep.md.
  rm -f "$OUT/h2h.json" "$OUT/h2h.md" "$OUT/k_sweep.md"
  h2h_shape_args=()
  IFS=';' read -r -a h2h_shapes <<<"${H2H_SHAPES:-}"
  for s in ${h2h_shapes[@]+"${h2h_shapes[@]}"}; do [ -n "$s" ] && h2h_shape_args+=(--shape "$s"); done
  timeout "${H2H_TIMEOUT:-420}" python3 tests/gpu/head_to_head.py --lib "$CUDA_SO" --json "$OUT/h2h.json" \
    --rounds "${H2H_ROUNDS:-6}" --samples "${H2H_SAMPLES:-10}" ${H2H_FILTER:+--filter "$H2H_FILTER"} \
    ${h2h_shape_args[@]+"${h2h_shape_args[@]}"} >"$OUT/h2h.log" 2>&1
  note "h2h: exit $?; $(grep -c -E ' us, ratio ' "$OUT/h2h.log") shapes timed"
  grep -m1 'DeepGEMM unavailable' "$OUT/h2h.log" | while read -r line; do note "h2h skipped: $line"; done
  if [ -x .device/enter.sh ] && [ -f "$OUT/h2h.json" ]; then
    h2h_write=(--write bench/RESULTS.md)
    [ "${#h2h_shape_args[@]}" -gt 0 ] && h2h_write=()
    timeout 45 bash .device/enter.sh deno run -A bench/h2h_table.ts "$OUT/h2h.json" ${h2h_write[@]+"${h2h_write[@]}"} \
      --out "$OUT/h2h.md" >/dev/null 2>>"$OUT/h2h.log"
    note "h2h table: exit $?"
    # The family lines hold the 45 to issue 26's targets: not said of a sweep's shapes.
    [ "${#h2h_shape_args[@]}" -eq 0 ] &&
      grep -E '^\| (dense M|m-grouped|all) ' "$OUT/h2h.md" | while read -r line; do note "h2h $line"; done
    if [ "${#h2h_shape_args[@]}" -gt 0 ]; then
      timeout 45 bash .device/enter.sh deno run -A bench/k_sweep.ts "$OUT/h2h.json" --out "$OUT/k_sweep.md" \
        >/dev/null 2>>"$OUT/h2h.log"
      note "k sweep: exit $?"
      grep -E '^- ' "$OUT/k_sweep.md" | while read -r line; do note "k sweep $line"; done
    fi
  fi
fi

if has clocks && [ -z "${HUNG:-}" ]; then
  # Ours and DeepGEMM under sustained load (tests/gpu/sustained_clocks.py; CLOCK_SHAPES, ';'-separated, CLOCK_SECS,
  # CLOCK_ROUNDS; DeepGEMM on PYTHONPATH): per window of back-to-back calls, µs per call, the SM clock and board power
  # nvidia-smi sampled, and the cycles per call; clocks_probe.log.
  IFS=';' read -r -a cshapes <<<"${CLOCK_SHAPES:-dense 4096x7168x16384;dense 4096x4096x7168}"
  cargs=()
  for s in "${cshapes[@]}"; do cargs+=(--shape "$s"); done
  timeout "${CLOCK_TIMEOUT:-150}" python3 tests/gpu/sustained_clocks.py --lib "$CUDA_SO" "${cargs[@]}" \
    --secs "${CLOCK_SECS:-3}" --rounds "${CLOCK_ROUNDS:-3}" >"$OUT/clocks_probe.log" 2>&1
  note "clocks: exit $?"
  grep -E "us/call|unavailable|: ours: " "$OUT/clocks_probe.log" | while read -r line; do note "clocks $line"; done
fi

if has profile && [ -z "${HUNG:-}" ]; then
  # Nsight Compute (clocks left alone, as the device notes ask) on one launch per shape and configuration: the full
  # section set (speed of light, pipes, memory tables, warp states, scheduler) and the per-instruction SASS page with
  # its stall samples. PROFILE_SHAPES (dense MxNxK, one of the 45 or any other bench.cpp's --shape takes) and
  # PROFILE_CFGS (GO_CUDA_FAST_CFG strings, ';'-separated, "default" for the heuristic; one with dbg= runs on the
  # profiling build: dbg=1 times the feed alone, dbg=4 without promotion and wgmmas) pick them; PROFILE_SET (default
  # "full") the sections, or PROFILE_METRICS a comma-separated metric list (a few passes instead of the full set's
  # dozens: one CSV per run, ncu/<tag>.metrics.csv, no report pages). PROFILE_SECTIONS (space-separated section names,
  # "SourceCounters WarpStateStats") in place of the set. By default the profiled launch is the kernel's first, with
  # ncu's cache flush before each replay pass; PROFILE_WARM=N profiles its (N+1)-th, after N calls back to back
  # (bench.cpp --calls N+1), with the caches left as the launch before left them (--cache-control none), as in a timed
  # call, whose launch before is the same kernel. PROFILE_SAMPLING=N: a warp sample every 2^(5+N) cycles (ncu's
  # --sampling-interval, 0 to 31), for the stall samples of code that runs once a CTA, such as the prologue.
  # Where python3 imports deep_gemm, DeepGEMM's kernel on the same dense shapes too (tests/gpu/profile_deepgemm.py, the
  # benchmark's call). Everything comes back in ncu.tgz, with ncu/summary.txt's headline figures per run. bench's
  # watchdog is off there (--stall 0): the profiled launch's replay passes took longer than its 30 s, and it exited 3
  # after the report was written; the step's timeout still bounds it (the profiled launch's figures are written first).
  mkdir -p "$OUT/ncu"
  # A report's pages (ncu_report_pages), its headline metrics into summary.txt.
  ncu_pages() {
    ncu_report_pages "$OUT/ncu/$1" || return 0
    grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|L2 Cache Throughput|Issue Slots Busy|Eligible Warps" \
      "$OUT/ncu/$1.details.txt" | head -12 >>"$OUT/ncu/summary.txt"
  }
  # A metrics run's values (PROFILE_METRICS), one "name = value unit" per line, into summary.txt (ncu's CSV rows among
  # the profiled program's own output; a kernel name may hold commas, never '","').
  ncu_metrics() {
    local csv=$OUT/ncu/$1.metrics.csv
    [ -f "$csv" ] || return 0
    grep '^"[0-9]' "$csv" | awk -F'","' '{ v = $NF; gsub(/"/, "", v); print "  " $(NF - 2) " = " v " " $(NF - 1) }' \
      >>"$OUT/ncu/summary.txt"
  }
  # One profiled run: ncu_run TAG TITLE NCU-KERNEL-OPTIONS... -- PROGRAM ARGS..., with the full set (or PROFILE_SET)
  # into a report and its pages, or with PROFILE_METRICS into a CSV; its title and figures go into summary.txt.
  ncu_run() {
    local tag=$1 title=$2 limit=${PROFILE_TIMEOUT:-120} rc
    shift 2
    [ -n "${PROFILE_METRICS:-}" ] && limit=${PROFILE_TIMEOUT:-150}
    echo "==== ncu $tag: $title ====" >>"$OUT/ncu/summary.txt"
    ncu_profile "$OUT/ncu/$tag" "${PROFILE_METRICS:-}" "${pro_set-${PROFILE_SET:-full}}" "$limit" "$@"
    rc=$?
    note "ncu $tag $title: exit $rc"
    ncu_pages "$tag"
    ncu_metrics "$tag"
  }
  # The options PROFILE_WARM, PROFILE_SECTIONS and PROFILE_SAMPLING give every run (profile_options).
  profile_options() {
    pro_warm=${PROFILE_WARM:-0} pro_opts=()
    unset pro_set
    if ! [[ "$pro_warm" =~ ^[0-9]{1,3}$ ]]; then
      note "profile: PROFILE_WARM=\"$pro_warm\" is not a count of launches from 0 to 999: profiling the first launch"
      pro_warm=0
    fi
    [ "$pro_warm" -gt 0 ] && pro_opts+=(--cache-control none)
    if [ -n "${PROFILE_SECTIONS:-}" ]; then
      pro_set=
      for sec in $PROFILE_SECTIONS; do pro_opts+=(--section "$sec"); done
    fi
    if [ -n "${PROFILE_SAMPLING:-}" ]; then
      if ! [[ "$PROFILE_SAMPLING" =~ ^[0-9]{1,2}$ ]] || [ "$PROFILE_SAMPLING" -gt 31 ]; then
        note "profile: PROFILE_SAMPLING=\"$PROFILE_SAMPLING\" is not from 0 to 31: ncu's own sampling period"
      elif ncu --help 2>/dev/null | grep -q -- '--sampling-interval'; then
        pro_opts+=(--sampling-interval "$PROFILE_SAMPLING")
      else
        note "profile: this ncu has no --sampling-interval: PROFILE_SAMPLING ignored"
      fi
    fi
  }
  # One shape: ours under each of PROFILE_CFGS (tags p<n>, n counted across shapes), then DeepGEMM's kernel where
  # deep_gemm imports. With PROFILE_WARM=N the profiled launch is each kernel's (N+1)-th, after N calls back to back.
  profile_shape() {
    local shape=$1 cfg lib skip=()
    [ "$pro_warm" -gt 0 ] && skip=(--launch-skip "$pro_warm")
    for cfg in "${pcfgs[@]}"; do
      n=$((n + 1))
      lib=$CUDA_SO
      [[ "$cfg" == *dbg=* ]] && lib=$PROF_SO
      (
        [ "$cfg" != default ] && export GO_CUDA_FAST_CFG=$cfg
        ncu_run "p$n" "dense $shape [$cfg]" --kernel-name go_fp8_fast ${skip[@]+"${skip[@]}"} --launch-count 1 \
          ${pro_opts[@]+"${pro_opts[@]}"} "$B/bench" "$lib" --shape "dense $shape" --calls $((pro_warm + 1)) \
          --no-prepare --stall 0
      )
    done
    if python3 -c 'import deep_gemm' >/dev/null 2>&1; then
      # Without PROFILE_WARM its second launch, as before: the script's first call is not the one profiled.
      local dg_skip=$((pro_warm > 0 ? pro_warm : 1))
      ncu_run "dg_$shape" "DeepGEMM dense $shape" --kernel-name regex:sm90_fp8_gemm_1d2d --launch-skip "$dg_skip" \
        --launch-count 1 ${pro_opts[@]+"${pro_opts[@]}"} python3 tests/gpu/profile_deepgemm.py "dense $shape" \
        --calls $((dg_skip + 2))
    fi
  }
  IFS=';' read -r -a pcfgs <<<"${PROFILE_CFGS:-default}"
  n=0
  profile_options
  for shape in ${PROFILE_SHAPES:-4096x7168x16384 128x7168x16384}; do profile_shape "$shape"; done
  (cd "$OUT" && tar czf ncu.tgz ncu && rm -rf ncu)
fi

if has trace && [ -z "${HUNG:-}" ]; then
  # The profiling build's cycle trace of CTA 0 (GO_CUDA_FAST_CFG=dbg=$TRACE_DBG, default 64, plus TRACE_CFG) on
  # TRACE_FILTER's shapes: per K block (producer and math), per tile of the first math thread (setup, K loop,
  # epilogue) and, over pipeline iterations 64-95, both math warpgroups' wgmma batches (issued, waited for),
  # summarised by bench/trace_table.ts into trace_table.md; trace.log holds the raw lines. TRACE_DBG=128: the light
  # trace (the first 4 iterations and the tiles, which slows the kernel less). Needs the build step in the same STEPS
  # (the profiling library is built only where a step that uses it is asked for).
  # TRACE_AB=1: each copy of AB_SOURCES too, on its profiling build (made by the build step in the same call), into
  # trace.b<i>.log and trace_table.b<i>.md.
  trace_lib() {
    local tag=$1 so=$2 log=$OUT/trace$1.log
    GO_CUDA_FAST_CFG=dbg=${TRACE_DBG:-64}${TRACE_CFG:+,$TRACE_CFG} GO_CUDA_ASYNC=1 timeout "${TRACE_TIMEOUT:-120}" \
      "$B/bench" "$so" \
      --filter "${TRACE_FILTER:-dense 4096x7168x2048|dense 4096x32768x512|contiguous 4x8192x4096x2048}" >"$log" 2>&1
    note "trace$tag: exit $?, $(grep -c '^fast trace' "$log") traces"
    if [ -x .device/enter.sh ]; then
      timeout 45 bash .device/enter.sh deno run -A bench/trace_table.ts "$log" >"$OUT/trace_table$tag.md" 2>&1
      note "trace table$tag: exit $? (trace_table$tag.md)"
    fi
  }
  if [ ! -f "$PROF_SO" ]; then
    note "trace: skipped: no profiling library ($PROF_SO): run the build step with trace in the same STEPS"
  else
    trace_lib "" "$PROF_SO"
  fi
  if [ "${TRACE_AB:-0}" = 1 ]; then
    for i in "${!ab_dirs[@]}"; do
      so=$B/ab/$((i + 1))/prof/libgo_cuda_prof.so
      if [ -f "$so" ]; then
        trace_lib ".b$((i + 1))" "$so"
      else
        note "trace.b$((i + 1)): skipped: no profiling library for ${ab_dirs[$i]} ($so): run the build step with trace" \
          "and TRACE_AB=1 in the same STEPS"
      fi
    done
  fi
fi

if has probe && [ -z "${HUNG:-}" ]; then
  # The large-M K loop taken apart (tests/gpu/ffma_wgmma_probe.cu: cycles per K block of the BLOCK_M 256 x BLOCK_N 128
  # loop, and of one 64-row wave per math warpgroup, per variant: the promotion's FMAs, the scales, the ring's copies
  # and barriers); PROBE_ARGS="--only WORD" runs the rows whose name contains WORD; probe.log, the table twice (two runs
  # in a row).
  { timeout "${PROBE_TIMEOUT:-120}" "$B/ffma_wgmma_probe" ${PROBE_ARGS:-}; echo "probe exit $?"
    timeout "${PROBE_TIMEOUT:-120}" "$B/ffma_wgmma_probe" ${PROBE_ARGS:-}; echo "probe exit $?"; } >"$OUT/probe.log" 2>&1
  note "probe: $(grep -c '^probe exit 0' "$OUT/probe.log") of 2 runs exit 0 (probe.log)"
fi

if has sass; then
  # SASS of the JIT kernels in the cache ($B/jit) whose configuration line matches SASS_GREP (default: the BLOCK_M
  # 256 shape kernel of 4096 x 7168 x 16384), for reading the K loop's instruction schedule; back in sass.tgz.
  mkdir -p "$OUT/sass"
  for cu in "$B"/jit/*.cu; do
    [ -f "$cu" ] || continue
    if head -1 "$cu" | grep -qE "${SASS_GREP:-bm=256 bn=128}"; then
      cubin=${cu%.cu}.cubin
      [ -f "$cubin" ] && { head -1 "$cu"; cuobjdump -sass "$cubin"; } >"$OUT/sass/$(basename "$cu" .cu).sass" 2>&1
    fi
  done
  note "sass: $(ls "$OUT/sass" | wc -l) kernels dumped"
  (cd "$OUT" && tar czf sass.tgz sass && rm -rf sass)
fi

if has verify; then
  # The suite's own verify through Deno; guarded so a failure here cannot hide the driver's results above.
  if [ -x .device/enter.sh ]; then
    timeout ${VERIFY_TIMEOUT:-180} bash .device/enter.sh deno task verify --backend cuda ${VERIFY_ARGS:-} \
      --json "$OUT/verify.json" >"$OUT/verify.log" 2>&1
    note "deno task verify --backend cuda ${VERIFY_ARGS:-}: exit $?; $(grep -E '^verify: [0-9]+ cases' "$OUT/verify.log" | tail -1)"
    # The DeepSeek-V3 table at its real M (the 45 shapes bench.cpp times, up to 32768 rows, ~10 GB of operands built
    # one case at a time; the reference's sampled tiles on the native CPU backend, all cores), its own report.
    timeout ${VERIFY_FULL_TIMEOUT:-1200} bash .device/enter.sh deno task verify --backend cuda --suite deepseek-v3-full \
      --sample ${VERIFY_FULL_SAMPLE:-0.01} --json "$OUT/verify_deepseek_v3_full.json" >"$OUT/verify_deepseek_v3_full.log" 2>&1
    note "verify --suite deepseek-v3-full --sample ${VERIFY_FULL_SAMPLE:-0.01} --backend cuda: exit $?; $(grep -E '^verify: [0-9]+ cases' "$OUT/verify_deepseek_v3_full.log" | tail -1)"
    # A real CUDA fault in a command backend: one ERROR row naming it, a fresh adapter, every other case passing.
    rm -f /tmp/gemm_oracle_cuda_fault.marker
    timeout 300 bash .device/enter.sh deno task verify --backend 'cmd:python3 tests/gpu/cuda_fault_adapter.py' \
      --ops fp8_gemm_nt --suite fixtures --json "$OUT/verify_cuda_fault.json" >"$OUT/verify_cuda_fault.log" 2>&1
    note "verify with a CUDA fault in the adapter (one ERROR expected): exit $?; $(grep -E '^verify: [0-9]+ cases' "$OUT/verify_cuda_fault.log" | tail -1); $(grep -m1 -oE 'CUDA error[^|]{0,80}' "$OUT/verify_cuda_fault.log")"
  else
    note "verify: .device/enter.sh not carried"
  fi
fi
if has torch; then
  # PyTorch interop and vendor cross-check (fixtures load in torch; quantizers on CUDA; oracle run vs cuBLASLt).
  if [ -x .device/enter.sh ]; then
    timeout ${TORCH_TIMEOUT:-240} bash .device/enter.sh python3 tests/gpu/torch_interop_check.py >"$OUT/torch.log" 2>&1
    note "torch interop check: exit $?; $(tail -1 "$OUT/torch.log")"
    # The Python package's tests with torch present (CI has numpy only): torch tensors in and out, CUDA included.
    PYTHONPATH=python GEMM_ORACLE_DENO=$PWD/.device/bin/deno timeout 300 bash .device/enter.sh python3 -m pytest -q \
      -p no:cacheprovider python/tests >"$OUT/python_pkg.log" 2>&1
    note "python package tests with torch: exit $?; $(tail -1 "$OUT/python_pkg.log")"
  else
    note "torch: .device/enter.sh not carried"
  fi
fi
if has adapters; then
  # The Python adapters as verify backends (cmd:), over ADAPTERS_SUITE (default all), each in its own verify, both at
  # once; then adapters/extra_cases.ts (declared ops the suites never reach) on each. DeepGEMM must already be
  # importable (the caller puts it on PYTHONPATH; this script never builds it); without it, or without torch, the
  # adapter is skipped with the reason.
  if [ ! -x .device/enter.sh ]; then
    note "adapters: .device/enter.sh not carried"
  elif ! python3 -c 'import torch' >/dev/null 2>&1; then
    note "adapters: skipped: python3 cannot import torch"
  else
    names=torch
    if python3 -c 'import deep_gemm' >/dev/null 2>&1; then
      names="deepgemm torch"
    else
      note "adapters: deepgemm skipped: python3 cannot import deep_gemm ($(python3 -c 'import deep_gemm' 2>&1 | tail -1))"
    fi
    adapter_verify() {
      timeout "${ADAPTERS_TIMEOUT:-480}" bash .device/enter.sh deno task verify --backend "cmd:python3 adapters/$1.py" \
        --suite "${ADAPTERS_SUITE:-all}" ${ADAPTERS_ARGS:-} --json "$OUT/adapters_$1.json" >"$B/adapters_$1.log" 2>&1
      echo "verify exit $?" >>"$B/adapters_$1.log"
      if [ "${ADAPTERS_EXTRA:-1}" != 0 ]; then
        timeout 240 bash .device/enter.sh deno run -A adapters/extra_cases.ts --backend "cmd:python3 adapters/$1.py" \
          --json "$OUT/adapters_extra_$1.json" >>"$B/adapters_$1.log" 2>&1
        echo "extra_cases exit $?" >>"$B/adapters_$1.log"
      fi
    }
    for n in $names; do adapter_verify "$n" & done
    wait
    : >"$OUT/adapters.log"
    for n in $names; do
      { echo "==== adapters/$n.py ===="; cat "$B/adapters_$n.log"; } >>"$OUT/adapters.log"
      note "adapters [$n] --suite ${ADAPTERS_SUITE:-all}: $(grep -m1 '^verify exit' "$B/adapters_$n.log"); $(grep -E '^verify: [0-9]+ cases' "$B/adapters_$n.log" | tail -1)"
      [ "${ADAPTERS_EXTRA:-1}" != 0 ] && note "adapters [$n] extra cases: $(grep -m1 '^extra_cases exit' "$B/adapters_$n.log"); $(grep -E '^extra cases: ' "$B/adapters_$n.log" | tail -1)"
    done
  fi
fi
if has identify; then
  # Real kernels' outputs for `oracle identify` (tests/gpu/record_identify.sh): cuBLASLt with and without fast
  # accumulation, DeepGEMM where deep_gemm imports, this project's CUDA backend; identify must name each variant.
  if [ -x .device/enter.sh ]; then
    OUT=$OUT timeout ${IDENTIFY_TIMEOUT:-300} bash tests/gpu/record_identify.sh >"$OUT/identify.out" 2>&1
    note "identify recordings: exit $?; $(tail -1 "$OUT/identify.out")"
  else
    note "identify: .device/enter.sh not carried"
  fi
fi
# PACK=1: every report under $OUT but summary.txt into reports.tgz, the originals removed, so that a caller that brings
# back only a few files of a run from a remote GPU machine still gets all of them; summary.txt stays beside it.
if [ "${PACK:-0}" = 1 ]; then
  if (cd "$OUT" && find . -type f ! -path ./summary.txt ! -path ./reports.tgz | sort |
    tar czf reports.tgz --remove-files -T -); then
    find "$OUT" -mindepth 1 -type d -empty -delete
    note "reports: $(tar tzf "$OUT/reports.tgz" | wc -l) files in reports.tgz"
  else
    note "reports: packing failed; the reports stay as they are"
  fi
fi
cat "$SUMMARY"
