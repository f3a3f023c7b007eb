#!/usr/bin/env bash
# One device call after the matrix: issue 12's D sweep (h200_moe_matrix.sh dsweep parts, MOE_S seconds), then
# issue 13's FA speed timing (h200_fa_speed.sh time: the schedules at d = 128 on local, cuDNN side by side, the
# rest of the call). Each script keeps its own deadline and archives; the parts come back as moe.tar.gz and
# fa.tar.gz plus summary.txt (at most 8 files return from a call).
# Usage there: bash scripts/device/h200_dsweep_fa.sh   (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
TOTAL_S=${TOTAL_S:-550}
MOE_S=${MOE_S:-190}
SECONDS=0
OUT="$OUT/moe" PARTS=${DSWEEP_PARTS:-"dsweep:bf16:66 dsweep:fp8:66 dsweep:bf16:132 dsweep:fp8:132"} DEADLINE_S=$MOE_S \
  bash scripts/device/h200_moe_matrix.sh
OUT="$OUT/fa" DEADLINE_S=$((TOTAL_S - SECONDS)) XS_FA_DIMS=${XS_FA_DIMS:-128} bash scripts/device/h200_fa_speed.sh time
cp "$OUT/fa/summary.txt" "$OUT/summary.txt" 2>/dev/null
for d in moe fa; do [[ -d "$OUT/$d" ]] && tar -C "$OUT" -czf "$OUT/$d.tar.gz" "$d" && rm -rf "${OUT:?}/$d"; done
ls -la "$OUT"
