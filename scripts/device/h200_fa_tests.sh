#!/usr/bin/env bash
# The FlashAttention GPU tests alone, filtered (FILTER, a gtest filter; default all): a short check after a
# test or kernel mend. Returns: logs.tar.gz, clocks.txt.
# Usage there: [FILTER='FaExchangePath.*'] bash scripts/device/h200_fa_tests.sh  (device tool: timeout_s 240,
# carry .xs-git-sha)
#   MOE=1 (sixth session of 2026-12-02, after the timeout report moved to kernels/common/mapped_report.hpp): the
#   MegaMoE GPU tests too (MOE_FILTER, default all).
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
DEADLINE_S=${DEADLINE_S:-210}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests $([[ ${MOE:-0} == 1 ]] && echo xs_gpu_moe_tests) || exit 1
run_step fa_tests 120 build/bin/xs_gpu_attention_tests --gtest_filter="${FILTER:-*}"
[[ ${MOE:-0} == 1 ]] && run_step moe_tests 150 build/bin/xs_gpu_moe_tests --gtest_filter="${MOE_FILTER:-*}"
stamp done
