#!/usr/bin/env bash
# One planned call on the GPU machine (device tool): environment record, build, GPU + unit tests, the
# default host-target calibration (with the local control), plots. Everything worth keeping lands in
# $OUT (at most 8 files come back: results are JSON/PNG, logs are bundled into one tarball).
# Usage there: bash scripts/device/h200_calibrate.sh [extra xstage-calibrate args]
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
LOGS=$(mktemp -d)
export NCCL_NVLS_ENABLE=0   # never NVLink multicast on shared machines
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }

{
  stamp env
  nvidia-smi || true
  nvidia-smi -q -d CLOCK,PERFORMANCE | head -80 || true
  nvcc --version | tail -2
  cmake --version | head -1
  ls /usr/include/CLI/CLI.hpp /usr/include/nlohmann/json.hpp /usr/include/fmt/format.h \
     /usr/include/benchmark/benchmark.h /usr/include/gtest/gtest.h 2>&1
  ls /usr/lib/x86_64-linux-gnu/cmake 2>/dev/null | tr '\n' ' '
  python3 -c 'import matplotlib; print("matplotlib", matplotlib.__version__)'
} >"$LOGS/env.txt" 2>&1
cat "$LOGS/env.txt" | grep -E "H200|Driver|CUDA|release|cmake version|No such" | head -10

stamp build
t0=$(date +%s)
if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DXS_BUILD_BENCHMARKS=OFF >"$LOGS/configure.txt" 2>&1; then
  tail -40 "$LOGS/configure.txt"; tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .; exit 1
fi
# The calibration path first, so it runs whatever state the other targets are in; then the rest.
if ! cmake --build build -j16 --target xstage-calibrate xstage-predict xs_gpu_tests >"$LOGS/build.txt" 2>&1; then
  grep -E "error|Error" "$LOGS/build.txt" | head -40; tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .; exit 1
fi
cmake --build build -j16 -- -k 0 >"$LOGS/build-all.txt" 2>&1 || { echo "full build failed:"; grep -E "error" "$LOGS/build-all.txt" | head -10; }
echo "build: $(( $(date +%s) - t0 )) s"

stamp gpu tests
(cd build && ctest -L gpu --output-on-failure --timeout 300) >"$LOGS/ctest-gpu.txt" 2>&1
echo "ctest gpu rc=$?"; grep -E "tests passed|Failed|Not Run|\*\*\*" "$LOGS/ctest-gpu.txt" | head -20
(cd build && ctest -L unit -j16 --timeout 300) >"$LOGS/ctest-unit.txt" 2>&1
echo "ctest unit rc=$?"; grep -E "tests passed|Failed" "$LOGS/ctest-unit.txt" | head -10

stamp calibrate
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOGS/clocks-before.txt" 2>&1
/usr/bin/time -v build/bin/xstage-calibrate --target host --no-progress --points \
  --out "$OUT/calibration-host.json" "$@" >"$LOGS/calibrate.txt" 2>"$LOGS/calibrate-stderr.txt"
rc=$?
echo "calibrate rc=$rc"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$LOGS/clocks-after.txt" 2>&1
tail -45 "$LOGS/calibrate.txt"; grep -E "Elapsed|error" "$LOGS/calibrate-stderr.txt" | head
[[ -f "$OUT/calibration-host.json.journal.jsonl" ]] && mv "$OUT/calibration-host.json.journal.jsonl" "$LOGS/"
if [[ -f "$OUT/calibration-host.json" ]]; then
  python3 scripts/plot_calibration.py "$OUT/calibration-host.json" --out "$OUT/calibration-host.png" || true
fi
tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
ls -la "$OUT"
