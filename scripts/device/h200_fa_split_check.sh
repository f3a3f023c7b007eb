#!/usr/bin/env bash
# Fifth session of 2026-12-02, last minutes of device time: the review mends of the split tail (2b2dab5: pieces
# must divide the KV tiles, the workspace grows to the max and never frees, records sizing without the records
# fields) on the GPU: build; the split-tail, C API and validation tests (2, 3 and 4 pieces now); memcheck on the
# C API split test. Returns: logs.tar.gz, clocks.txt.
# Usage there: DEADLINE_S=190 bash scripts/device/h200_fa_split_check.sh  (device tool: timeout_s 220, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
DEADLINE_S=${DEADLINE_S:-190}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests xstage_fa || exit 1
run_step fa_tests 40 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FlashAttentionSplitTail.*:FaCApi.*:FlashAttentionValidation.*:FlashAttentionTileScheduler.*'
run_step memcheck 40 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter='FaCApi.SplitTail*'
clocks "after"
stamp done
