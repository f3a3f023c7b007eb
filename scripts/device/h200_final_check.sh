#!/usr/bin/env bash
# One short device call after late changes: the README's calibrate.sh on a bare machine, the GPU tests, and
# xstage-bench fa_a2a's journal (header, refusal without --resume, resume of a finished run's points) on a
# small point, with a prediction from the committed calibration (Q not identified there).
# Usage there: ./scripts/device/h200_final_check.sh   ($OUT: results; run scripts/device/stamp.sh here first)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT/logs"
export NCCL_NVLS_ENABLE=0
log() { echo "== $(date -u +%H:%M:%S) $*"; }
log "README: ./scripts/calibrate.sh"
./scripts/calibrate.sh >"$OUT/logs/calibrate-sh.txt" 2>&1; echo "calibrate.sh rc=$?"
grep -E "setup:|R \(|wrote|plot" "$OUT/logs/calibrate-sh.txt" | head -6
cp out/calibration-gpu-host.json "$OUT/calibrate-sh.json" 2>/dev/null
log "build everything + GPU tests"
cmake --build build -j16 >"$OUT/logs/build.txt" 2>&1; echo "build rc=$?"
(cd build && ctest -L gpu --output-on-failure --timeout 300) >"$OUT/logs/ctest-gpu.txt" 2>&1
echo "ctest -L gpu rc=$?"; grep -E "tests passed|Failed|Not Run" "$OUT/logs/ctest-gpu.txt" | head -5
log "fa_a2a journal"
fa=(build/bin/xstage-bench fa_a2a --M 8192 --heads 8 --target host --no-progress
    --model results/h200/calibration/calibration-host.json --out "$OUT/fa.json")
"${fa[@]}" >"$OUT/logs/fa-run1.txt" 2>&1; echo "fa run 1 rc=$? (0 expected)"
head -c 600 "$OUT/fa.json.journal.jsonl" 2>/dev/null | head -1 | cut -c1-300
printf '{"partial' >>"$OUT/fa.json.journal.jsonl" 2>/dev/null
"${fa[@]}" >"$OUT/logs/fa-run2.txt" 2>&1; echo "fa rerun without --resume rc=$? (2 expected unless finished)"; tail -2 "$OUT/logs/fa-run2.txt"
"${fa[@]}" --resume >"$OUT/logs/fa-run3.txt" 2>&1; echo "fa --resume rc=$?"; grep -iE "resum|error" "$OUT/logs/fa-run3.txt" | head -3
"${fa[@]}" --resume --M 16384 >"$OUT/logs/fa-run4.txt" 2>&1; echo "fa --resume with another --M rc=$? (2 expected)"; tail -1 "$OUT/logs/fa-run4.txt"
rm -f "$OUT"/*.journal.jsonl
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$OUT/logs"
ls -la "$OUT"
