#!/usr/bin/env bash
# The remote-store calibration of one target in one device call (issue 9's protocol, behind results/h200/calibration/),
# in PARTS, run in this order whatever order they are given in:
#   tests        the remote-store GPU tests (build/bin/xs_gpu_tests, CTest gpu.gpu)
#   memcheck     compute-sanitizer memcheck on the scattered-row points (every width, kind and target; 2-warp
#                producers on every SM)
#   run1, run2   the default calibration with its points (--points): results/cal-run1.json, results/cal-run2.json
#                (back to back: the run-to-run spread)
#   scattered    the MegaMoE store pattern, scattered 256-B rows from 64-thread producers: results/cal-scattered.json
#                (committed as calibration-host-scattered-2warp.json and as megamoe/calibration-moe-pattern.json)
#   gate         xstage-gate of cal-run2 against cal-run1 (configs/gate/calibration.json):
#                results/gate-run2-vs-run1.{txt,xml}
#   diagnostics  with cal-run1 (or DIAG_MODEL) as the model: zero-gap bursts across K with completion fences
#                (results/completion-zero-gap.json) and bursts that rewrite the same lines (results/same-lines.json)
#   plots        scripts/plot_calibration.py of every results/cal-*.json: results/cal-*.png
# Usage there: OUT=<dir> [PARTS="tests memcheck run1 run2 scattered gate plots"] [TARGET=host] [CAL_ARGS=...]
#              [DEADLINE_S=480] bash scripts/device/calibration.sh
# CAL_ARGS: extra xstage-calibrate flags for run1, run2 and scattered (e.g. "--config configs/calibrate/...").
# Returns: results.tar.gz, logs.tar.gz (each step's log, env.txt, smi.csv.gz), clocks.txt.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
PARTS=${PARTS:-"tests memcheck run1 run2 scattered gate plots"}
TARGET=${TARGET:-host}
CAL_ARGS=${CAL_ARGS:-}
DIAG_MODEL=${DIAG_MODEL:-$RES/cal-run1.json}
DEADLINE_S=${DEADLINE_S:-480}
SECONDS=0
ORDER="tests memcheck run1 run2 scattered gate diagnostics plots"
source "$(dirname "$0")/lib.sh"
check_parts calibration.sh "$ORDER"
start_call
targets=()
{ want tests || want memcheck; } && targets+=(xs_gpu_tests)
{ want run1 || want run2 || want scattered; } && targets+=(xstage-calibrate)
want gate && targets+=(xstage-gate)
want diagnostics && targets+=(xstage-bench)
if ((${#targets[@]})); then build_targets "${targets[@]}" || exit 1; fi
clocks start
want tests && run_step gpu_tests 150 build/bin/xs_gpu_tests
want memcheck && run_sanitizers 240 build/bin/xs_gpu_tests \
  '*_scattered:*TwoWarpProducers*:*ScatteredRowsNeedWholeRows' memcheck
calibrate() {  # calibrate NAME FLAGS...: one xstage-calibrate run into $RES/NAME.json
  local name=$1; shift
  clocks "before $name"
  # shellcheck disable=SC2086  # CAL_ARGS: flags, split at spaces
  run_step "$name" 150 build/bin/xstage-calibrate --target "$TARGET" --no-progress --points "$@" $CAL_ARGS \
    --out "$RES/$name.json"
  clocks "after $name"
  grep -E "R \(|K=|issue |period |isolated |took|convergence" "$LOGS/$name.txt" | head -20
}
want run1 && calibrate cal-run1
want run2 && calibrate cal-run2
want scattered && calibrate cal-scattered --address-mode scattered --threads 64
if want gate; then
  run_step gate 30 build/bin/xstage-gate --baseline "$RES/cal-run1.json" --candidate "$RES/cal-run2.json" \
    --config configs/gate/calibration.json --junit "$RES/gate-run2-vs-run1.xml"
  cp "$LOGS/gate.txt" "$RES/gate-run2-vs-run1.txt"
  grep -vE "^SAME" "$LOGS/gate.txt" | tail -15
fi
if want diagnostics; then
  run_step completion_zero_gap 90 build/bin/xstage-bench remote_store.periodic --target "$TARGET" --K 16,33,66,132 \
    --B 64KiB --G 0 --completion --model "$DIAG_MODEL" --out "$RES/completion-zero-gap.json" --no-progress
  run_step same_lines 60 build/bin/xstage-bench remote_store.periodic --target "$TARGET" --K 132 --B 2KiB --G 0 \
    --address-mode same --bursts 512 --warmup 64 --model "$DIAG_MODEL" --out "$RES/same-lines.json" --no-progress
fi
if want plots; then
  for file in "$RES"/cal-*.json; do
    [[ -f $file ]] || continue
    run_step "plot-$(basename "$file" .json)" 60 "$PY" scripts/plot_calibration.py "$file" --out "${file%.json}.png"
  done
fi
clocks end
stamp "done"
