#!/usr/bin/env bash
# Issue 13, host verdicts: the phase-aware burst of the dynamic-scheduler FlashAttention has 14-26 CTAs storing
# at once, where the committed host calibration has no isolated bursts. (1) build; (2) xstage-calibrate on
# host with configs/calibrate/host-small-k.json (the default sweep + isolated bursts at K = 12..26, B = 16..64
# KiB in 4 KiB steps); (3) fa_a2a --target host at M = 8K..64K with predictions from that new calibration (made
# before the points run; nothing refitted to them). Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_small_k.sh   (device tool: timeout_s 300, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
DEADLINE_S=${DEADLINE_S:-280}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xstage-bench xstage-calibrate \
  >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
clocks "before"
run_step calibrate 90 build/bin/xstage-calibrate --backend gpu --target host --config configs/calibrate/host-small-k.json \
  --out "$RES/calibration-host-small-k.json" --no-progress
[[ -f "$RES/calibration-host-small-k.json" ]] &&
  run_step host 120 build/bin/xstage-bench fa_a2a --M 8192,16384,32768,49152,65536 --heads 8 --target host \
    --model "$RES/calibration-host-small-k.json" --out "$RES/fa-a2a-host-small-k.json" --no-progress
clocks "after"
stamp done
