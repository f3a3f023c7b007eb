#!/usr/bin/env bash
# Third session of 2026-12-02: K/V clusters of 2 (--fa-kv-cluster 2: the two m-blocks of a head on the two
# CTAs of a cluster, each loading half of every K/V tile and multicasting it to both: half the K/V traffic from
# L2 to the SMs, the estimate of the session before put it near the L2's limit at ~5.6 TB/s). (1) build; the
# FlashAttention GPU tests with the new cluster test; memcheck and racecheck on it; (2) local 8K..64K,
# LOCAL_REPS rounds (default 10), --fa-kv-cluster 1 then 2, cuDNN SDPA attached to both (side by side in one
# call); (3) with LONE=1 also 8K and 16K with one launch per graph, both cluster sizes. FA_TESTS: the gtest
# filter of step (1) (default: the cluster, tile-scheduler, validation and shape tests; '*' every FA GPU test).
# nvidia-smi samples every 100 ms. Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: [LOCAL_REPS=30] [LONE=1] [FA_TESTS='*'] bash scripts/device/h200_fa_kv_cluster.sh  (device tool:
# timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
LOCAL_REPS=${LOCAL_REPS:-10}
DEADLINE_S=${DEADLINE_S:-540}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests xstage-bench || exit 1
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter="${FA_TESTS:-FlashAttentionKvCluster.*:FlashAttentionTileScheduler.*:FlashAttentionValidation.*:Shapes/*}"
run_step memcheck 75 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionKvCluster.*'
run_step racecheck 75 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionKvCluster.*'
clocks "before local"
for cluster in 1 2; do
  run_step "local_kv$cluster" 150 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local \
    --reps "$LOCAL_REPS" --fa-kv-cluster "$cluster" --out "$RES/fa-a2a-local-kv$cluster.json" --no-progress
done
for cluster in 1 2; do
  [[ -f "$RES/fa-a2a-local-kv$cluster.json" ]] &&
    run_step "cudnn_kv$cluster" 50 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local-kv$cluster.json" --clock-probes 5
done
if [[ ${LONE:-0} == 1 ]]; then
  for cluster in 1 2; do
    run_step "lone_kv$cluster" 40 build/bin/xstage-bench fa_a2a --M 8192,16384 --heads 8 --target local \
      --launches-per-graph 1 --fa-kv-cluster "$cluster" --out "$RES/fa-a2a-local-L1-kv$cluster.json" --no-progress
  done
fi
clocks "after"
stamp done
