#!/usr/bin/env bash
# MegaMoE kernel smoke check on the H200 in one device call: configure, build the MegaMoE GPU tests only,
# run them, then compute-sanitizer memcheck and racecheck on the smallest shape. Logs in $OUT (one archive).
# Usage there: bash scripts/device/h200_moe_smoke.sh [gtest filter for the sanitizer runs]
# Never put the death test in that filter: under the sanitizer its deliberate hang runs into the timeout.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
FILTER=${1:-'Small/MegaMoeKernel.*/0'}
SECONDS=0
stamp() { echo "== $(date -u +%H:%M:%S) (+${SECONDS}s) $*"; }
finish() { tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"; }
trap finish EXIT

stamp configure
"$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 || { tail -30 "$LOGS/configure.txt"; exit 1; }
stamp build
if ! "$CMAKE" --build build -j16 --target xs_gpu_moe_tests xstage-bench >"$LOGS/build.txt" 2>&1; then
  grep -E "error" "$LOGS/build.txt" | head -40; exit 1
fi
stamp "gpu moe tests"
timeout 300 build/bin/xs_gpu_moe_tests >"$LOGS/gpu_moe.txt" 2>&1
echo "rc=$?"; grep -E "^\[  (FAILED|PASSED|  OK) |Failure|error|timeout|differs|got|seed" "$LOGS/gpu_moe.txt" | head -40
stamp "memcheck $FILTER"
timeout 150 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_moe_tests --gtest_filter="$FILTER" \
  >"$LOGS/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED" "$LOGS/memcheck.txt" | head -10
stamp "racecheck $FILTER"
timeout 150 "$SANITIZER" --tool racecheck --error-exitcode 9 build/bin/xs_gpu_moe_tests --gtest_filter="$FILTER" \
  >"$LOGS/racecheck.txt" 2>&1
echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|hazard|PASSED|FAILED" "$LOGS/racecheck.txt" | head -10
stamp "peer target on one GPU (expect: skipped, unavailable)"
build/bin/xstage-bench megamoe --shapes dsv4_flash --T 2048 --ksm 66 --target peer:1 --out "$OUT/megamoe-peer.json" \
  --no-progress >"$LOGS/peer.txt" 2>&1
echo "rc=$?"; tail -3 "$LOGS/peer.txt"
stamp done
