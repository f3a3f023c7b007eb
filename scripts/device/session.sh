#!/usr/bin/env bash
# Several device-call scripts in one call, each in its own folder: OUT=<dir> bash scripts/device/session.sh PART...
# PART: predictions | interference | epilogue (interference.sh on configs/calibrate/loaded-epilogue.json, or on
# $EPI_CONFIG, e.g. configs/calibrate/loaded-epilogue-wide.json: 26 points, 8 of them below the drain bound) |
# moe | gemm (scripts/device/moe_gemm_rates.sh) | calibrate_sh (the README's ./scripts/calibrate.sh, exactly, from
# this copy). Each part runs with its own deadline (env PRED_S, INTERF_S, EPI_S, MOE_S, GEMM_S, CAL_S), its
# output goes to
# $OUT/<part>.log and its files into $OUT/<part>.tar (one file per part: a call returns at most 8 files).
set -uo pipefail
OUT=${OUT:?OUT must name the output folder}
for part in "$@"; do
  dir="$OUT/$part"
  mkdir -p "$dir"
  echo "== $(date -u +%H:%M:%S) $part"
  case $part in
    predictions) OUT="$dir" DEADLINE_S=${PRED_S:-240} bash scripts/device/predictions.sh ;;
    interference) OUT="$dir" DEADLINE_S=${INTERF_S:-330} bash scripts/device/interference.sh ;;
    epilogue) OUT="$dir" DEADLINE_S=${EPI_S:-300} bash scripts/device/interference.sh \
                --config "${EPI_CONFIG:-configs/calibrate/loaded-epilogue.json}" ;;
    gemm) OUT="$dir" DEADLINE_S=${GEMM_S:-200} bash scripts/device/moe_gemm_rates.sh ;;
    moe) OUT="$dir" DEADLINE_S=${MOE_S:-420} PARTS=${MOE_PARTS:-"tests sanitize canlose sweep torch"} \
           bash scripts/device/moe_verify.sh ;;
    calibrate_sh)  # a fresh copy of this tree (no build/, no out/), then exactly the README's command
      fresh=$(mktemp -d)
      tar --exclude=./build --exclude=./out -cf - . | tar -C "$fresh" -xf -
      (cd "$fresh" && timeout -k 5 "${CAL_S:-240}" ./scripts/calibrate.sh; echo "calibrate.sh rc=$?"
       cp "$fresh"/out/calibration-*.json "$dir/" 2>/dev/null) ;;
    *) echo "session.sh: unknown part '$part' (predictions, interference, epilogue, moe, gemm, calibrate_sh)"; exit 2 ;;
  esac >"$OUT/$part.log" 2>&1
  tail -25 "$OUT/$part.log"
  tar -C "$OUT" -cf "$OUT/$part.tar" "$part" && rm -rf "${dir:?}"
done
