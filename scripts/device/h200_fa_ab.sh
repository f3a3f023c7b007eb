#!/usr/bin/env bash
# Fifth session of 2026-12-02 (issue 13): the first split-tail call (f979823) measured the whole-tile FA-only
# 5-12% slower in SM cycles than every earlier call (8K K/V clusters 2: ~916 k cycles per launch against ~820 k
# at f5729ae; cuDNN unchanged at ~760 k), and the split tail no faster. A/B in one call: the kernel as it was
# (f6ad14f, its source carried in abold/, not committed) against this tree, where the whole-tile kernel is again
# its own instantiation (the split tail compiled into separate kernels), each beside cuDNN in its own process of
# scripts/fa_vs_cudnn.py; the SASS of both builds' 8K kernel (local, d 128, clusters 2) for the diff; the GPU
# tests of the split tail; then the instrumented timelines (xstage-bench fa_a2a --target local, 8K) whole and
# split, for the idle tail. Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: DEADLINE_S=560 bash scripts/device/h200_fa_ab.sh  (device tool: timeout_s 600, carry abold, .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,32768}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
stamp "build old (abold) and new"
( cd abold && "$CMAKE" --preset default -G Ninja >"$LOGS/configure_old.txt" 2>&1 &&
  timeout -k 5 300 "$CMAKE" --build build -j8 --target xstage_fa >"$LOGS/build_old.txt" 2>&1 ) &
OLD_PID=$!
build_targets xs_gpu_attention_tests xstage_fa xstage-bench || exit 1
wait "$OLD_PID" || { echo "old build failed"; tail -20 "$LOGS/build_old.txt"; }
CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
K='_ZN2xs7kernels9attention22flash_attention_kernelILNS1_12EpilogueModeE1ELi128ELNS1_16MainloopScheduleE0ELi2E'
for v in old new; do
  obj=$( [[ $v == old ]] && find abold/build -name 'flash_attention_kernel.cu.o' | head -1 || find build -name 'flash_attention_kernel.cu.o' | head -1 )
  "$CUOBJDUMP" -sass "$obj" 2>&1 | awk -v k="$K" '/Function :/ {p = index($0, k) > 0} p' >"$LOGS/sass_$v.txt"
  echo "sass $v: $(wc -l <"$LOGS/sass_$v.txt") lines, $(grep -c HGMMA "$LOGS/sass_$v.txt") HGMMA"
done
run_step fa_tests 90 build/bin/xs_gpu_attention_tests --gtest_filter='FlashAttentionSplitTail.*:FaCApi.*'
clocks "before paired"
[[ -f abold/build/lib/libxstage_fa.so ]] && run_step paired_old 150 "$PY" abold/scripts/fa_vs_cudnn.py \
  --lib abold/build/lib/libxstage_fa.so --out "$RES/fa-vs-cudnn-old-f6ad14f.json" --M "$M_LIST" --blocks 4 \
  --kv-clusters 1,2 --heads-major-kv ''
run_step paired_new 180 "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so \
  --out "$RES/fa-vs-cudnn-new.json" --M "$M_LIST" --blocks 4 --kv-clusters 1,2 --heads-major-kv '' \
  --tail-splits-kv 1,2 --tail-splits 2
clocks "after paired"
for ts in 1 2; do
  run_step "local_ts$ts" 45 build/bin/xstage-bench fa_a2a --M 8192 --heads 8 --target local --reps 5 \
    --fa-tail-splits "$ts" --out "$RES/fa-a2a-local-8k-ts$ts.json" --no-progress
done
clocks "after"
stamp done
