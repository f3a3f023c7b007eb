#!/usr/bin/env bash
# The full H200 session in one call (device tool): calibration of the host target with the local control
# (h200_calibrate.sh), the FlashAttention checks and SDPA baseline (fa_check.sh), then the fa_a2a sweep
# with the fresh calibration's predictions and its Fig. 11 plot. Results land in $OUT (8 files at most).
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
bash scripts/device/h200_calibrate.sh 2>&1 | grep -v "^remote_store"
XS_FA_POINT=0 XS_FA_M="${XS_FA_M:-8192,16384,32768,49152,65536}" bash scripts/device/fa_check.sh "$@" 2>&1 | grep -vE "^(grep|scripts)" | tail -40
echo "== $(date -u +%H:%M:%S) fa_a2a sweep"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 400 build/bin/xstage-bench fa_a2a --M "${XS_FA_M:-8192,16384,32768,49152,65536}" --target local,host \
  --model "$OUT/calibration-host.json" --out "$OUT/fa_a2a.json" --no-progress 2>&1 | tail -45
echo "xstage-bench fa_a2a rc=${PIPESTATUS[0]}"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
rm -f "$OUT/fa_a2a.json.journal.jsonl"
echo "== $(date -u +%H:%M:%S) diagnostics: zero-gap completion horizon across K; same-lines vs fresh ring"
build/bin/xstage-bench remote_store.periodic --target host --K 16,33,66,132 --B 64KiB --G 0 --completion \
  --model "$OUT/calibration-host.json" --out "$OUT/completion-zero-gap.json" --no-progress 2>&1 | tail -6
build/bin/xstage-bench remote_store.periodic --target host --K 132 --B 2KiB --G 0 --address-mode same \
  --bursts 512 --warmup 64 --model "$OUT/calibration-host.json" --out "$OUT/same-lines.json" --no-progress 2>&1 | tail -3
rm -f "$OUT"/*.journal.jsonl
echo "== $(date -u +%H:%M:%S) run-to-run: a second calibration gated against the first"
G=$(mktemp -d)
build/bin/xstage-calibrate --target host --no-progress --out "$G/calibration-host-run2.json" >"$G/calibrate-run2.txt" 2>&1
echo "calibrate run 2 rc=$?"; grep -E "R \(|K=|issue |period |isolated |took" "$G/calibrate-run2.txt"
build/bin/xstage-gate --baseline "$OUT/calibration-host.json" --candidate "$G/calibration-host-run2.json" \
  --config configs/gate/calibration.json --junit "$G/gate-run2-vs-run1.xml" >"$G/gate-run2-vs-run1.txt" 2>&1
echo "gate rc=$?"; grep -vE "^SAME" "$G/gate-run2-vs-run1.txt" | tail -15
rm -f "$G"/*.journal.jsonl
tar -C "$G" -czf "$OUT/gate.tar.gz" .
tar -C "$OUT" -czf "$OUT/logs-all.tar.gz" logs.tar.gz fa_logs.tar.gz && rm -f "$OUT/logs.tar.gz" "$OUT/fa_logs.tar.gz"
[[ -f "$OUT/fa_a2a.json" ]] && python3 scripts/plot_fa_a2a.py "$OUT/fa_a2a.json" --out "$OUT/fa_a2a.png"
ls -la "$OUT"
