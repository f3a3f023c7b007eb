#!/usr/bin/env bash
# One call on the GPU machine for the FlashAttention-A2A part only: build, the FA GPU tests and SDPA
# baseline (fa_check.sh), then the fa_a2a sweep with the committed H200 host calibration's predictions
# and its Fig. 11 plot. Results in $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
XS_FA_POINT=0 XS_FA_M="${XS_FA_M:-8192,16384,32768,49152,65536}" bash scripts/device/fa_check.sh 2>&1 |
  grep -vE "^(grep|scripts)" | tail -30
cmake --build build -j16 --target xstage-bench >/dev/null 2>&1 || { echo "xstage-bench build failed"; exit 1; }
echo "== $(date -u +%H:%M:%S) fa_a2a sweep"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 400 build/bin/xstage-bench fa_a2a --M "${XS_FA_M:-8192,16384,32768,49152,65536}" --target local,host \
  --model results/h200/calibration/calibration-host.json --out "$OUT/fa_a2a.json" --no-progress 2>&1 | tail -50
echo "xstage-bench fa_a2a rc=${PIPESTATUS[0]}"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader | tee "$OUT/clocks-after.txt"
rm -f "$OUT"/*.journal.jsonl
# cuDNN SDPA side by side in the same call, written into each point (extra.baseline_sdpa_cudnn, vs_cudnn).
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
[[ -f "$OUT/fa_a2a.json" ]] && { "$PY" scripts/fa_attach_baseline.py "$OUT/fa_a2a.json"; echo "baseline rc=$?"; }
[[ -f "$OUT/fa_a2a.json" ]] && python3 scripts/plot_fa_a2a.py "$OUT/fa_a2a.json" --out "$OUT/fa_a2a.png"
ls -la "$OUT"
