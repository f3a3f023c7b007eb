#!/usr/bin/env bash
# Fourth session of 2026-12-02, last call (issue 13, the 8K span-to-period gap): in sustained graph replays FA-only
# takes ~800 k cycles per launch at 8K while its instrumented launches span ~711-739 k cycles; graph vs eager,
# instrumentation and the barrier after the stores were excluded (f5729ae-records). Here the by-position
# timelines also keep, for positions >= 1, the gap from the previous launch's last store issued to this one's
# first tile start and the period between first tile starts (measured.timeline.fa_only_by_position.*[k].
# gap_from_previous_s / period_from_previous_s): is the missing time between the launches or inside them?
# local 8K and 16K, 10 rounds, K/V clusters 1 and 2. Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: DEADLINE_S=150 bash scripts/device/h200_fa_period.sh (device tool: timeout_s 200, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
DEADLINE_S=${DEADLINE_S:-150}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xstage-bench || exit 1
for cluster in 1 2; do
  run_step "local_kv$cluster" 45 build/bin/xstage-bench fa_a2a --M 8192,16384 --heads 8 --target local --reps 10 \
    --fa-kv-cluster "$cluster" --out "$RES/fa-a2a-local-kv$cluster.json" --no-progress
done
clocks "after"
stamp done
