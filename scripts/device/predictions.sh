#!/usr/bin/env bash
# Issue 27, predictions that could have been wrong: (1) build; (2) a host calibration (CONFIG, default
# configs/calibrate/host-fa.json: every gap sweep past V/R, and FA-A2A's own burst shape, K = 132 x 32 KiB);
# (3) fa_a2a on TARGET at the M list with --model that calibration: each point's frozen prediction exists before
# its launches run (the calibration file is written first, nothing is refitted to the points); (4) fa-score
# of the new file against the new calibration (out of sample for the rule in attention/judge/fa_judgement.hpp where it was written before these
# data). Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: CONFIG=... MS=8192,16384 bash scripts/device/predictions.sh   (device tool: timeout_s <= 600)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
CONFIG=${CONFIG:-configs/calibrate/host-fa.json}
MS=${MS:-3072,4096,5120,6144,8192,16384,32768,65536}
TARGET=${TARGET:-host}
DEADLINE_S=${DEADLINE_S:-520}
CAL_LIMIT=${CAL_LIMIT:-200}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xstage-bench xstage-calibrate xstage-predict || exit 1
clocks "before"
run_step calibrate "$CAL_LIMIT" build/bin/xstage-calibrate --backend gpu --target "$TARGET" --config "$CONFIG" \
  --out "$RES/calibration-$TARGET-fa.json" --no-progress
if [[ -f "$RES/calibration-$TARGET-fa.json" ]]; then
  run_step fa_a2a 240 build/bin/xstage-bench fa_a2a --M "$MS" --heads 8 --target "$TARGET" \
    --model "$RES/calibration-$TARGET-fa.json" --out "$RES/fa-a2a-$TARGET.json" --no-progress
  [[ -f "$RES/fa-a2a-$TARGET.json" ]] &&
    run_step fa_score 60 build/bin/xstage-predict fa-score "$RES/fa-a2a-$TARGET.json" \
      --model "$RES/calibration-$TARGET-fa.json" --out "$RES/prediction-score-$TARGET.json"
  cat "$LOGS/fa_score.txt" 2>/dev/null
fi
clocks "after"
stamp "done"
