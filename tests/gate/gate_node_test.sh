#!/bin/sh
# CTest gate.node.* (issue 31): scripts/gate-node.sh end to end on the simulator, as CI runs it.
#   pass        against the committed simulator baseline (results/sim/gate/node): exit 0, JUnit without a
#               failure, the GPU-only steps skipped, summary "PASS" and no NEW row (the baseline is current)
#   regression  a planted regression, the simulated node's drain rate 10% lower (--tool-args "--sim-R ..."):
#               exit 1, the R row and the points fail in the JUnit and the summary
#   baseline    no baseline for the model: exit 2 saying how to record one; --out that holds files, is a file or
#               lies under a file: exit 2 naming which, nothing changed; a baseline recorded with --record-baseline passes a run against it
# Usage: gate_node_test.sh <pass|regression|baseline> <source dir> <bin dir>. Exit 0 when every check passed.
mode=$1 src=$2 bin=$3
gate="$src/scripts/gate-node.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# The simulator planted like the H200's host path (R ~ 55 GB/s), so the calibration's fixed sweep
# (configs/calibrate/host-default.json, sized for 55 GB/s) spans every regime; the baseline used the same.
sim_args="--sim-R 55GB/s"
run() {  # run <args...>: gate-node.sh from $tmp, log in $tmp/log, exit code in $rc
  (cd "$tmp" && bash "$gate" --backend sim --bin "$bin" "$@") >"$tmp/log" 2>&1; rc=$?
  echo "\$ gate-node.sh --backend sim $* -> exit $rc"; sed 's/^/  /' "$tmp/log" | head -40
}
has() { grep -q -- "$1" "$2" || fail "'$1' not in $(basename "$2")"; }
lacks() { ! grep -q -- "$1" "$2" || fail "'$1' in $(basename "$2")"; }

case $mode in
pass)
  run --tool-args "$sim_args" --out pass
  [ "$rc" -eq 0 ] || fail "exit $rc, expected 0"
  has "# xstage node gate: PASS" "$tmp/pass/summary.md"
  has "| fa_a2a | skipped | needs a GPU |" "$tmp/pass/summary.md"
  has "<testsuite name=\"calibration: model.R_Bps\"" "$tmp/pass/junit.xml"
  lacks "<failure" "$tmp/pass/junit.xml"; lacks "<error" "$tmp/pass/junit.xml"
  # Every row the simulator reports is in the committed baseline: a NEW row is one the gate does not guard
  # (re-record: scripts/gate-node.sh --backend sim --record-baseline results/sim/gate/node --tool-args "--sim-R 55GB/s")
  grep -q " NEW)" "$tmp/pass/summary.md" && fail "NEW rows against results/sim/gate/node: record the baseline again"
  ;;
regression)
  run --tool-args "--sim-R 49.5GB/s" --out slow
  [ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (regression)"
  has "# xstage node gate: FAIL" "$tmp/slow/summary.md"
  has "| calibration | \*\*FAIL\*\* |" "$tmp/slow/summary.md"
  has "| remote_store.periodic | \*\*FAIL\*\* |" "$tmp/slow/summary.md"
  has "classname=\"gate-node.calibration.model.R_Bps\" name=\"model.R_Bps\" time=\"0\">" "$tmp/slow/junit.xml"
  grep -A1 'name="model.R_Bps"' "$tmp/slow/junit.xml" | grep -q "<failure" || fail "R is not a JUnit failure"
  ;;
baseline)
  run --tool-args "$sim_args" --baseline "$tmp/none" --out nobase
  [ "$rc" -eq 2 ] || fail "exit $rc, expected 2 (no baseline)"
  has "no baseline for this GPU model (simulator) in $tmp/none" "$tmp/log"; has "--record-baseline" "$tmp/log"
  [ ! -e "$tmp/nobase" ] || fail "a run refused for its missing baseline created --out"
  run --baseline "$tmp/base0" --out base0
  [ "$rc" -eq 2 ] || fail "--out that is the baseline: exit $rc, expected 2"
  mkdir "$tmp/full" && echo keep >"$tmp/full/x"
  run --out full
  [ "$rc" -eq 2 ] || fail "exit $rc, expected 2 (--out holds files)"
  [ "$(ls -A "$tmp/full")" = "x" ] || fail "a refused --out changed the folder"
  # A file where a folder is expected, or under one: exit 2 saying so, the file unchanged.
  echo keep >"$tmp/afile"
  run --out afile
  [ "$rc" -eq 2 ] || fail "--out afile: exit $rc, expected 2"
  has "gate-node: error: --out $tmp/afile is a file, not a folder: name an empty or new folder" "$tmp/log"
  run --out afile/sub
  [ "$rc" -eq 2 ] || fail "--out afile/sub: exit $rc, expected 2"
  has "--out $tmp/afile/sub cannot be created: $tmp/afile is a file, not a folder" "$tmp/log"
  [ "$(cat "$tmp/afile")" = "keep" ] || fail "a refused --out changed the file"
  run --tool-args "$sim_args" --only remote_store.isolated --record-baseline base --out rec
  [ "$rc" -eq 0 ] || fail "recording: exit $rc, expected 0"
  for f in MANIFEST node.txt remote_store.isolated.json; do [ -f "$tmp/base/$f" ] || fail "base/$f not written"; done
  run --tool-args "$sim_args" --only remote_store.isolated --baseline base --out again
  [ "$rc" -eq 0 ] || fail "against the recorded baseline: exit $rc, expected 0"
  run --tool-args "$sim_args" --only calibration --baseline base --out nofile
  [ "$rc" -eq 2 ] || fail "a step without a baseline file: exit $rc, expected 2"
  cp -r "$tmp/base" "$tmp/other" && sed -i 's/^gpu: .*/gpu: NVIDIA H200/' "$tmp/other/node.txt"
  run --tool-args "$sim_args" --only remote_store.isolated --baseline other --out othermodel
  [ "$rc" -eq 2 ] || fail "a baseline of another GPU model: exit $rc, expected 2"
  has "was recorded on NVIDIA H200, this node is simulator" "$tmp/log"
  [ ! -e "$tmp/othermodel" ] || fail "a run refused for its baseline's GPU model created --out"
  ;;
*) echo "usage: $0 <pass|regression|baseline> <source dir> <bin dir>"; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all gate-node $mode checks passed"
