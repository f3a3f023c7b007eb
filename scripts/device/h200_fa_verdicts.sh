#!/usr/bin/env bash
# Issue 13, session of 2026-12-02 (second): (1) build; the FlashAttention GPU tests (the review mends of
# de2a283's successor: counter fences, synchronized first zeroing, never run on the GPU before); (2) two
# independent host calibrations with configs/calibrate/host-small-k.json (A, then B: is Q near the FA burst
# stable between runs?); (3) fa_a2a --target host, M = 8K..64K, predictions from A only (the phase-aware
# E_issue now from the cluster's own T_iss^0, committed before this run); (4) fa_a2a --target local with the
# cuDNN baseline and its SM clock probe (is cuDNN faster per cycle or at a higher clock?). nvidia-smi samples
# clock, power and throttle reasons every 100 ms through the whole call (logs/smi.csv, phases in summary).
# Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_verdicts.sh   (device tool: timeout_s 600, carry .xs-git-sha)
#   call 2 of 2026-12-02: HOST_RUNS=2 LOCAL_REPS=30 bash scripts/device/h200_fa_verdicts.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
M_LIST=8192,16384,32768,49152,65536
CAL_CONFIG=configs/calibrate/host-small-k.json
DEADLINE_S=${DEADLINE_S:-570}
SECONDS=0
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 >"$LOGS/smi.csv" 2>&1 &
SMI_PID=$!
finish() { kill "$SMI_PID" 2>/dev/null; rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 \
  --target xs_gpu_attention_tests xstage-bench xstage-calibrate >"$LOGS/build.txt" 2>&1 ||
  { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
run_step fa_tests 120 build/bin/xs_gpu_attention_tests \
  --gtest_filter='Shapes/*:FlashAttentionTileScheduler.*:FlashAttentionValidation.*:Schedules/*:FaRunner*:FaSender*:FaA2a*'
clocks "before calibration"
for run in A B; do
  run_step "calibrate_$run" 60 build/bin/xstage-calibrate --backend gpu --target host --config "$CAL_CONFIG" \
    --out "$RES/calibration-host-small-k-$run.json" --no-progress
done
# HOST_RUNS=2: a second host run (a replicate measurement) predicted from calibration B.
for run in $(seq 1 "${HOST_RUNS:-1}"); do
  cal=$([[ $run == 1 ]] && echo A || echo B); suffix=$([[ $run == 1 ]] && echo "" || echo "-$cal")
  [[ -f "$RES/calibration-host-small-k-$cal.json" ]] &&
    run_step "host$suffix" 170 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target host \
      --model "$RES/calibration-host-small-k-$cal.json" --out "$RES/fa-a2a-host$suffix.json" --no-progress
done
clocks "after host"
run_step local 130 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps "${LOCAL_REPS:-10}" \
  --out "$RES/fa-a2a-local.json" --no-progress
clocks "after local"
[[ -f "$RES/fa-a2a-local.json" ]] &&
  run_step cudnn_local 90 "$PY" scripts/fa_attach_baseline.py "$RES/fa-a2a-local.json" --clock-probes 10
clocks "after"
stamp done
