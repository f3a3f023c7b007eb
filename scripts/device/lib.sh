# Shared by the device-call scripts (source it after setting OUT): a timestamped step line, one clocks line
# per call into $OUT/clocks.txt, and the archives of $OUT's folders (at most 8 files come back from a call).
stamp() { echo "== $(date -u +%H:%M:%S) (+${SECONDS}s) $*"; }
clocks() {
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
run_step() {  # name timeout command...: log to $LOGS/name.txt, print rc and the gtest summary lines
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE_S - SECONDS))
  STEP_RC=not-run
  if ((left < 20)); then echo "$name: not run (deadline)"; return 0; fi
  ((limit > left)) && limit=$left
  stamp "$name (limit ${limit}s)"
  timeout -k 5 "$limit" "$@" >"$LOGS/$name.txt" 2>&1
  local rc=$?
  STEP_RC=$rc
  echo "$name rc=$rc"
  grep -E "^\[  (FAILED|PASSED) |^\[  SKIPPED|ERROR SUMMARY|RACECHECK SUMMARY|Failure|unavailable|skipped|wrote" \
    "$LOGS/$name.txt" | head -12
  return 0
}
# The preamble the FlashAttention call scripts share (h200_fa_kv_cluster.sh on; the older scripts keep theirs as
# they ran). start_call: tools (CMAKE, PY, SANITIZER), never NVLink multicast, nvidia-smi sampled every 100 ms
# into $LOGS/smi.csv (gzipped at exit), env.txt; at exit the results and logs folders are archived.
start_call() {
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
  [[ -x "$CMAKE" ]] || CMAKE=cmake
  PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
  SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv,noheader -lms 100 >"$LOGS/smi.csv" 2>&1 &
  SMI_PID=$!
  trap 'kill "$SMI_PID" 2>/dev/null; gzip -f "$LOGS/smi.csv"; rm -f "$RES"/*.journal.jsonl; archive_folders results logs' EXIT
  { cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
}
# build_targets TARGET...: configure once (the default preset), then build the targets with 16 jobs before the
# deadline; on failure print the errors and return 1.
build_targets() {
  stamp build
  [[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
    { tail -30 "$LOGS/configure.txt"; return 1; }
  timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target "$@" >"$LOGS/build.txt" 2>&1 ||
    { grep -E "error" "$LOGS/build.txt" | head -30; return 1; }
}
