#!/usr/bin/env bash
# One call on the GPU machine: the default host calibration twice in a row, then xstage-gate of the second
# against the first with configs/gate/calibration.json, to show what run-to-run variation a GPU CI gate
# meets. Results in $OUT: both calibrations, the plot, the gate table and JUnit XML, logs.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
LOGS=$(mktemp -d)
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$LOGS/clocks.txt" 2>&1
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DXS_BUILD_BENCHMARKS=OFF >"$LOGS/configure.txt" 2>&1 &&
  cmake --build build -j16 --target xstage-calibrate xstage-gate xstage-predict xs_gpu_tests xs_gpu_attention_tests >"$LOGS/build.txt" 2>&1 ||
  { grep -E "error" "$LOGS/build.txt" | head -20; tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .; exit 1; }
(cd build && ctest -L gpu --output-on-failure) >"$LOGS/ctest-gpu.txt" 2>&1; echo "ctest gpu rc=$?"
for run in 1 2; do
  build/bin/xstage-calibrate --target host --no-progress --out "$OUT/calibration-host-run$run.json" \
    >"$LOGS/calibrate-run$run.txt" 2>&1
  echo "calibrate run $run rc=$?"; grep -E "R \(|copy engine|K=|issue |period |isolated |took" "$LOGS/calibrate-run$run.txt"
done
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader >>"$LOGS/clocks.txt" 2>&1
build/bin/xstage-gate --baseline "$OUT/calibration-host-run1.json" --candidate "$OUT/calibration-host-run2.json" \
  --config configs/gate/calibration.json --junit "$OUT/gate-run2-vs-run1.xml" >"$OUT/gate-run2-vs-run1.txt" 2>&1
echo "gate rc=$?"; grep -vE "^SAME" "$OUT/gate-run2-vs-run1.txt" | tail -25
build/bin/xstage-predict burst --model "$OUT/calibration-host-run2.json" --K 132 --B 32KiB --G 50us
python3 scripts/plot_calibration.py "$OUT/calibration-host-run2.json" --out "$OUT/calibration-host.png" >/dev/null
rm -f "$OUT"/*.journal.jsonl
cp "$LOGS/clocks.txt" "$OUT/clocks.txt"
tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
ls -la "$OUT"
