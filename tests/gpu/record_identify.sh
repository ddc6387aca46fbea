#!/usr/bin/env bash
# On an H200 (run by tests/gpu/run.sh's `identify` step): writes the inputs of tests/identify/h200_inputs.ts, runs each
# real kernel on them (cuBLASLt through adapters/torch.py with and without fast accumulation, DeepGEMM through
# adapters/deepgemm.py when deep_gemm imports, this project's CUDA backend), then `oracle identify` on every output,
# and packs inputs, outputs and the identify log into $OUT/identify_h200.tgz (to be kept under tests/identify/h200/).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
D=${RECORD_DIR:-/tmp/identify_h200}
rm -rf "$D" && mkdir -p "$D"
log="$D/identify.log"
bash .device/enter.sh deno run -A tests/identify/h200_inputs.ts "$D" >"$D/commands.txt" 2>&1 || { cat "$D/commands.txt"; exit 1; }
has_dg=0; python3 -c 'import deep_gemm' 2>/dev/null && has_dg=1
while IFS= read -r run && IFS= read -r then; do
  case "$run" in *deepgemm.py*) [ $has_dg = 1 ] || { echo "skipped (deep_gemm not importable): $run" >>"$log"; continue; } ;; esac
  echo "\$ ${run#deno task }" >>"$log"
  eval "timeout 300 bash .device/enter.sh $run" >>"$log" 2>&1 || { echo "run failed: exit $?" >>"$log"; continue; }
  cmd=${then#  then: }; expect=${cmd##*# must name: }; cmd=${cmd%%   #*}
  echo "\$ ${cmd#deno task }   (must name: $expect)" >>"$log"
  eval "timeout 300 bash .device/enter.sh $cmd" >>"$log" 2>&1; echo "identify exit $?" >>"$log"
done <"$D/commands.txt"
(cd "$D" && tar czf "$OUT/identify_h200.tgz" .)
grep -c "identify exit 0" "$log" | xargs echo "identify runs that exited 0:"
