#!/usr/bin/env bash
# MegaMoE bench runs, each point predicted before it runs, in parts that fit device calls: the first b_n results and
# issue 12's matrix and D sweep (results/h200/megamoe/). PARTS, space-separated, run in the order given:
#   precheck                 the MegaMoE GPU tests, memcheck on MoeRunnerSubset.*, one small bench point; no later
#                            part runs unless that point ran (a crash there would crash every part)
#   perf:BN:PRECISIONS       xstage-bench megamoe $POINT_ARGS --block-n BN --precision PRECISIONS --model $MOE_MODEL,
#                            then torch grouped_mm attached (scripts/moe_attach_baseline.py): results/megamoe-bnBN.json
#                            (PERF_S: the bench's limit, default 300 s)
#   PRECISION:T[:K_SM[:TARGETS]]  a matrix part: $SHAPES x {balanced, skewed}, expert_wave and interleaved, D 0 (auto:
#                            max(1, ceil(D_knee))), b_n $MATRIX_BLOCK_N (default 128, the committed matrices'; auto:
#                            megamoe's default, 256 where it runs), K_SM 66 and TARGETS host,local unless given:
#                            results/megamoe-PRECISION-T[-K_SM[-TARGETS]].json (":" as "-")
#   dsweep:PRECISION:K_SM    dsv4_flash skewed T 6976 on host, interleaved, D in $D_LIST: results/megamoe-dsweep-...json
# Matrix and dsweep points are predicted from $MOE_MODEL and F per precision from $TFLOPS, taken from an EARLIER run
# (by default the expert-wave Linear-1 mainloop rate of $F_SOURCE's local K_SM 66 points, scaled to 132 SMs), never
# refitted; EXTRA_ARGS (default "--launches-per-graph 1") follow their flags. A part stopped at the deadline keeps its
# journal (journals.tar.gz): carry the journals back as RESUME_DIR and the next call resumes it (same device UUID and
# commit; otherwise run the part again).
# Usage there: OUT=<dir> PARTS="bf16:2048 fp8:2048" [DEADLINE_S=560] bash scripts/device/moe_bench.sh
#              OUT=<dir> PARTS="perf:128:bf16,fp8 perf:256:bf16" POINT_ARGS="--shapes dsv4_flash --T 6976 --ksm 66,132
#                --target host,local" bash scripts/device/moe_bench.sh
# Returns: results.tar.gz, journals.tar.gz, logs.tar.gz, clocks.txt, env.txt.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"; JRN="$OUT/journals"
mkdir -p "$LOGS" "$RES" "$JRN"
PARTS=${PARTS:-"bf16:2048 fp8:2048 bf16:6976 fp8:6976 bf16:16384 fp8:16384 bf16:6976:132:host fp8:6976:132:host"}
SHAPES=${SHAPES:-"dit_moe,qwen3_5,hy3,mimo_v2_5,glm_5_2,dsv4_flash,dsv4_pro"}
D_LIST=${D_LIST:-"1,2,3,4,6,8,12,16,32,64"}
POINT_ARGS=${POINT_ARGS:-"--shapes dsv4_flash --T 6976 --ksm 132 --target local"}
MOE_MODEL=${MOE_MODEL:-results/h200/megamoe/calibration-moe-pattern.json}
F_SOURCE=${F_SOURCE:-results/h200/megamoe/megamoe-dsv4_flash-bn128.json}
RESUME_DIR=${RESUME_DIR:-}
MATRIX_BLOCK_N=${MATRIX_BLOCK_N:-128}  # the matrix and dsweep parts' --block-n: 128 (the committed matrices'), 256 or auto
[[ $MATRIX_BLOCK_N =~ ^(128|256|auto)$ ]] ||
  { echo "moe_bench.sh: MATRIX_BLOCK_N='$MATRIX_BLOCK_N': expected 128, 256 or auto" >&2; exit 2; }
EXTRA_ARGS=${EXTRA_ARGS:-"--launches-per-graph 1"}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
for part in $PARTS; do
  [[ $part == precheck || $part =~ ^perf:[0-9]+:[a-z0-9,]+$ || $part =~ ^dsweep:[a-z0-9]+:[0-9]+$ ||
     $part =~ ^[a-z0-9]+:[0-9]+(:[0-9]+(:[a-z0-9:,]+)?)?$ ]] ||
    { echo "moe_bench.sh: part '$part' is not precheck, perf:BN:PRECISIONS, PRECISION:T[:K_SM[:TARGETS]] or" \
        "dsweep:PRECISION:K_SM"; exit 2; }
