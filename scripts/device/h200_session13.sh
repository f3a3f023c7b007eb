#!/usr/bin/env bash
# First device call of the 2026-12-02 session: the README's ./scripts/calibrate.sh from a fresh copy; issue 14's
# cross-rank GPU tests on one GPU (FaExchangePath.*, MoeRunnerExchange.*; with PyTorch's libnccl 2.28.9 first on
# LD_LIBRARY_PATH, and once with the system NCCL for the skip path); then issue 13's diagnostics: fa_a2a on
# local (30 rounds: the clock-normalized E_res and the FA-only timeline) and on host (timeline under store
# load, predictions from the committed host calibration), FA-only at 8K with 128 CTAs (four whole waves) beside
# 132, cuDNN SDPA attached, and one Nsight Compute summary of the FA-only kernel at 8K where ncu exists.
# Returns: results.tar.gz, logs.tar.gz, calibrate-sh.json, clocks.txt, env.txt.
# Usage there: bash scripts/device/h200_session13.sh   (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
FA_MODEL=results/h200/calibration/calibration-host.json
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
NCCL_LIB=$(find /opt/torch/.venv -name 'libnccl.so.2' 2>/dev/null | head -1)
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; echo "newer NCCL: ${NCCL_LIB:-none found}"; } >"$OUT/env.txt" 2>&1

run_step calibrate_sh 200 ./scripts/calibrate.sh
cp out/calibration-gpu-host.json "$OUT/calibrate-sh.json" 2>/dev/null || ls out >>"$LOGS/calibrate_sh.txt"
stamp build
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_attention_tests xs_gpu_moe_tests \
  xstage-bench xstage-fa-point >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
clocks "before tests"
newer() { env LD_LIBRARY_PATH="$(dirname "${NCCL_LIB:-/nonexistent/x}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
run_step fa_exchange_nccl2289 90 newer env NCCL_DEBUG=WARN build/bin/xs_gpu_attention_tests --gtest_filter='FaExchangePath.*'
run_step moe_exchange_nccl2289 120 newer env NCCL_DEBUG=WARN build/bin/xs_gpu_moe_tests --gtest_filter='MoeRunnerExchange.*'
run_step fa_exchange_system 60 build/bin/xs_gpu_attention_tests --gtest_filter='FaExchangePath.*'
run_step moe_exchange_system 60 build/bin/xs_gpu_moe_tests --gtest_filter='MoeRunnerExchange.*'
clocks "before fa"
run_step fa_local 150 build/bin/xstage-bench fa_a2a --M 8192,16384,32768 --heads 8 --target local --reps 30 \
  --out "$RES/fa-local-diag.json" --no-progress
clocks "after fa_local"
run_step fa_host 120 build/bin/xstage-bench fa_a2a --M 8192,32768 --heads 8 --target host --model "$FA_MODEL" \
  --out "$RES/fa-host-diag.json" --no-progress
run_step fa_ctas128 60 build/bin/xstage-bench fa_a2a --M 8192 --heads 8 --target local --ctas 128 --reps 20 \
  --out "$RES/fa-local-ctas128.json" --no-progress
clocks "after fa"
for f in fa-local-diag fa-local-ctas128; do
  [[ -f "$RES/$f.json" ]] && run_step "cudnn_$f" 60 "$PY" scripts/fa_attach_baseline.py "$RES/$f.json"
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [[ -x $NCU ]]; then
  run_step ncu_fa8k 120 "$NCU" --kernel-name regex:flash_attention_kernel -c 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy \
    build/bin/xstage-fa-point --M 8192 --target local --repetitions 1
else
  echo "no ncu" >"$LOGS/ncu_fa8k.txt"
fi
clocks "after"
stamp done
