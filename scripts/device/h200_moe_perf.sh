#!/usr/bin/env bash
# MegaMoE speed study on the H200 (one device call): build, the MoE GPU tests, then `xstage-bench megamoe`
# for each tile width given in $BLOCK_NS (default "128 256") on the points given in $POINT_ARGS, each file
# with the PyTorch grouped_mm baseline attached. Results in $OUT, logs in $OUT/logs.tar.gz.
# Usage there: BLOCK_NS="128 256" POINT_ARGS="--shapes dsv4_flash --ksm 132 --target local" bash scripts/device/h200_moe_perf.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
PY=${PY:-/opt/torch/.venv/bin/python3}
[[ -x "$CMAKE" ]] || CMAKE=cmake
[[ -x "$PY" ]] || PY=python3
BLOCK_NS=${BLOCK_NS:-"128 256"}
POINT_ARGS=${POINT_ARGS:-"--shapes dsv4_flash --T 6976 --ksm 132 --target local"}
MOE_MODEL=${MOE_MODEL:-results/h200/megamoe/calibration-moe-pattern.json}
SECONDS=0
stamp() { echo "== $(date -u +%H:%M:%S) (+${SECONDS}s) $*"; }
clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader \
  2>&1 | sed "s/^/$1: /" >>"$LOGS/clocks.txt"; }
finish() { rm -f "$OUT"/*.journal.jsonl; cp "$LOGS/clocks.txt" "$OUT/clocks.txt" 2>/dev/null; tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
"$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 || { tail -30 "$LOGS/configure.txt"; exit 1; }
"$CMAKE" --build build -j16 --target xstage-bench xs_gpu_moe_tests >"$LOGS/build.txt" 2>&1 || { grep error "$LOGS/build.txt" | head -30; exit 1; }
stamp "gpu moe tests"
timeout 300 build/bin/xs_gpu_moe_tests >"$LOGS/gpu_moe.txt" 2>&1
echo "moe rc=$?"; grep -E "^\[  (FAILED|PASSED) |Failure" "$LOGS/gpu_moe.txt" | head -10
for bn in $BLOCK_NS; do
  stamp "bench b_n=$bn"
  clocks "before b_n=$bn"
  # shellcheck disable=SC2086
  build/bin/xstage-bench megamoe $POINT_ARGS --block-n "$bn" --model "$MOE_MODEL" --out "$OUT/megamoe-bn$bn.json" \
    --no-progress >"$LOGS/bench-bn$bn.txt" 2>&1
  echo "bench rc=$?"; tail -6 "$LOGS/bench-bn$bn.txt"
  clocks "after b_n=$bn"
  "$PY" scripts/moe_attach_baseline.py "$OUT/megamoe-bn$bn.json" >"$LOGS/baseline-bn$bn.txt" 2>&1
  echo "baseline rc=$?"
done
stamp done
