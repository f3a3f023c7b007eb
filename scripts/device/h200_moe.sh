#!/usr/bin/env bash
# MegaMoE on the H200 in one device call, from a fresh copy (nothing installed by hand): the README's
# calibrate.sh, a MoE-pattern calibration (scattered 256-B rows, 2-warp producers), the GPU tests (moe and
# attention), compute-sanitizer memcheck + racecheck of a small MegaMoE point, then `xstage-bench megamoe`
# (DSv4-Flash, bf16, skewed, T = 6976, host at K_SM = 66 and 132, local) with the model's predictions and
# the PyTorch grouped_mm baseline attached side by side. Results in $OUT, logs in $OUT/logs.tar.gz.
# Usage there: bash scripts/device/h200_moe.sh [extra xstage-bench megamoe flags]
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
export NCCL_NVLS_ENABLE=0
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
PY=${PY:-/opt/torch/.venv/bin/python3}
[[ -x "$CMAKE" ]] || CMAKE=cmake
[[ -x "$PY" ]] || PY=python3
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
SECONDS=0
stamp() { echo "== $(date -u +%H:%M:%S) (+${SECONDS}s) $*"; }
clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader \
  2>&1 | sed "s/^/$1: /" >>"$LOGS/clocks.txt"; }
finish() { rm -f "$OUT"/*.journal.jsonl; tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"; }
trap finish EXIT

stamp env
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; nvcc --version | tail -2; } >"$LOGS/env.txt" 2>&1
clocks start

# MOE_MODEL=path reuses a committed MoE-pattern calibration and skips both calibrations (a second call).
MOE_MODEL=${MOE_MODEL:-}
if [[ -z "$MOE_MODEL" ]]; then
  stamp "calibrate.sh (README)"
  ./scripts/calibrate.sh >"$LOGS/calibrate-sh.txt" 2>&1
  echo "calibrate.sh rc=$?"; grep -E "setup|R =|wrote|plot" "$LOGS/calibrate-sh.txt" | head -6
  cp out/calibration-gpu-host.json "$OUT/calibrate-sh.json" 2>/dev/null
fi

stamp build
"$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 || { tail -30 "$LOGS/configure.txt"; exit 1; }
if ! "$CMAKE" --build build -j16 --target xstage-bench xstage-calibrate xs_gpu_moe_tests xs_gpu_attention_tests \
    >"$LOGS/build.txt" 2>&1; then
  grep -E "error" "$LOGS/build.txt" | head -40; exit 1
fi

if [[ -z "$MOE_MODEL" ]]; then
  stamp "calibration: MoE store pattern (scattered 256-B rows, 64-thread producers)"
  MOE_MODEL="$OUT/calibration-moe-pattern.json"
  build/bin/xstage-calibrate --target host --address-mode scattered --threads 64 --out "$MOE_MODEL" \
    >"$LOGS/calibrate-moe.txt" 2>&1
  echo "rc=$?"; grep -E "R \(|wrote" "$LOGS/calibrate-moe.txt" | head -6
fi

stamp "gpu tests"
timeout 300 build/bin/xs_gpu_moe_tests >"$LOGS/gpu_moe.txt" 2>&1
echo "moe rc=$?"; grep -E "^\[  (FAILED|PASSED) |Failure|timeout" "$LOGS/gpu_moe.txt" | head -20
timeout 300 build/bin/xs_gpu_attention_tests >"$LOGS/gpu_attention.txt" 2>&1
echo "attention rc=$?"; grep -E "^\[  (FAILED|PASSED) |Failure" "$LOGS/gpu_attention.txt" | head -10

stamp "sanitizers (small MegaMoE point)"
for tool in memcheck racecheck; do
  timeout 200 "$SANITIZER" --tool $tool --error-exitcode 9 build/bin/xs_gpu_moe_tests \
    --gtest_filter='Small/MegaMoeKernel.*/0' >"$LOGS/$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$LOGS/$tool.txt" | head -3
done

stamp "xstage-bench megamoe"
clocks before-bench
build/bin/xstage-bench megamoe --shapes dsv4_flash --T 6976 --ksm 66,132 --target host,local \
  --model "$MOE_MODEL" --out "$OUT/megamoe-dsv4_flash.json" --no-progress "$@" \
  >"$LOGS/bench.txt" 2>&1
echo "bench rc=$?"; tail -12 "$LOGS/bench.txt"
clocks after-bench
stamp "PyTorch grouped_mm baseline"
"$PY" scripts/moe_attach_baseline.py "$OUT/megamoe-dsv4_flash.json" >"$LOGS/baseline.txt" 2>&1
echo "baseline rc=$?"; tail -4 "$LOGS/baseline.txt" | cut -c1-400
cp "$LOGS/clocks.txt" "$OUT/clocks.txt"
stamp done
