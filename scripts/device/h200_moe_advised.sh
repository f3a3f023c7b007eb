#!/usr/bin/env bash
# The dit_moe follow-up to the matrix (issue 12): the 16 dit_moe host configurations at the D the advisor's
# schedule replay recommends (registered before the run in results/h200/megamoe/advised-d-predictions.json),
# both schedules, with the local control at K_SM 66; then dit_moe D sweeps (skewed, T 6976, bf16/fp8, K_SM
# 66/132, interleaved only) against the replayed D. Predictions before each point as in the matrix.
# Returns: results.tar.gz, journals.tar.gz, logs.tar.gz, clocks.txt, env.txt.
# Usage there: bash scripts/device/h200_moe_advised.sh   (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"; JRN="$OUT/journals"
mkdir -p "$LOGS" "$RES" "$JRN"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
DEADLINE_S=${DEADLINE_S:-500}
MOE_MODEL=results/h200/megamoe/calibration-moe-pattern.json
TFLOPS=${TFLOPS:-bf16=708,fp8=589}  # as the matrix: h200_moe_matrix.sh derives them from an earlier run
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { archive_folders results journals logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; echo "TFLOPS=$TFLOPS"; } >"$OUT/env.txt" 2>&1
stamp build
"$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 || { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xstage-bench >"$LOGS/build.txt" 2>&1 ||
  { grep error "$LOGS/build.txt" | head -30; exit 1; }
COMMON=(--shapes dit_moe --block-n 128 --model "$MOE_MODEL" --tensor-tflops "$TFLOPS" --launches-per-graph 1 --no-progress)
BOTH=(--variants expert_wave,interleaved --routing balanced,skewed --precision bf16,fp8)
SWEEP=(--variants interleaved --routing skewed --precision bf16,fp8 --T 6976 --target host --D 1,2,3,4,5,6,8,12,16)
part() {  # name args...
  local name=$1; shift
  local left=$((DEADLINE_S - SECONDS))
  if ((left < 20)); then echo "part $name: not started (deadline)"; return 0; fi
  stamp "part $name (${left}s left)"; clocks "before $name"
  timeout -s INT -k 60 "$left" build/bin/xstage-bench megamoe "${COMMON[@]}" "$@" --out "$JRN/megamoe-$name.json" \
    >"$LOGS/megamoe-$name.txt" 2>&1
  echo "part $name rc=$?"; clocks "after $name"; grep -vE "^\s*$" "$LOGS/megamoe-$name.txt" | tail -3
  [[ -f $JRN/megamoe-$name.json ]] && mv "$JRN/megamoe-$name.json" "$RES/" && rm -f "$JRN/megamoe-$name.json.journal.jsonl"
  return 0
}
part dit-advised-k66-d3 "${BOTH[@]}" --T 6976,16384 --ksm 66 --D 3 --target host,local
part dit-advised-k66-d4 "${BOTH[@]}" --T 2048 --ksm 66 --D 4 --target host,local
part dit-advised-k132-d6 --variants expert_wave,interleaved --routing balanced --precision bf16,fp8 --T 6976 --ksm 132 \
  --D 6 --target host
part dit-advised-k132-d5 --variants expert_wave,interleaved --routing skewed --precision bf16,fp8 --T 6976 --ksm 132 \
  --D 5 --target host
part dit-dsweep-k66 "${SWEEP[@]}" --ksm 66
part dit-dsweep-k132 "${SWEEP[@]}" --ksm 132
stamp done
