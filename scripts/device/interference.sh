#!/usr/bin/env bash
# Issue 28, item 1, in one device call (one H200 or H100, well under 8 minutes): build the loaded-mainloop
# kernel's GPU tests and xstage-calibrate; run the tests (CTest gpu.gpu_interference); compute-sanitizer
# memcheck and racecheck on one small point; then the calibration's loaded blocks on host (mapped pinned host
# memory over PCIe) and on the local control (HBM), at the same burst periods G: both runs size G from the same
# --rate-guess, so the local run issues exactly the host run's stores.
# Usage (repository root): OUT=<dir> bash scripts/device/interference.sh [--only BLOCKS] [--reps N] [--rate-guess RATE]
#                          [--config FILE]
#   --only        calibration blocks or suite (default: loaded = every loaded_* block; see xstage-calibrate --list)
#   --reps        repetitions per point (default 5; each = a baseline launch and a loaded launch)
#   --rate-guess  the drain rate the offered rates are sized from (default 55GB/s, the H200's PCIe copy engine)
#   --config      a sweep file instead of the default sweep (e.g. configs/calibrate/loaded-burst-volume.json);
#                 --only then selects among its blocks (default: all of them)
# $OUT afterwards: results.tar.gz (results/calibration-loaded-{host,local}.json), logs.tar.gz (one log per step,
# env.txt, smi.csv.gz), clocks.txt: three files.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
RES="$OUT/results"
LOGS="$OUT/logs"
mkdir -p "$RES" "$LOGS"
source scripts/device/lib.sh
ONLY=loaded
ONLY_SET=0
CONFIG=
REPS=5
RATE=55GB/s
while (($#)); do
  case $1 in
    --only) ONLY=$2; ONLY_SET=1; shift 2 ;;
    --config) CONFIG=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --rate-guess) RATE=$2; shift 2 ;;
    *) echo "interference.sh: unknown argument '$1' (accepted: --only BLOCKS, --reps N, --rate-guess RATE, --config FILE)"; exit 2 ;;
  esac
done
SECONDS=0
DEADLINE_S=${DEADLINE_S:-450}  # every step is cut to what is left of 7.5 minutes
start_call
clocks start
build_targets xs_gpu_interference_tests xstage-calibrate || exit 1
clocks built
run_step gpu_interference 150 build/bin/xs_gpu_interference_tests
# One small point (K_SM 4, 6 tiles, stores to HBM) under each sanitizer; the kernel's waits time out after
# ~10 s of SM cycles, far beyond what the instrumented run needs.
SMALL='MainloopsTargetsPatterns/LoadedKernel.OutputMatchesTheCpuReferenceAndEveryStoredByteIsClaimed/wgmma_local_fresh'
run_step memcheck 120 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_interference_tests \
  --gtest_filter="$SMALL"
run_step racecheck 120 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_interference_tests \
  --gtest_filter="$SMALL"
clocks sanitized
for target in host local; do
  sweep=(--only "$ONLY")
  if [[ -n "$CONFIG" ]]; then
    sweep=(--config "$CONFIG")
    ((ONLY_SET)) && sweep+=(--only "$ONLY")
  fi
  run_step "calibrate_$target" 120 build/bin/xstage-calibrate --target "$target" "${sweep[@]}" --reps "$REPS" \
    --rate-guess "$RATE" --no-progress --out "$RES/calibration-loaded-$target.json"
  sed -n '/^loaded mainloop/,$p' "$LOGS/calibrate_$target.txt" | head -45
  clocks "$target"
done
stamp done
