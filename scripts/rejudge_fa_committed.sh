#!/usr/bin/env bash
# Re-judges every committed FA-A2A file with the current rule of src/xs/attention/judge (issue 27 item 7): the two
# score summaries, the re-judged copies (derived files, replaced), and one score summary per archive folder whose
# run-time verdicts an older rule wrote (the run files themselves are records and stay as they were; INDEX.md
# marks their verdicts superseded). Nothing is measured. Each output is moved aside first and written afresh by
# xstage-predict (a fresh write), so its argv names the real path; a failure puts the old file
# back. Usage: scripts/rejudge_fa_committed.sh [build/bin/xstage-predict]
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${1:-build/bin/xstage-predict}
[[ -x $tool ]] || { echo "rejudge_fa_committed: no executable '$tool' (build first: ./scripts/build.sh)" >&2; exit 2; }
source scripts/aside.sh  # $aside, put_aside, and the traps that put moved files back

# regenerate OUT CMD...: OUT moved aside, CMD run (it writes OUT), OUT restored if CMD fails.
regenerate() {
  local out=$1; shift
  local kept=""
  [[ -e $out ]] && kept=$(put_aside "$out")
  if ! "$@" > "$aside/log" 2>&1; then
    cat "$aside/log" >&2
    [[ -n $kept ]] && mv "$kept" "$out"
    echo "rejudge_fa_committed: failed on $out" >&2
    exit 1
  fi
  tail -n 4 "$aside/log"
}

h200=results/h200/fa_a2a
calls=(3238301-bars b531dd7-bars d2f1042-bars-grid)
regenerate $h200/prediction-score.json "$tool" fa-score \
  $h200/3238301-bars/results/fa-a2a-host.json $h200/b531dd7-bars/results/fa-a2a-host.json \
  $h200/b531dd7-bars/results/fa-a2a-host-kv2.json $h200/d2f1042-bars-grid/results/fa-a2a-host.json \
  --model $h200/3238301-bars/results/calibration-host-small-k.json \
  --model $h200/b531dd7-bars/results/calibration-host-small-k.json \
  --model $h200/d2f1042-bars-grid/results/calibration-host-small-k.json \
  --model results/h200/calibration/calibration-host.json --out $h200/prediction-score.json
# The out-of-sample H200 call (13:24Z, after the rule): its run-time score (rule v2) stays; this is the current rule's.
p=$h200/b7f0e7b-predictions
regenerate $p/prediction-score-host-refutable.json "$tool" fa-score $p/fa-a2a-host.json \
  --model $p/calibration-host-fa.json --out $p/prediction-score-host-refutable.json
h100=results/h100/predictions-3a97dd2
regenerate $h100/prediction-score-host.json "$tool" fa-score $h100/fa-a2a-host.json \
  --model $h100/calibration-host-fa.json --out $h100/prediction-score-host.json
# The first call made after rule v5 was written (H100, 06:16Z on 2026-12-06): out of sample for it.
h100=results/h100/predictions-6c3d35e
regenerate $h100/prediction-score-host.json "$tool" fa-score $h100/fa-a2a-host.json \
  --model $h100/calibration-host-fa.json --out $h100/prediction-score-host.json
# The first call made after rule v6 was written (H100, 01:22Z on 2026-12-07): out of sample for it; re-scored
# here so that its sensitivity block carries every mutation (its fa-a2a-host.json keeps the run-time verdicts).
h100=results/h100/predictions-fd62b85
regenerate $h100/prediction-score-host.json "$tool" fa-score $h100/fa-a2a-host.json \
  --model $h100/calibration-host-fa.json --out $h100/prediction-score-host.json

# The re-judged copies of the canonical calls, each against its own call's calibration.
for c in "${calls[@]}"; do
  for f in $h200/$c/results/fa-a2a-host*-rejudged.json; do
    src=${f%-rejudged.json}.json
    regenerate "$f" "$tool" fa-result "$src" --model $h200/$c/results/calibration-host-small-k.json --out "$f"
  done
done

# Archive: the re-judged copies of 04f8f90 (derived), then one summary per folder of run-time verdicts, each run
# judged with the calibration it was run with (meta argv --model; all measured before their runs).
a=results/h200/archive
v=$a/2026-12-02-04f8f90/fa_a2a-verdicts
for x in A B; do
  regenerate $v/fa-a2a-host-rejudged-$x.json "$tool" fa-result $v/fa-a2a-host.json \
    --model $v/calibration-host-small-k-$x.json --out $v/fa-a2a-host-rejudged-$x.json
  regenerate $v/fa-a2a-host-B-rejudged-$x.json "$tool" fa-result $v/fa-a2a-host-B.json \
    --model $v/calibration-host-small-k-$x.json --out $v/fa-a2a-host-B-rejudged-$x.json
done
score() {  # score FOLDER RESULT... -- CALIBRATION...
  local dir=$1; shift
  local results=() models=()
  while [[ $1 != -- ]]; do results+=("$1"); shift; done
  shift
  for m in "$@"; do models+=(--model "$m"); done
  regenerate "$dir/prediction-score.json" "$tool" fa-score "${results[@]}" "${models[@]}" --out "$dir/prediction-score.json"
}
score $v $v/fa-a2a-host.json $v/fa-a2a-host-B.json -- $v/calibration-host-small-k-A.json $v/calibration-host-small-k-B.json
d=$a/2026-12-02-f385b4c/fa_a2a-verdicts
score $d $d/fa-a2a-host.json -- $d/calibration-host-small-k-A.json
for d in $a/2026-12-02-d09c9ec/fa_a2a-split-host/results $a/2026-12-02-11fe4a5/fa_a2a-bands/results \
         $a/2026-12-02-687c80a/fa_a2a-paired/results $a/2026-12-02-1bb3bca/fa_a2a-small-k; do
  runs=()
  for f in "$d"/fa-a2a-host*.json; do [[ $f == *rejudged* ]] || runs+=("$f"); done
  score "$d" "${runs[@]}" -- "$d"/calibration-host-small-k.json
done
d=$a/2026-12-02-c32287c/fa_a2a-store-cache
score $d $d/fa-a2a-host-streaming.json -- $v/calibration-host-small-k-A.json
for d in $a/2026-12-02-f4cd35e/fa_a2a-diagonal:fa-a2a-host.json $a/2026-12-01-d07bdc4/fa_a2a:fa-a2a-sweep.json \
         $a/2026-12-02-252b598/fa_a2a-diag:fa-host-diag.json $a/2026-12-02-de2a283/fa_a2a:fa-a2a-host.json; do
  score "${d%%:*}" "${d%%:*}/${d#*:}" -- results/h200/calibration/calibration-host.json
done
echo "rejudge_fa_committed: done"
