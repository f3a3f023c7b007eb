# shellcheck shell=bash
# Shared by the device-call scripts (docs/device-scripts.md); source it after setting OUT, LOGS and (where the script
# has one) RES: the tools, the call's preamble, a timestamped step line, one clocks line per phase into
# $OUT/clocks.txt, time-boxed steps and builds, and the archives of $OUT's folders (at most 8 files come back from a
# call). DRY_RUN=1 prints every build and GPU command instead of running it (the JSON files its --out names are
# created empty, so the steps that read them are printed too): the scripts' plumbing, checked without a GPU
# (tests/scripts/device_dry_run_test.sh).
DRY_RUN=${DRY_RUN:-0}
[[ $DRY_RUN == 0 || $DRY_RUN == 1 ]] ||
  { echo "lib.sh: DRY_RUN='$DRY_RUN': expected 1 (print the commands) or 0 (run them); nothing was run" >&2; exit 2; }
dry() { [[ $DRY_RUN == 1 ]]; }
# act CMD...: runs CMD; under DRY_RUN prints it instead and creates the *.json files that follow its --out flags.
act() {
  if ! dry; then "$@"; return; fi
  echo "DRY: $*"
  local prev="" arg
  for arg in "$@"; do
    [[ $prev == --out && $arg == *.json ]] && mkdir -p "$(dirname "$arg")" && : >"$arg"
    prev=$arg
  done
  return 0
}
stamp() { echo "== $(date -u +%H:%M:%S) (+${SECONDS}s) $*"; }
clocks() {
  if dry; then echo "$1: dry run" >>"$OUT/clocks.txt"; return 0; fi
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active \
    --format=csv,noheader 2>&1 | sed "s/^/$1: /" >>"$OUT/clocks.txt"
}
# archive_folders NAME...: $OUT/NAME/ -> $OUT/NAME.tar.gz, the folder removed once archived.
archive_folders() {
  local name
  for name in "$@"; do
    [[ -d "$OUT/$name" ]] && tar -C "$OUT" -czf "$OUT/$name.tar.gz" "$name" && rm -rf "${OUT:?}/$name"
  done
  return 0
}
# run_step NAME LIMIT CMD...: the command under min(LIMIT, time left before DEADLINE_S), logged to $LOGS/NAME.txt;
# prints its exit code and the gtest/sanitizer summary lines; a step with under 20 s left is listed as not run.
# STEP_RC afterwards: the exit code, or "not-run".
run_step() {
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE_S - SECONDS))
  # shellcheck disable=SC2034  # STEP_RC: read by the calling scripts
  STEP_RC=not-run
  if ((left < 20)); then echo "$name: not run (deadline)"; return 0; fi
  ((limit > left)) && limit=$left
  stamp "$name (limit ${limit}s)"
  act timeout -k 5 "$limit" "$@" >"$LOGS/$name.txt" 2>&1
  local rc=$?
  # shellcheck disable=SC2034
  STEP_RC=$rc
  echo "$name rc=$rc"
  dry && cat "$LOGS/$name.txt"
  grep -E "^\[  (FAILED|PASSED) |^\[  SKIPPED|ERROR SUMMARY|RACECHECK SUMMARY|Failure|unavailable|skipped|wrote" \
    "$LOGS/$name.txt" | head -12
  return 0
}
# run_sanitizers LIMIT TEST_BINARY GTEST_FILTER TOOL...: one compute-sanitizer step per TOOL (memcheck, racecheck,
# synccheck; named after the tool) on the tests of the filter. Never a death test in the filter: under the
# sanitizer its deliberate hang runs into the limit.
run_sanitizers() {
  local limit=$1 binary=$2 filter=$3 tool; shift 3
  for tool in "$@"; do
    run_step "$tool" "$limit" "$SANITIZER" --tool "$tool" --error-exitcode 9 "$binary" --gtest_filter="$filter"
  done
}
# setup_tools: CMAKE, PY (the torch venv's where it exists), SANITIZER; never NVLink multicast on shared machines.
setup_tools() {
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
  [[ -x "$CMAKE" ]] || CMAKE=cmake
  PY=${PY:-/opt/torch/.venv/bin/python3}
  [[ -x "$PY" ]] || PY=python3
  SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
}
# start_call [FOLDER...]: the preamble of every call script: setup_tools, nvidia-smi sampled every 100 ms into
# $LOGS/smi.csv (gzipped at exit), $LOGS/env.txt (the commit of .xs-git-sha and nvidia-smi); at exit the journals
# left in $RES are removed and the FOLDERs of $OUT (default: results logs) archived, whatever stopped the script.
start_call() {
  setup_tools
  CALL_FOLDERS=("$@")
  ((${#CALL_FOLDERS[@]})) || CALL_FOLDERS=(results logs)
  SMI_PID=""
  if ! dry; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
      --format=csv,noheader -lms 100 >"$LOGS/smi.csv" 2>&1 &
    SMI_PID=$!
  fi
  trap finish_call EXIT
  { cat .xs-git-sha 2>/dev/null; act nvidia-smi; } >"$LOGS/env.txt" 2>&1
}
finish_call() {
  [[ -n $SMI_PID ]] && kill "$SMI_PID" 2>/dev/null
  [[ -f "$LOGS/smi.csv" ]] && gzip -f "$LOGS/smi.csv"
  [[ -n ${RES:-} ]] && rm -f "$RES"/*.journal.jsonl
  archive_folders "${CALL_FOLDERS[@]}"
}
# build_targets TARGET...: configure once (the default preset), then build the targets with 16 jobs before the
# deadline; on failure print the errors and return 1.
build_targets() {
  stamp build
  if dry; then echo "DRY: build $*"; return 0; fi
  [[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
    { tail -30 "$LOGS/configure.txt"; return 1; }
  timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target "$@" >"$LOGS/build.txt" 2>&1 ||
    { grep -E "error" "$LOGS/build.txt" | head -30; return 1; }
}
# check_parts SCRIPT KNOWN: exits 2, naming the accepted parts, unless every word of $PARTS is one of KNOWN's
# (before anything runs: a typo must not cost a device call).
check_parts() {
  local part
  for part in $PARTS; do
    [[ " $2 " == *" $part "* ]] || { echo "$1: unknown part '$part' (${2// /, })"; exit 2; }
  done
  parts_checked
}
# parts_checked: with PARTS_CHECK_ONLY=1 (session.sh checks every nested PARTS before its first part runs), exit 0
# once a script's PARTS passed its check, before anything else runs.
parts_checked() { if [[ ${PARTS_CHECK_ONLY:-0} == 1 ]]; then exit 0; fi; }
# want PART: whether PART is one of $PARTS.
want() { [[ " $PARTS " == *" $1 "* ]]; }
# has_flag FLAG ARG...: whether FLAG is one of the ARGs (a run's own flags replace a script's default for it).
has_flag() {
  local flag=$1 arg; shift
  for arg in "$@"; do [[ $arg == "$flag" ]] && return 0; done
  return 1
}
