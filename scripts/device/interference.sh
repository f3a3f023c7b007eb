#!/usr/bin/env bash
# Issue 28, item 1, in one device call (one H200 or H100): build the loaded-mainloop kernel's GPU tests and
# xstage-calibrate; run the tests (CTest gpu.gpu_interference); compute-sanitizer memcheck, racecheck and synccheck
# on five small points (wgmma and load_stream, host and local, paced; one epilogue point); then the calibration's loaded blocks on host
# (mapped pinned host memory over PCIe) and on the local control (HBM), at the same burst periods G: both runs size
# G from the same --rate-guess, so the local run issues exactly the host run's stores. Every step is cut to what is
# left of DEADLINE_S; a failed, cut or skipped step makes the script end with "INTERFERENCE FAILED" and exit 1.
# Usage (repository root): OUT=<dir> [DEADLINE_S=450] bash scripts/device/interference.sh [--only BLOCKS] [--reps N]
#                          [--rate-guess RATE] [--config FILE]
#   --only        calibration blocks or suite (default: loaded = every loaded_* block; see xstage-calibrate --list)
#   --reps        repetitions per point (default 5; each = a baseline launch and a loaded launch)
#   --rate-guess  the drain rate the offered rates are sized from (default 55GB/s, the H200's PCIe copy engine)
#   --config      a sweep file instead of the default sweep (e.g. configs/calibrate/loaded-burst-volume.json, or
#                 configs/calibrate/loaded-epilogue.json: injection epilogue, 18 points, ~1 minute per target);
#                 --only then selects among its blocks (default: all of them)
# Time with a built tree: about 1-1.5 minutes (estimated: the H100 call of 09:34Z took 45 s with one point under
# two sanitizers); a fresh build adds minutes. $OUT afterwards: results.tar.gz (results/calibration-loaded-{host,local}.json), logs.tar.gz (one log per
# step, env.txt, smi.csv.gz), clocks.txt: three files.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
RES="$OUT/results"
LOGS="$OUT/logs"
mkdir -p "$RES" "$LOGS"
source scripts/device/lib.sh
ONLY=loaded
REPS=5
RATE=55GB/s
CONFIG=
ONLY_SET=0
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
FAILED=()
# judge NAME [TESTS] [SUMMARY_REGEX]: the step just run (STEP_RC) passed if it exited 0, printed "[  PASSED  ] TESTS
# test" (any count when TESTS is empty; a filter that matches nothing passes 0 tests) and no failed test, and its log
# matches SUMMARY_REGEX (the sanitizer's own verdict). Otherwise it is recorded and the failures are printed whole
# (gtest's "what differed" lines follow its "Failure" line).
judge() {
  dry && return 0  # DRY_RUN: nothing ran to judge
  local name=$1 tests=${2:-} summary=${3:-} log="$LOGS/$1.txt" why=()
  [[ $STEP_RC == 0 ]] || why+=("rc=$STEP_RC")
  if [[ -f $log ]]; then
    grep -qE "^\[  PASSED  \] ${tests:-[0-9]+} tests?\." "$log" 2>/dev/null || [[ $name == calibrate_* ]] ||
      why+=("not ${tests:-any} tests passed")
    grep -qE "^\[  FAILED  \]|DATA VERIFICATION FAILED" "$log" && why+=("a test or a verification failed")
    [[ -z $summary ]] || grep -qE "$summary" "$log" || why+=("no '$summary'")
  fi
  ((${#why[@]} == 0)) && return 0
  FAILED+=("$name")
  echo "!! $name FAILED: ${why[*]}"
  [[ -f $log ]] && grep -A8 -E ": Failure$|DATA VERIFICATION FAILED|: verification:|: loaded:|hazard|Error:" \
    "$log" | head -60
}
start_call
clocks start
build_targets xs_gpu_interference_tests xstage-calibrate || { echo "INTERFERENCE FAILED: build"; exit 1; }
clocks built
run_step gpu_interference 120 build/bin/xs_gpu_interference_tests
judge gpu_interference
# Four small points (K_SM 4, 6 tiles, 256 paced bursts per CTA at most) plus one epilogue point (K_SM 4, a burst
# after each of the 6 tiles, host, scattered rows) under each sanitizer: the wgmma mainloop
# and the load stream, each storing to HBM and to mapped host memory (fresh slices and scattered rows). Under the
# sanitizers the mainloop runs far slower, so the storers' burst counts differ from launch to launch: the tests
# hold at any speed. The kernel's waits time out after ~10 s of SM cycles, far beyond what these runs need.
P=MainloopsTargetsPatterns/LoadedKernel.OutputMatchesTheCpuReferenceAndEveryStoredByteIsClaimed
# Plus one point of injection epilogue (no storer warps: the math warps store 4 x 13 rows after each tile).
E=EpilogueTargetsPatterns/LoadedEpilogue.OutputMatchesTheCpuReferenceAndEveryStoredByteIsClaimed
SMALL="$P/wgmma_local_fresh:$P/wgmma_host_fresh:$P/load_stream_local_scattered:$P/load_stream_host_scattered"
SMALL+=":$E/wgmma_host_scattered"
run_step memcheck 90 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_interference_tests \
  --gtest_filter="$SMALL"
judge memcheck 5 "ERROR SUMMARY: 0 errors"
run_step racecheck 120 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_interference_tests \
  --gtest_filter="$SMALL"
judge racecheck 5 "RACECHECK SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)"
run_step synccheck 90 "$SANITIZER" --tool synccheck --error-exitcode 9 build/bin/xs_gpu_interference_tests \
  --gtest_filter="$SMALL"
judge synccheck 5 "ERROR SUMMARY: 0 errors"
clocks sanitized
for target in host local; do
  sweep=(--only "$ONLY")
  if [[ -n "$CONFIG" ]]; then
    sweep=(--config "$CONFIG")
    ((ONLY_SET)) && sweep+=(--only "$ONLY")
  fi
  run_step "calibrate_$target" 120 build/bin/xstage-calibrate --target "$target" "${sweep[@]}" --reps "$REPS" \
    --rate-guess "$RATE" --no-progress --out "$RES/calibration-loaded-$target.json"
  judge "calibrate_$target" "" "^calibration of $target .* wrote "
  sed -n '/^loaded mainloop/,$p' "$LOGS/calibrate_$target.txt" | head -45
  # Points whose storers ran out of bursts before some mainloop ended (their tile times mix unloaded tiles).
  echo "calibrate_$target: $(grep -c 'bursts (the cap)' "$LOGS/calibrate_$target.txt") points reached the burst cap"
  clocks "$target"
done
stamp "done"
if ((${#FAILED[@]} > 0)); then
  echo "INTERFERENCE FAILED: ${FAILED[*]} (logs.tar.gz has each step's whole log)"
  exit 1
fi
echo "INTERFERENCE OK: tests, memcheck, racecheck, synccheck and both calibrations passed"
