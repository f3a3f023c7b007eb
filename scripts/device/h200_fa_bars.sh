#!/usr/bin/env bash
# Sixth session of 2026-12-02 (issue 13): the issue's three bars in one call, side by side. (1) FA-only against
# cuDNN SDPA in one process (scripts/fa_vs_cudnn.py), d 128, 8 heads, 8K-64K, K/V clusters 1 and 2; (2) the host
# small-K calibration, then fa_a2a --target host 8K-64K with it (the default kernel: the verdicts, now with the
# critical path of each launch in the file); (3) fa_a2a --target local 8K-64K (|E_res| <= 0.5% of T_FA).
# Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: DEADLINE_S=560 bash scripts/device/h200_fa_bars.sh  (device tool: timeout_s 600, carry .xs-git-sha)
# Switches: M_LIST, BLOCKS (fa_vs_cudnn's sustained blocks), PAIRED_S (its limit), LOCAL_REPS, HOST_KV2;
# GRID_KV (third call): FA-only contenders on a grid of GRID (default 128) CTAs for those K/V cluster sizes.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xstage-bench xstage-calibrate xstage_fa || exit 1
clocks "before paired"
run_step paired_d128 "${PAIRED_S:-210}" "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so \
  --out "$RES/fa-vs-cudnn-d128.json" --M "$M_LIST" --blocks "${BLOCKS:-3}" --kv-clusters 1,2 --heads-major-kv '' \
  ${GRID_KV:+--grid-kv "$GRID_KV" --grid "${GRID:-128}"}
clocks "after paired"
run_step calibrate 45 build/bin/xstage-calibrate --backend gpu --target host --config configs/calibrate/host-small-k.json \
  --out "$RES/calibration-host-small-k.json" --no-progress
[[ -f "$RES/calibration-host-small-k.json" ]] &&
  run_step host 100 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host \
    --model "$RES/calibration-host-small-k.json" --out "$RES/fa-a2a-host.json" --no-progress
clocks "after host"
run_step local 90 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps "${LOCAL_REPS:-10}" \
  --out "$RES/fa-a2a-local.json" --no-progress
# HOST_KV2=1 (second call): fa_a2a host with K/V clusters of 2 as well, the same calibration (their critical paths:
# why clusters hide worse on host).
[[ ${HOST_KV2:-0} == 1 && -f "$RES/calibration-host-small-k.json" ]] &&
  run_step host_kv2 100 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host --fa-kv-cluster 2 \
    --model "$RES/calibration-host-small-k.json" --out "$RES/fa-a2a-host-kv2.json" --no-progress
clocks "after"
stamp done
