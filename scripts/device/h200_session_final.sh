#!/usr/bin/env bash
# Last call of the third session of 2026-12-02: first the README's ./scripts/calibrate.sh exactly, from this
# fresh copy (it configures and builds build/ itself); then every FlashAttention GPU test on the final code
# (the K/V cluster plumbing reaches the runner, the bench and the spec readers) and memcheck on the cluster test. Returns: results.tar.gz
# (calibrate.sh's calibration), logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_session_final.sh   (device tool: timeout_s 480, carry .xs-git-sha)
#   PAIRED=1 (first session of 2026-12-03's last call): then FA-only against cuDNN in one process at 8K-32K, graphs
#   and eager launches (scripts/fa_vs_cudnn.py --eager: is the graph-timed FA-only slower than its own
#   stream-launched spans, and cuDNN not?), results/fa-vs-cudnn-eager.json.
#   MEMCHECK_FILTER (sixth session of 2026-12-02, after the host parts of flash_attention_kernel.cu moved to .cpp
#   files): the gtest filter memcheck runs (default the cluster test).
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
DEADLINE_S=${DEADLINE_S:-450}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
clocks "before calibrate.sh"
run_step calibrate_sh 200 ./scripts/calibrate.sh
cp out/calibration-gpu-host.json "$RES/calibrate-sh.json" 2>/dev/null || ls out >>"$LOGS/calibrate_sh.txt" 2>&1
build_targets xs_gpu_attention_tests $([[ ${PAIRED:-0} == 1 ]] && echo xstage_fa) || exit 1
run_step fa_tests 150 build/bin/xs_gpu_attention_tests
run_step memcheck 60 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter="${MEMCHECK_FILTER:-FlashAttentionKvCluster.*}"
[[ ${PAIRED:-0} == 1 ]] && run_step paired_eager 200 "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so \
  --out "$RES/fa-vs-cudnn-eager.json" --M 8192,16384,32768 --blocks 4 --eager
clocks "after"
stamp done
