#!/usr/bin/env bash
# After a change that touches every kernel's includes (or any session's second call): the GPU tests of every
# kernel library (remote_store, interference, attention; MegaMoE has moe_ab.sh / moe_verify.sh), then the node gate
# (scripts/gate-node.sh) against the committed baseline of this GPU model, where one exists (exit 2 "no baseline"
# otherwise, reported, not a failure of this script). Results in $OUT/checks.tar.gz (test logs, gate junit.xml,
# summary.md, tables, env.txt, smi.csv.gz); clock lines are appended to $OUT/clocks.txt.
# GATE=record (session.sh part gate_record, with TESTS=0): record a baseline of this GPU model instead
# (gate-node.sh --record-baseline $OUT/baseline), then run the gate once against it, which must pass on a quiet
# node (the run-to-run check of the tolerances): $OUT/baseline.tar.gz (to commit as results/<model>/gate/node/ with
# a MANIFEST, docs/ci-gpu-runner.md) and $OUT/check.tar.gz (junit.xml, summary.md, the gate tables).
# Usage there: OUT=... [DEADLINE_S=560] [GATE=1|0|record] [TESTS=1|0] bash scripts/device/gpu_checks.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/checks"
mkdir -p "$LOGS"
DEADLINE_S=${DEADLINE_S:-560}
GATE=${GATE:-1}
TESTS=${TESTS:-1}
case $GATE in 0|1|record) ;; *) echo "gpu_checks.sh: GATE=$GATE (accepted: 1, 0, record)"; exit 2 ;; esac
source "$(dirname "$0")/lib.sh"
start_call checks baseline check
clocks checks-start
act nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$LOGS/gpu.txt"
targets=(xstage-calibrate xstage-bench xstage-gate)
[[ $TESTS == 1 ]] && targets=(xs_gpu_tests xs_gpu_interference_tests xs_gpu_attention_tests "${targets[@]}")
build_targets "${targets[@]}" || { echo "build failed"; exit 1; }
stamp "build done"
if [[ $TESTS == 1 ]]; then
  run_step gpu_tests 120 build/bin/xs_gpu_tests
  run_step gpu_interference_tests 120 build/bin/xs_gpu_interference_tests
  run_step gpu_attention_tests 180 build/bin/xs_gpu_attention_tests
fi
case $GATE in
  1)
    run_step gate_node 300 ./scripts/gate-node.sh --out "$LOGS/gate"
    tail -8 "$LOGS/gate_node.txt" ;;
  record)
    run_step gate_record 240 ./scripts/gate-node.sh --record-baseline "$OUT/baseline" --out "$LOGS/record"
    tail -12 "$LOGS/gate_record.txt"
    clocks after-record
    run_step gate_check 240 ./scripts/gate-node.sh --baseline "$OUT/baseline" --out "$OUT/check"
    tail -12 "$LOGS/gate_check.txt"
    # A recorded baseline holds the record run's files; a failed record keeps its logs.
    [[ -f "$OUT/baseline/node.txt" ]] && rm -rf "${LOGS:?}/record" ;;
esac
clocks checks-end
