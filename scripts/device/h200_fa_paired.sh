#!/usr/bin/env bash
# First session of 2026-12-03 (issue 13): FA-only against cuDNN SDPA in ONE process (scripts/fa_vs_cudnn.py over
# libxstage_fa.so): same tensors, verified against each other and an fp32 reference, timed in alternating blocks
# (the same power-capped regime for both) and in fa_attach_baseline.py's short-burst protocol.
# (1) build; the C API test (bits equal to the C++ launcher) and the FA GPU tests of FA_TESTS; (2) the paired
# script, d 128, M 8K..64K: FA-only (Ulysses slices) with K/V clusters 1 and 2, heads-major with 2, cuDNN;
# (3) d 64 at 8K and 32K (fewer blocks); (4) host: a small-K calibration, then fa_a2a --target host 8K..64K
# predicted from it, K/V clusters 1 and 2 (the verdicts with the final kernel). nvidia-smi every 100 ms.
# Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Switches (defaults: the first call, 687c80a-paired/): AUTO_BAND_KV=1,2 adds the tile order in bands of heads
# (heads_per_band 0, auto) beside the default m-block-fastest one for those cluster sizes (the second call, at
# 11fe4a5 where auto was the default, ran BAND1_KV=1,2: the m-block-fastest order beside it; option since renamed); D64=0 skips (3); HOST_KV="1" the host
# cluster sizes of (4); LOCAL=1 adds (5): fa_a2a --target local 8K..64K, LOCAL_REPS rounds, K/V clusters 1 (the
# local E_res bar with the default tile order); MEMCHECK=1 memcheck on the cluster and C API tests;
# RECORDS_KV=1,2 / SB_KV=1,2 add instrumented launches / the barrier after the stores (the 8K span-to-period
# gap: are the instrumented launches the bench's timelines measure faster than the plain ones?); HM_KV='' drops
# the heads-major contender.
# Usage there: [BLOCKS=6] [HOST=1] bash scripts/device/h200_fa_paired.sh  (device tool: timeout_s 600, carry .xs-git-sha)
#   second call: FA_TESTS='*' MEMCHECK=1 BAND1_KV=1,2 BLOCKS=5 D64=0 HOST_KV=1 LOCAL=1 bash scripts/device/h200_fa_paired.sh
#   fifth call: DEADLINE_S=300 FA_TESTS='FaCApi.*' M_LIST=8192,16384,32768 RECORDS_KV=1,2 SB_KV=1,2 HM_KV='' BLOCKS=5
#               D64=0 HOST=0 bash scripts/device/h200_fa_paired.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
DEADLINE_S=${DEADLINE_S:-540}
SECONDS=0
source "$(dirname "$0")/lib.sh"
start_call
build_targets xs_gpu_attention_tests xstage-bench xstage-calibrate xstage_fa || exit 1
run_step fa_tests 90 build/bin/xs_gpu_attention_tests --gtest_filter="${FA_TESTS:-FaCApi.*:FlashAttentionKvCluster.*}"
[[ ${MEMCHECK:-0} == 1 ]] && run_step memcheck 60 "$SANITIZER" --tool memcheck --error-exitcode 9 \
  build/bin/xs_gpu_attention_tests --gtest_filter='FlashAttentionKvCluster.*:FaCApi.BadDescriptors*'
clocks "before paired"
run_step paired_d128 300 "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so --out "$RES/fa-vs-cudnn-d128.json" \
  --M "$M_LIST" --blocks "${BLOCKS:-6}" --auto-band-kv "${AUTO_BAND_KV:-}" --records-kv "${RECORDS_KV:-}" \
  --store-barrier-kv "${SB_KV:-}" --heads-major-kv "${HM_KV-2}"
[[ ${D64:-1} == 1 ]] && run_step paired_d64 60 "$PY" scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so --out "$RES/fa-vs-cudnn-d64.json" \
  --M 8192,32768 --head-dim 64 --blocks 3 --kv-clusters 1,2 --heads-major-kv ''
clocks "after paired"
if [[ ${HOST:-1} == 1 ]]; then
  run_step calibrate 45 build/bin/xstage-calibrate --backend gpu --target host --config configs/calibrate/host-small-k.json \
    --out "$RES/calibration-host-small-k.json" --no-progress
  for cluster in ${HOST_KV:-1 2}; do
    [[ -f "$RES/calibration-host-small-k.json" ]] &&
      run_step "host_kv$cluster" 90 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host \
        --fa-kv-cluster "$cluster" --model "$RES/calibration-host-small-k.json" --out "$RES/fa-a2a-host-kv$cluster.json" \
        --no-progress
  done
fi
[[ ${LOCAL:-0} == 1 ]] && run_step local_kv1 120 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local \
  --reps "${LOCAL_REPS:-10}" --out "$RES/fa-a2a-local-kv1.json" --no-progress
clocks "after"
stamp done
