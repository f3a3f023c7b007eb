#!/usr/bin/env bash
# Fifth session of 2026-12-02 (issue 13, the 8K speed bar): the split tail (FlashAttentionConfig::tail_kv_splits,
# scheduler.cuh, split_combine.cuh). The instrumented launches of fbcbd97-by-position/ left 13% (no clusters) and
# 6% (K/V clusters 2) of the CTA time idle at the end of an 8K launch: whole tiles (~96 us each) are too coarse for
# the last round. (1) build; GPU tests: the split tail against the reference and the whole-tile kernel in every
# mode, the C API (bits equal to the C++ launcher, records), the tile schedulers and clusters (regressions);
# (2) memcheck and racecheck on the C API's split test (small shapes); (3) scripts/fa_vs_cudnn.py, d 128,
# M_LIST: FA-only (Ulysses slices) whole and split (TAIL_SPLITS pieces) with K/V clusters 1 and 2, beside cuDNN in
# one process. Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: DEADLINE_S=560 bash scripts/device/h200_fa_split_tail.sh  (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,16384,32768}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests xstage_fa xstage-bench || exit 1
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter="${FA_TESTS:-FlashAttentionSplitTail.*:FaCApi.*:FlashAttentionTileScheduler.*:FlashAttentionKvCluster.*}"
if [[ ${SANITIZE:-1} == 1 ]]; then
  run_step memcheck 60 "$SANITIZER" --tool memcheck --error-exitcode 9 \
    build/bin/xs_gpu_attention_tests --gtest_filter='FaCApi.SplitTail*'
  run_step racecheck 60 "$SANITIZER" --tool racecheck --error-exitcode 9 \
    build/bin/xs_gpu_attention_tests --gtest_filter='FaCApi.SplitTail*'
fi
clocks "before paired"
run_step paired_d128 "${PAIRED_S:-240}" "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so \
  --out "$RES/fa-vs-cudnn-d128.json" --M "$M_LIST" --blocks "${BLOCKS:-5}" --kv-clusters 1,2 --heads-major-kv '' \
  --tail-splits-kv "${TAIL_KV:-1,2}" --tail-splits "${TAIL_SPLITS:-2,4}"
clocks "after"
stamp done
