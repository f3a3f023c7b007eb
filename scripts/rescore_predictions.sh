#!/usr/bin/env bash
# Re-scores every committed prediction-score file that is not an FA verdict file (those:
# scripts/rejudge_fa_committed.sh) with the current scorer, by re-running the command each file records in its
# meta.argv (the tool path replaced by this build's). Nothing is measured. Each output (and its --md beside it) is
# moved aside first and written afresh (so each output is a fresh write); a failure puts the old files
# back. Run it, and scripts/rejudge_fa_committed.sh, after any change to a scorer or a rule, and commit the result.
# Usage: scripts/rescore_predictions.sh [build/bin/xstage-predict]
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${1:-build/bin/xstage-predict}
[[ -x $tool ]] || { echo "rescore_predictions: no executable '$tool' (build first: ./scripts/build.sh)" >&2; exit 2; }
source scripts/aside.sh  # $aside, put_aside, and the traps that put moved files back

files=(
  results/h200/megamoe/advisor-score.json
  results/h200/megamoe/b7f0e7b-canlose/advisor-score.json
  results/h200/megamoe/whole-kernel-score.json
  results/h100/whole-kernel-3a97dd2/fa-whole-score.json
  results/h100/epilogue-680858e/fa-whole-score.json
  results/h100/epilogue-680858e/moe-whole-score-h200-matrix.json
  results/h200/interference/e9158ce-epilogue/fa-whole-score.json
  results/h200/interference/e9158ce-epilogue/moe-whole-score-h200-matrix.json
  results/h100/moe-matrix-8e7dc28/moe-whole-score.json
  results/h100/calls-9a28bd3/moe-whole-score.json
  results/h100/calls-9a28bd3/fa-whole-score.json
)
# Packed inputs (each folder's MANIFEST) are unpacked beside their scores for the re-run (the unpacked files are
# ignored by git) and removed afterwards: TARBALL:FOLDER pairs.
packed_inputs=(results/h100/moe-matrix-8e7dc28/matrix.tar.gz:results/h100/moe-matrix-8e7dc28
               results/h100/calls-9a28bd3/matrix.tar.gz:results/h100/calls-9a28bd3
               results/h100/calls-9a28bd3/predictions-2/runs.tar.gz:results/h100/calls-9a28bd3/predictions-2
               results/h200/megamoe/b7f0e7b-sweep/sweep.tar.gz:results/h200/megamoe/b7f0e7b-sweep)
unpacked=()  # every path a tarball put down, removed on exit
for pair in "${packed_inputs[@]}"; do
  tarball=${pair%%:*} dir=${pair#*:}
  [[ -f $tarball ]] || continue
  while IFS= read -r name; do unpacked+=("$dir/${name%/}"); done < <(tar tzf "$tarball" | grep -v '/.')
  tar xzf "$tarball" -C "$dir"
done
cleanup_unpacked() { ((${#unpacked[@]})) && rm -rf -- "${unpacked[@]}"; return 0; }
trap 'cleanup_unpacked; restore_aside' EXIT
for out in "${files[@]}"; do
  [[ -f $out ]] || { echo "rescore_predictions: $out absent: skipped"; continue; }
  # The recorded command, one argument per line (the first, the tool, dropped).
  mapfile -t args < <(python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
argv = (d.get("meta") or {}).get("argv") or []
if len(argv) < 2:
    sys.exit(f"rescore_predictions: {sys.argv[1]} records no meta.argv")
print("\n".join(argv[1:]))
PY
)
  outs=("$out")
  recorded_out=""
  for ((i = 0; i < ${#args[@]}; ++i)); do
    [[ ${args[i]} == --md ]] && outs+=("${args[i + 1]}")
    [[ ${args[i]} == --out ]] && recorded_out=${args[i + 1]}
  done
  if [[ $recorded_out != "$out" ]]; then
    echo "rescore_predictions: $out records --out '$recorded_out', not its own path (moved after it was written?): not rescored" >&2
    exit 2
  fi
  for o in "${outs[@]}"; do [[ -e $o ]] && put_aside "$o" > /dev/null; done
  if ! "$tool" "${args[@]}" > "$aside/log" 2>&1; then
    cat "$aside/log" >&2
    for o in "${outs[@]}"; do k="$aside/$(echo "$o" | tr / _)"; [[ -e $k ]] && mv "$k" "$o"; done
    echo "rescore_predictions: failed on $out (old file kept)" >&2
    exit 1
  fi
  echo "rescored $out"
done
echo "rescore_predictions: done"
