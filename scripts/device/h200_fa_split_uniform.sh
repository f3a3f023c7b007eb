#!/usr/bin/env bash
# Fifth session of 2026-12-02 (issue 13), third call: the split-tail kernels read their unit from shared memory,
# so ptxas could not prove the Q-loop's trip count warp-uniform and moved the wgmma descriptors off the uniform
# datapath (f73a9a4-ab/: 48 R2UR per iteration against 16, 10-14% more cycles per launch). The unit is now
# broadcast from lane 0 (__shfl_sync). (1) build; the Q-loop's opcode counts of every fused d 128 kernel
# (scripts/device/sass_loop_ops.py: the split kernels must match the whole-tile ones); GPU tests of the split tail
# and the C API; (2) scripts/fa_vs_cudnn.py d 128 M_LIST: whole tiles and split tails (TAIL_SPLITS pieces) with K/V
# clusters 1 and 2 beside cuDNN in one process; (3) the instrumented 8K timelines, whole and split, both cluster
# sizes (idle tail). Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Fourth call (the count from a warp vote and two kernel parameters; pieces equally long), switches: FA_TESTS (gtest
# filter), SANITIZE=1 (memcheck and racecheck on the C API's split test), LOCAL=0 skips (3), TAIL_KV, TAIL_SPLITS.
# Usage there: DEADLINE_S=560 bash scripts/device/h200_fa_split_uniform.sh  (device tool: timeout_s 600, carry .xs-git-sha)
#   fourth: DEADLINE_S=570 FA_TESTS='*' SANITIZE=1 LOCAL=1 M_LIST=8192,16384,32768,49152,65536 TAIL_SPLITS=2 BLOCKS=5 ...
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
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
"$CUOBJDUMP" -sass "$(find build -name 'flash_attention_kernel.cu.o' | head -1)" >"$LOGS/sass.txt" 2>&1
"$PY" scripts/device/sass_loop_ops.py "$LOGS/sass.txt" | grep "^mode 1 d 128" | tee "$LOGS/sass_loops.txt"
gzip -f "$LOGS/sass.txt"
run_step fa_tests 150 build/bin/xs_gpu_attention_tests --gtest_filter="${FA_TESTS:-FlashAttentionSplitTail.*:FaCApi.*}"
if [[ ${SANITIZE:-0} == 1 ]]; then
  for tool in memcheck racecheck; do
    run_step "$tool" 60 "$SANITIZER" --tool "$tool" --error-exitcode 9 build/bin/xs_gpu_attention_tests \
      --gtest_filter='FaCApi.SplitTail*'
  done
fi
clocks "before paired"
run_step paired_d128 "${PAIRED_S:-300}" "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so \
  --out "$RES/fa-vs-cudnn-d128.json" --M "$M_LIST" --blocks "${BLOCKS:-6}" --kv-clusters 1,2 --heads-major-kv '' \
  --tail-splits-kv 1,2 --tail-splits "${TAIL_SPLITS:-2,4}"
clocks "after paired"
[[ ${LOCAL:-1} == 1 ]] && for kv in 1 2; do
  for ts in 1 2 4; do
    run_step "local_kv${kv}_ts$ts" 45 build/bin/xstage-bench fa_a2a --M 8192 --heads 8 --target local --reps 10 \
      --fa-kv-cluster "$kv" --fa-tail-splits "$ts" --out "$RES/fa-a2a-local-8k-kv${kv}-ts$ts.json" --no-progress
  done
done
clocks "after"
stamp done
