#!/usr/bin/env bash
# Several device-call scripts in one call, each in its own folder: OUT=<dir> bash scripts/device/session.sh PART...
# PART: predictions | interference | epilogue (interference.sh on configs/calibrate/loaded-epilogue.json, or on
# $EPI_CONFIG, e.g. configs/calibrate/loaded-epilogue-wide.json: 26 points, 8 of them below the drain bound) |
# moe | gemm (scripts/device/moe_gemm_rates.sh) | calibrate_sh (the README's ./scripts/calibrate.sh, exactly, from
# this copy) | checks (gpu_checks.sh) | gate_record (gpu_checks.sh GATE=record TESTS=0: a gate-node baseline of this
# GPU model, then the gate against it) | calibration (calibration.sh, its PARTS from $CALIBRATION_PARTS) | fa (fa.sh,
# PARTS from $FA_PARTS) | moe_bench (moe_bench.sh, PARTS from $MOE_BENCH_PARTS). Each part runs with its own deadline
# (env PRED_S, INTERF_S, EPI_S, MOE_S, GEMM_S, CAL_S, CHECKS_S, GATE_S, CALIBRATION_S, FA_S, MOE_BENCH_S), its output
# goes to $OUT/<part>.log and its files into $OUT/<part>.tar (one file per part: a call returns at most 8 files).
# docs/device-scripts.md lists every part's knobs and files.
set -uo pipefail
OUT=${OUT:?OUT must name the output folder}
source "$(dirname "$0")/lib.sh"
# with_parts VALUE SCRIPT LIMIT: scripts/device/SCRIPT in the part's folder under its deadline, PARTS=VALUE (the
# script's own default where VALUE is empty).
with_parts() {
  local parts=$1 script=$2 limit=$3
  if [[ -n $parts ]]; then
    OUT="$dir" DEADLINE_S=$limit PARTS="$parts" bash "scripts/device/$script"
  else
    (unset PARTS; OUT="$dir" DEADLINE_S=$limit bash "scripts/device/$script")
  fi
}
PARTS_KNOWN="predictions interference epilogue moe gemm calibrate_sh checks gate_record calibration fa moe_bench"
(($# > 0)) || { echo "session.sh: no part given: name one or more of ${PARTS_KNOWN// /, }" >&2; exit 2; }
seen=" "
for part in "$@"; do  # every part checked before the first runs, and each part's own PARTS and GATE too
  [[ " $PARTS_KNOWN " == *" $part "* ]] || { echo "session.sh: unknown part '$part' (${PARTS_KNOWN// /, })" >&2; exit 2; }
  [[ $seen != *" $part "* ]] || { echo "session.sh: part '$part' given twice (its files would be overwritten)" >&2; exit 2; }
  seen+="$part "
  nested="" script=""
  case $part in
    moe) nested=${MOE_PARTS:-} script=moe_verify.sh ;;
    calibration) nested=${CALIBRATION_PARTS:-} script=calibration.sh ;;
    fa) nested=${FA_PARTS:-} script=fa.sh ;;
    moe_bench) nested=${MOE_BENCH_PARTS:-} script=moe_bench.sh ;;
    checks) [[ ${GATE:-1} =~ ^(0|1|record)$ ]] ||
              { echo "session.sh: GATE='${GATE}' is not 0, 1 or record (part checks)" >&2; exit 2; } ;;
  esac
  if [[ -n $nested ]]; then
    check_out=$(mktemp -d)
    PARTS_CHECK_ONLY=1 OUT="$check_out" PARTS="$nested" bash "scripts/device/$script" >&2 ||
      { rc=$?; rm -rf "$check_out"; echo "session.sh: part '$part': its PARTS '$nested' were refused" >&2; exit "$rc"; }
    rm -rf "$check_out"
  fi
done
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
      if dry; then
        echo "DRY: ./scripts/calibrate.sh in a fresh copy of this tree (limit ${CAL_S:-240}s)"
      else
        fresh=$(mktemp -d)
        tar --exclude=./build --exclude=./out -cf - . | tar -C "$fresh" -xf -
        (cd "$fresh" && timeout -k 5 "${CAL_S:-240}" ./scripts/calibrate.sh; echo "calibrate.sh rc=$?"
         cp "$fresh"/out/calibration-*.json "$dir/" 2>/dev/null)
      fi ;;
    checks) OUT="$dir" DEADLINE_S=${CHECKS_S:-560} bash scripts/device/gpu_checks.sh ;;
    gate_record) OUT="$dir" DEADLINE_S=${GATE_S:-500} GATE=record TESTS=0 bash scripts/device/gpu_checks.sh ;;
    calibration) with_parts "${CALIBRATION_PARTS:-}" calibration.sh "${CALIBRATION_S:-480}" ;;
    fa) with_parts "${FA_PARTS:-}" fa.sh "${FA_S:-560}" ;;
    moe_bench) with_parts "${MOE_BENCH_PARTS:-}" moe_bench.sh "${MOE_BENCH_S:-560}" ;;
  esac >"$OUT/$part.log" 2>&1
  tail -25 "$OUT/$part.log"
  tar -C "$OUT" -cf "$OUT/$part.tar" "$part" && rm -rf "${dir:?}"
done
