#!/usr/bin/env bash
# Third session of 2026-12-02: K/V clusters of 2 (--fa-kv-cluster 2: the two m-blocks of a head on the two
# CTAs of a cluster, each loading half of every K/V tile and multicasting it to both: half the K/V traffic from
# L2 to the SMs, the estimate of the session before put it near the L2's limit at ~5.6 TB/s). (1) build; the
# FlashAttention GPU tests with the new cluster test; memcheck and racecheck on it; (2) local 8K..64K, 10
# rounds, --fa-kv-cluster 1 then 2, cuDNN SDPA attached to both (side by side in one call). nvidia-smi samples
# every 100 ms. Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_kv_cluster.sh  (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
DEADLINE_S=${DEADLINE_S:-540}
SECONDS=0
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 >"$LOGS/smi.csv" 2>&1 &
SMI_PID=$!
finish() { kill "$SMI_PID" 2>/dev/null; gzip -f "$LOGS/smi.csv"; rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_attention_tests xstage-bench \
  >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionKvCluster.*:FlashAttentionTileScheduler.*:FlashAttentionValidation.*:Shapes/*'
run_step memcheck 75 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionKvCluster.*'
run_step racecheck 75 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionKvCluster.*'
clocks "before local"
for cluster in 1 2; do
  run_step "local_kv$cluster" 80 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps 10 \
    --fa-kv-cluster "$cluster" --out "$RES/fa-a2a-local-kv$cluster.json" --no-progress
done
for cluster in 1 2; do
  [[ -f "$RES/fa-a2a-local-kv$cluster.json" ]] &&
    run_step "cudnn_kv$cluster" 50 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local-kv$cluster.json" --clock-probes 5
done
clocks "after"
stamp done
