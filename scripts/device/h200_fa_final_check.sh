#!/usr/bin/env bash
# Last call of the second session of 2026-12-02: the FlashAttention GPU tests on the final kernel code (the
# TileRecord now says which store the epilogue took, so the store-cache test can fail if the policy never
# reaches the kernel), and memcheck on that test. Returns: logs.tar.gz.
# Usage there: bash scripts/device/h200_fa_final_check.sh   (device tool: timeout_s 300, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
DEADLINE_S=${DEADLINE_S:-280}
SECONDS=0
source "$(dirname "$0")/lib.sh"
trap 'archive_folders logs' EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_attention_tests \
  >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter='Shapes/*:FlashAttentionTileScheduler.*:FlashAttentionStoreCache.*:FlashAttentionValidation.*:Schedules/*:FaRunner*:FaSender*:FaA2a*'
run_step memcheck 60 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionStoreCache.*'
stamp done
