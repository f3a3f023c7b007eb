#!/usr/bin/env bash
# After a change that touches every kernel's includes (or any session's second call): the GPU tests of every
# kernel library (remote_store, interference, attention; MegaMoE has moe_ab.sh / moe_verify.sh), then the node gate
# (scripts/gate-node.sh) against the committed baseline of this GPU model, where one exists (exit 2 "no baseline"
# otherwise, reported, not a failure of this script). Results in $OUT/checks.tar.gz (test logs, gate junit.xml,
# summary.md, tables); clock lines are appended to $OUT/clocks.txt.
# Usage there: OUT=... [DEADLINE_S=560] [GATE=1] bash scripts/device/gpu_checks.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/checks"
mkdir -p "$LOGS"
DEADLINE_S=${DEADLINE_S:-560}
GATE=${GATE:-1}
source "$(dirname "$0")/lib.sh"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
export NCCL_NVLS_ENABLE=0
trap 'archive_folders checks' EXIT
clocks checks-start
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$LOGS/gpu.txt"
build_targets xs_gpu_tests xs_gpu_interference_tests xs_gpu_attention_tests xstage-calibrate xstage-bench xstage-gate ||
  { echo "build failed"; exit 1; }
stamp "build done"
run_step gpu_tests 120 build/bin/xs_gpu_tests
run_step gpu_interference_tests 120 build/bin/xs_gpu_interference_tests
run_step gpu_attention_tests 180 build/bin/xs_gpu_attention_tests
if [[ $GATE == 1 ]]; then
  run_step gate_node 300 ./scripts/gate-node.sh --out "$LOGS/gate"
  tail -8 "$LOGS/gate_node.txt"
fi
clocks checks-end
