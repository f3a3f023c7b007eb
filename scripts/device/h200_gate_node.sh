#!/usr/bin/env bash
# One call on the GPU machine: records the H200 baseline of scripts/gate-node.sh (docs/ci-gpu-runner.md), then
# runs the gate once against it, which must pass on a quiet node (the run-to-run check of the tolerances on
# these smoke steps). Results in $OUT: baseline.tar.gz (to commit as results/h200/gate/node/), check.tar.gz
# (junit.xml, summary.md, the gate tables), logs.tar.gz, clocks.txt.
# Usage: OUT=... scripts/device/h200_gate_node.sh   (about 5 minutes with the build)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
LOGS=$OUT/logs
mkdir -p "$LOGS"
DEADLINE_S=${DEADLINE_S:-560}
source scripts/device/lib.sh
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
export NCCL_NVLS_ENABLE=0
build_targets xstage-calibrate xstage-bench xstage-gate || exit 1
clocks before
stamp "record the baseline"
./scripts/gate-node.sh --record-baseline "$OUT/baseline" --out "$OUT/record" >"$LOGS/record.txt" 2>&1
echo "record rc=$?"; cat "$LOGS/record.txt" | tail -12
clocks after-record
stamp "gate against it"
./scripts/gate-node.sh --baseline "$OUT/baseline" --out "$OUT/check" >"$LOGS/check.txt" 2>&1
echo "check rc=$?"; tail -12 "$LOGS/check.txt"
clocks after-check
rm -rf "$OUT/record"  # the baseline folder holds its files
archive_folders baseline check logs
ls -la "$OUT"
