#!/usr/bin/env bash
# Prepared at the end of the third session of 2026-12-02 for the next one (not yet run): every FlashAttention
# GPU test (the graph-position diagnostic and the review's test additions had not run on a GPU), then local
# 8K..64K with LOCAL_REPS rounds (default 30), --fa-kv-cluster 1 and 2, cuDNN SDPA attached to both. The new
# measured.timeline.fa_only_by_position in each point says, per launch position in a round of 5, the span, the
# clock and the span in cycles for stream launches and for the same launches replayed as a CUDA graph.
# Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: [LOCAL_REPS=30] bash scripts/device/h200_fa_position.sh  (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
LOCAL_REPS=${LOCAL_REPS:-30}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests xstage-bench || exit 1
run_step fa_tests 150 build/bin/xs_gpu_attention_tests
run_step memcheck 75 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionKvCluster.*'
clocks "before local"
for cluster in 1 2; do
  run_step "local_kv$cluster" 170 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local \
    --reps "$LOCAL_REPS" --fa-kv-cluster "$cluster" --out "$RES/fa-a2a-local-kv$cluster.json" --no-progress
done
for cluster in 1 2; do
  [[ -f "$RES/fa-a2a-local-kv$cluster.json" ]] &&
    run_step "cudnn_kv$cluster" 50 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local-kv$cluster.json" --clock-probes 5
done
clocks "after"
stamp done
