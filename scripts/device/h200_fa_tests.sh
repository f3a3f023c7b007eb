#!/usr/bin/env bash
# The FlashAttention GPU tests alone, filtered (FILTER, a gtest filter; default all): a short check after a
# test or kernel mend. Returns: logs.tar.gz, clocks.txt.
# Usage there: [FILTER='FaExchangePath.*'] bash scripts/device/h200_fa_tests.sh  (device tool: timeout_s 240,
# carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
DEADLINE_S=${DEADLINE_S:-210}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests || exit 1
run_step fa_tests 120 build/bin/xs_gpu_attention_tests --gtest_filter="${FILTER:-*}"
stamp done
