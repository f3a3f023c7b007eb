#!/usr/bin/env bash
# First device call after a session that had no GPU: everything written blind, checked in one call.
# The README's ./scripts/calibrate.sh from a fresh copy; the GPU tests of every layer (moe with the
# --variants subset, attention with the layout-matched FA-only and the sender-side boundary, the NCCL one-rank
# window / all-to-all tests); compute-sanitizer on small new points; then one small megamoe point (before-run
# prediction, clock record, host pinned-buffer cache), one fa_a2a point per target, and nccl:0 points (verified,
# or skipped with NCCL's reason). Returns: results.tar.gz, logs.tar.gz, calibrate-sh.json, clocks.txt, env.txt.
# Usage there: bash scripts/device/h200_session_check.sh   (device tool: timeout_s 600, carry .xs-git-sha)
# Steps run in priority order under one deadline (DEADLINE_S, default 560 s): a step gets at most the time
# left, a step that would start with under 20 s left is listed as not run, and the archives are always
# written, so nothing measured is lost when the call's limit comes.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
MOE_MODEL=results/h200/megamoe/calibration-moe-pattern.json
FA_MODEL=results/h200/calibration/calibration-host.json
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; ls /usr/lib/x86_64-linux-gnu/libnccl* 2>&1; } >"$OUT/env.txt" 2>&1
run() { run_step "$@"; }

run calibrate_sh 240 ./scripts/calibrate.sh
cp out/calibration-gpu-host.json "$OUT/calibrate-sh.json" 2>/dev/null || ls out >>"$LOGS/calibrate_sh.txt"
stamp build
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_moe_tests xs_gpu_attention_tests xs_gpu_tests xstage-bench xstage-fa-point \
  >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
clocks "before tests"
run gpu_moe 150 build/bin/xs_gpu_moe_tests
run gpu_attention 150 build/bin/xs_gpu_attention_tests --gtest_filter='-Schedules/*'
run gpu_nccl 60 env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT build/bin/xs_gpu_tests \
  --gtest_filter='Nccl*:TopologyProbe.*:GpuBackend.Nccl*'
# A newer NCCL (>= 2.28.7 gives a one-rank communicator symmetric memory) would let the window path store.
{ timeout 20 find / -xdev -name 'libnccl.so*' 2>/dev/null | xargs -r ls -la
  /opt/torch/.venv/bin/python3 -c 'import torch; print("torch nccl", torch.cuda.nccl.version())'; } >"$LOGS/nccl_libs.txt" 2>&1
clocks "before bench"
run megamoe 90 build/bin/xstage-bench megamoe --shapes dsv4_flash --T 2048 --ksm 66 --target host,local \
  --precision bf16,fp8 --variants expert_wave,interleaved --launches-per-graph 1 --model "$MOE_MODEL" \
  --tensor-tflops bf16=708,fp8=589 --out "$RES/megamoe-check.json" --no-progress
run fa_a2a 120 build/bin/xstage-bench fa_a2a --M 8192,32768 --heads 8 --target local,host --model "$FA_MODEL" \
  --out "$RES/fa-a2a-check.json" --no-progress
# The opt-in ping-pong schedules, never run before: a barrier bug hangs, so they run apart under their own limit.
run gpu_attention_pingpong 90 build/bin/xs_gpu_attention_tests --gtest_filter='Schedules/*'
run gpu_rest 120 build/bin/xs_gpu_tests --gtest_filter='-Nccl*:TopologyProbe.*:GpuBackend.Nccl*'
run megamoe_nccl 40 build/bin/xstage-bench megamoe --shapes dsv4_flash --T 2048 --ksm 66 --target nccl:0 \
  --variants expert_wave,interleaved --out "$RES/megamoe-nccl0.json" --no-progress
run fa_a2a_nccl 40 build/bin/xstage-bench fa_a2a --M 8192 --heads 8 --target nccl:0 --out "$RES/fa-a2a-nccl0.json" \
  --no-progress
run fa_point_d64 60 build/bin/xstage-fa-point --M 8192 --head-dim 64 --target local,host
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
run fa_baseline 60 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-check.json"
# Never a death test under the sanitizer (its deliberate hang runs into the timeout).
run memcheck_moe 90 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_moe_tests \
  --gtest_filter='MoeRunnerSubset.*'
run memcheck_fa 120 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter="${FA_SANITIZER_FILTER:-FaA2aPoint.LocalTargetVerifiesAndTimes:Shapes/FlashAttention.*/0:Shapes/FlashAttention.*/8}"
run racecheck_fa 120 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_attention_tests \
  --gtest_filter="${FA_SANITIZER_FILTER:-FaA2aPoint.LocalTargetVerifiesAndTimes:Shapes/FlashAttention.*/0:Shapes/FlashAttention.*/8}"
clocks "after bench"
stamp done
