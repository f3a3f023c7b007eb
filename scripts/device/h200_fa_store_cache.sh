#!/usr/bin/env bash
# Second session of 2026-12-02: the epilogue's output stores with the .cs cache operator (--fa-store-cache
# streaming, every variant) against the default stores, side by side in one call. Found in the call before
# (h200_fa_layout.sh): an FA launch right after another Ulysses-layout FA launch runs ~12% longer at 8K even
# with a stream sync between them, with P = 1 as with P = 8, while one after a copy does not. (1) build; the
# FlashAttention GPU tests with the new bit-equality test; memcheck on it; (2) local 8K..64K, 10 rounds, default
# then streaming, cuDNN SDPA attached to both; (3) host with streaming stores, predicted from the same-session
# calibration A (04f8f90-verdicts). nvidia-smi samples every 100 ms. Returns: results.tar.gz, logs.tar.gz,
# clocks.txt. Usage there: bash scripts/device/h200_fa_store_cache.sh  (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
M_LIST=8192,16384,32768,49152,65536
FA_MODEL=results/h200/archive/2026-12-02-04f8f90/fa_a2a-verdicts/calibration-host-small-k-A.json
DEADLINE_S=${DEADLINE_S:-540}
SECONDS=0
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 >"$LOGS/smi.csv" 2>&1 &
SMI_PID=$!
finish() { kill "$SMI_PID" 2>/dev/null; rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_attention_tests xstage-bench \
  >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter='Shapes/*:FlashAttentionTileScheduler.*:FlashAttentionStoreCache.*:FlashAttentionValidation.*:FaRunner*:FaSender*:FaA2a*'
run_step memcheck 60 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionStoreCache.*'
clocks "before local"
for cache in default streaming; do
  run_step "local_$cache" 80 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps 10 \
    --fa-store-cache "$cache" --out "$RES/fa-a2a-local-$cache.json" --no-progress
done
for cache in default streaming; do
  [[ -f "$RES/fa-a2a-local-$cache.json" ]] &&
    run_step "cudnn_$cache" 45 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local-$cache.json" --clock-probes 5
done
clocks "after local"
run_step host_streaming 80 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host --fa-store-cache streaming \
  --model "$FA_MODEL" --out "$RES/fa-a2a-host-streaming.json" --no-progress
clocks "after"
stamp done
