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
run_step() {  # name timeout command...: log to $LOGS/name.txt, print rc and the gtest summary lines
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE_S - SECONDS))
  if ((left < 20)); then echo "$name: not run (deadline)"; return 0; fi
  ((limit > left)) && limit=$left
  stamp "$name (limit ${limit}s)"
  timeout -k 5 "$limit" "$@" >"$LOGS/$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc"
  grep -E "^\[  (FAILED|PASSED) |^\[  SKIPPED|ERROR SUMMARY|RACECHECK SUMMARY|Failure|unavailable|skipped|wrote" \
    "$LOGS/$name.txt" | head -12
  return 0
}
