#!/usr/bin/env bash
# Fifth session of 2026-12-02 (issue 13), last call: the split tail with its Q-loop on the uniform datapath
# (80998068: whole and split alike in SASS; FA-only with K/V clusters 2 and 2 pieces 1.011 / 1.041 / 1.069 /
# 1.078 / 1.079 of cuDNN at 8K-64K) on the fused path: (1) d 64 beside cuDNN, whole and split, clusters 1 and 2;
# (2) host: a small-K calibration, then fa_a2a --target host 8K..64K, K/V clusters 1, split tail 2 and whole
# tiles (the verdicts, same call); (3) local 8K..64K with the split tail (the |E_res| <= 0.5% bar).
# Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: DEADLINE_S=480 bash scripts/device/h200_fa_split_host.sh  (device tool: timeout_s 520, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
DEADLINE_S=${DEADLINE_S:-480}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xstage-bench xstage-calibrate xstage_fa || exit 1
run_step paired_d64 60 "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so --out "$RES/fa-vs-cudnn-d64.json" \
  --M 8192,32768 --head-dim 64 --blocks 3 --kv-clusters 1,2 --heads-major-kv '' --tail-splits-kv 1,2 --tail-splits 2
run_step calibrate 45 build/bin/xstage-calibrate --backend gpu --target host --config configs/calibrate/host-small-k.json \
  --out "$RES/calibration-host-small-k.json" --no-progress
for ts in 2 1; do
  [[ -f "$RES/calibration-host-small-k.json" ]] &&
    run_step "host_kv1_ts$ts" 90 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host \
      --fa-tail-splits "$ts" --model "$RES/calibration-host-small-k.json" --out "$RES/fa-a2a-host-kv1-ts$ts.json" \
      --no-progress
done
run_step local_kv1_ts2 90 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps 10 \
  --fa-tail-splits 2 --out "$RES/fa-a2a-local-kv1-ts2.json" --no-progress
clocks "after"
stamp done
