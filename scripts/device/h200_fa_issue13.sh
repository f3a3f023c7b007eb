#!/usr/bin/env bash
# Issue 13's bars in one device call, side by side: (1) build; the FlashAttention GPU tests; racecheck on small FlashAttention points (both
# tile schedulers' paths: default dynamic); (2) fa_a2a --target local, M = 8K..64K, 8 heads, d = 128, 30 rounds
# (E_res by time and clock-normalized, FA-only rotated and alone), pinned cuDNN SDPA attached in the same call;
# (3) fa_a2a --target host with the committed host calibration (verdicts, Q bracket, sigma under load);
# (4) d = 64 local with cuDNN. Returns: summary.txt, results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_issue13.sh   (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
FA_MODEL=results/h200/calibration/calibration-host.json
M_LIST=8192,16384,32768,49152,65536
DEADLINE_S=${DEADLINE_S:-570}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_attention_tests xstage-bench \
  >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter='Shapes/*:FlashAttentionTileScheduler.*:FlashAttentionValidation.*:Schedules/*:FaRunner*:FaSender*:FaA2a*'
run_step racecheck 60 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='Shapes/FlashAttention.*/H1_M256_q1_ctas0_P1_d128:Shapes/FlashAttention.*/H4_M1024_q1_ctas5_P8_d128'
clocks "before local"
run_step local 200 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps 30 \
  --out "$RES/fa-a2a-local.json" --no-progress
clocks "after local"
[[ -f "$RES/fa-a2a-local.json" ]] && run_step cudnn_local 60 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local.json"
run_step host 150 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host --model "$FA_MODEL" \
  --out "$RES/fa-a2a-host.json" --no-progress
clocks "after host"
run_step local_d64 60 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --head-dim 64 --target local \
  --out "$RES/fa-a2a-local-d64.json" --no-progress
[[ -f "$RES/fa-a2a-local-d64.json" ]] && run_step cudnn_d64 40 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local-d64.json"
clocks "after"
stamp done