done
source "$(dirname "$0")/lib.sh"
parts_checked
start_call results journals logs
TFLOPS=${TFLOPS:-$("$PY" - "$F_SOURCE" <<'EOF'
import json, sys
pts = json.load(open(sys.argv[1]))["points"]
f = {}
for p in pts:
    a = p["axes"]
    if a["target"] == "local" and a["K_SM"] == 66:
        f[a["precision"]] = p["extra"]["variants"]["expert_wave"]["l1_mainloop_tflops"] * 132 / 66
print(",".join(f"{k}={v:.0f}" for k, v in sorted(f.items())))
EOF
)}
{ echo "PARTS=$PARTS"; echo "TFLOPS=$TFLOPS from $F_SOURCE"; echo "MOE_MODEL=$MOE_MODEL"; echo "POINT_ARGS=$POINT_ARGS"
  cat "$LOGS/env.txt"; } >"$OUT/env.txt" 2>&1
echo "predictions: F = $TFLOPS TFLOP/s (from $F_SOURCE), calibration $MOE_MODEL"
targets=(xstage-bench)
[[ " $PARTS " == *" precheck "* ]] && targets+=(xs_gpu_moe_tests)
build_targets "${targets[@]}" || exit 1

precheck_part() {
  run_step gpu_moe 150 build/bin/xs_gpu_moe_tests
  run_sanitizers 90 build/bin/xs_gpu_moe_tests 'MoeRunnerSubset.*' memcheck
  run_step megamoe-check 90 build/bin/xstage-bench megamoe --shapes dsv4_flash --T 2048 --ksm 66 --target host,local \
    --precision bf16,fp8 --variants expert_wave,interleaved --launches-per-graph 1 --model "$MOE_MODEL" \
    --tensor-tflops "$TFLOPS" --out "$RES/megamoe-check.json" --no-progress
  [[ $STEP_RC == 0 ]] || { echo "precheck point failed: no part run"; tail -20 "$LOGS/megamoe-check.txt"; exit 1; }
}
perf_part() {  # perf_part BN PRECISIONS
  local file="$RES/megamoe-bn$1.json"
  clocks "before b_n=$1"
  # shellcheck disable=SC2086  # POINT_ARGS: flags, split at spaces
  run_step "bench-bn$1" "${PERF_S:-300}" build/bin/xstage-bench megamoe $POINT_ARGS --block-n "$1" --precision "$2" \
    --model "$MOE_MODEL" --out "$file" --no-progress
  clocks "after b_n=$1"
  [[ -f $file ]] && run_step "baseline-bn$1" 120 "$PY" scripts/moe_attach_baseline.py "$file"
}
# matrix_part NAME ARGS...: one part into $JRN/NAME.json, moved to $RES when it finished. The first SIGINT finishes the point
# in progress and stops (journal kept, no result file); a hung point is killed 60 s later.
matrix_part() {
  local name=$1; shift
  local left=$((DEADLINE_S - SECONDS)) resume=()
  if ((left < 20)); then echo "part $name: not started (deadline)"; return 0; fi
  if [[ -n $RESUME_DIR && -f $RESUME_DIR/$name.json.journal.jsonl ]]; then
    cp "$RESUME_DIR/$name.json.journal.jsonl" "$JRN/$name.json.journal.jsonl"; resume=(--resume)
  fi
  stamp "part $name (${left}s left)"
  clocks "before $name"
  # shellcheck disable=SC2086  # EXTRA_ARGS: flags, split at spaces
  act timeout -s INT -k 60 "$left" build/bin/xstage-bench megamoe "$@" --block-n "$MATRIX_BLOCK_N" --model "$MOE_MODEL" \
    --tensor-tflops "$TFLOPS" $EXTRA_ARGS "${resume[@]}" --out "$JRN/$name.json" --no-progress >"$LOGS/$name.txt" 2>&1
  echo "part $name rc=$?"
  clocks "after $name"
  grep -vE "^\s*$" "$LOGS/$name.txt" | tail -4
  if [[ -f $JRN/$name.json ]]; then mv "$JRN/$name.json" "$RES/$name.json"; rm -f "$JRN/$name.json.journal.jsonl"; fi
}
for part in $PARTS; do
  IFS=: read -r a b c d <<<"$part"
  case $a in
    precheck) precheck_part ;;
    perf) perf_part "$b" "$c" ;;
    dsweep) matrix_part "megamoe-${part//:/-}" --shapes dsv4_flash --routing skewed --T 6976 --precision "$b" \
              --ksm "${c:-66}" --target host --D "$D_LIST" --variants interleaved ;;
    *) matrix_part "megamoe-${part//:/-}" --shapes "$SHAPES" --routing balanced,skewed --precision "$a" --T "$b" \
         --ksm "${c:-66}" --target "${d:-host,local}" --D 0 --variants expert_wave,interleaved ;;
  esac
done
stamp "done"
