#!/usr/bin/env bash
# Issue 28 item 2: per-shape GEMM rates for the MegaMoE ab initio prediction, in one device call (well under 8
# minutes): torch grouped_mm (bf16) / _scaled_grouped_mm (fp8) on each shape's Linear-1 and Linear-2, one
# configuration per (shape, precision) of the committed H200 matrix (balanced routing, T 6976, K_SM 66; its
# configuration only), timed by scripts/moe_vs_grouped_mm.py (its torch_l1 / torch_l2 contenders), converted to
# an xstage.gemm_rates file for `xstage-predict moe-whole --gemm-rates`.
# Usage (repository root): OUT=<dir> bash scripts/device/moe_gemm_rates.sh [--device-sms N]
# $OUT afterwards: gemm-rates.json, moe-vs-grouped-mm.json, logs.tar.gz, clocks.txt.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
RES="$OUT"
LOGS="$OUT/logs"
mkdir -p "$RES" "$LOGS"
source scripts/device/lib.sh
DEVICE_SMS=132
while (($#)); do
  case $1 in
    --device-sms) DEVICE_SMS=$2; shift 2 ;;
    *) echo "moe_gemm_rates.sh: unknown argument '$1' (accepted: --device-sms N)"; exit 2 ;;
  esac
done
SECONDS=0
DEADLINE_S=${DEADLINE_S:-450}
start_call
clocks start
build_targets xstage_moe || exit 1
clocks built
CONFIGS="$LOGS/gemm-configs.json"
run_step select 30 "$PY" scripts/moe_gemm_rates.py select results/h200/megamoe/matrix/megamoe-bf16-6976.json \
  results/h200/megamoe/matrix/megamoe-fp8-6976.json --out "$CONFIGS"
run_step moe_vs_grouped_mm 360 "$PY" scripts/moe_vs_grouped_mm.py --lib build/lib/libxstage_moe.so \
  --from-result "$CONFIGS" --targets local --out "$RES/moe-vs-grouped-mm.json" --experts-per-wave 1 \
  --launches 3 --warmup 2 --rounds 10
run_step rates 30 "$PY" scripts/moe_gemm_rates.py rates "$RES/moe-vs-grouped-mm.json" --out "$RES/gemm-rates.json" \
  --device-sms "$DEVICE_SMS"
clocks "done"
archive_folders logs
stamp "done"
