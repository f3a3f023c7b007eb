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
