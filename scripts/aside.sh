# Sourced by scripts/rejudge_fa_committed.sh and scripts/rescore_predictions.sh: outputs are moved aside before
# the tool writes them afresh, and put back on any exit (an interrupt included) where no fresh copy was written,
# so nothing committed is lost. Defines $aside, put_aside FILE (echoes where it went) and the traps.
aside=$(mktemp -d)
: > "$aside/moved"
put_aside() {
  local kept
  kept=$aside/$(echo "$1" | tr / _)
  printf '%s\t%s\n' "$kept" "$1" >> "$aside/moved"
  mv "$1" "$kept"
  echo "$kept"
}
restore_aside() {
  local rc=$?
  while IFS=$'\t' read -r kept orig; do
    [[ -e $kept && ! -e $orig ]] && mv "$kept" "$orig" && echo "$(basename "$0"): restored $orig" >&2
  done < "$aside/moved"
  rm -rf "$aside"
  exit $rc
}
trap restore_aside EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
