#!/usr/bin/env bash
# Issue 12's MegaMoE evaluation runs on the H200, in parts that fit device calls: the 84-configuration matrix
# (7 shapes x {balanced, skewed} per part of precision x T; host and the local control at K_SM 66; host at
# K_SM 132 for T 6976) and the D sweep. Every point gets its prediction before it runs (the calibration in
# $MOE_MODEL and F per precision from $TFLOPS, taken from an EARLIER run: see below; never refitted).
# A part interrupted at the deadline keeps its journal: pass the journals back (RESUME_DIR) and the next
# call resumes it. Returns at most 5 files: results.tar.gz, journals.tar.gz, logs.tar.gz, clocks.txt, env.txt.
#
# Usage there (one call; build included):
#   PARTS="bf16:2048 fp8:2048" bash scripts/device/h200_moe_matrix.sh
#   PARTS="dsweep:bf16:66 dsweep:fp8:66" DEADLINE_S=540 bash scripts/device/h200_moe_matrix.sh
#   RESUME_DIR=out/resume PARTS="bf16:16384" bash scripts/device/h200_moe_matrix.sh   # journals carried back
# (a resume needs the same device UUID and commit as the interrupted run; otherwise re-run the part)
# Part grammar: PRECISION:T[:K_SM[:TARGETS]]  (defaults K_SM 66, TARGETS host,local), e.g. bf16:6976:132:host;
#               dsweep:PRECISION:K_SM         (dsv4_flash skewed T 6976, interleaved only, D in $D_LIST).
# Each part writes megamoe-<part>.json (":" -> "-"). Matrix points use D = 0 (auto: max(1, ceil(D_knee))).
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
RES="$OUT/results"
JRN="$OUT/journals"
mkdir -p "$LOGS" "$RES" "$JRN"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=${PY:-/opt/torch/.venv/bin/python3}
[[ -x "$PY" ]] || PY=python3
PARTS=${PARTS:-"bf16:2048 fp8:2048 bf16:6976 fp8:6976 bf16:16384 fp8:16384 bf16:6976:132:host fp8:6976:132:host"}
SHAPES=${SHAPES:-"dit_moe,qwen3_5,hy3,mimo_v2_5,glm_5_2,dsv4_flash,dsv4_pro"}
D_LIST=${D_LIST:-"1,2,3,4,6,8,12,16,32,64"}
DEADLINE_S=${DEADLINE_S:-560}      # no part runs past this many seconds after the script starts
MOE_MODEL=${MOE_MODEL:-results/h200/megamoe/calibration-moe-pattern.json}
# F per precision for the before-run predictions: the expert-wave Linear-1 mainloop rate of the committed
# dsv4_flash run (local control, K_SM 66), scaled to the 132 SMs the model spreads F over. An earlier run's
# measurement, not this run's: the predictions stay out-of-sample.
F_SOURCE=results/h200/megamoe/megamoe-dsv4_flash-bn128.json
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
RESUME_DIR=${RESUME_DIR:-}
EXTRA_ARGS=${EXTRA_ARGS:-"--launches-per-graph 1"}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { archive_folders results journals logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; echo "TFLOPS=$TFLOPS from $F_SOURCE"; echo "PARTS=$PARTS"; } >"$OUT/env.txt" 2>&1
echo "predictions: F = $TFLOPS TFLOP/s (from $F_SOURCE), calibration $MOE_MODEL"

stamp build
"$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 || { tail -30 "$LOGS/configure.txt"; exit 1; }
targets=(xstage-bench)
[[ -n ${PRECHECK:-} ]] && targets+=(xs_gpu_moe_tests)
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target "${targets[@]}" >"$LOGS/build.txt" 2>&1 || { grep error "$LOGS/build.txt" | head -30; exit 1; }
# PRECHECK=1: the GPU moe tests, memcheck on the variant subset and one small bench point first; the parts run
# only if that point runs (a crash there would crash every part).
if [[ -n ${PRECHECK:-} ]]; then
  SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  stamp "precheck: gpu moe tests"
  timeout -k 5 150 build/bin/xs_gpu_moe_tests >"$LOGS/gpu_moe.txt" 2>&1; echo "gpu_moe rc=$?"
  grep -E "^\[  (FAILED|PASSED) |^\[  SKIPPED" "$LOGS/gpu_moe.txt" | head -12
  timeout -k 5 90 "$SANITIZER" --tool memcheck --error-exitcode 9 build/bin/xs_gpu_moe_tests \
    --gtest_filter='MoeRunnerSubset.*' >"$LOGS/memcheck_moe.txt" 2>&1; echo "memcheck_moe rc=$?"
  grep -E "ERROR SUMMARY|PASSED|FAILED" "$LOGS/memcheck_moe.txt" | head -4
  stamp "precheck: one bench point"
  if ! timeout -k 5 90 build/bin/xstage-bench megamoe --shapes dsv4_flash --T 2048 --ksm 66 --target host,local \
      --precision bf16,fp8 --variants expert_wave,interleaved --launches-per-graph 1 --model "$MOE_MODEL" \
      --tensor-tflops "$TFLOPS" --out "$RES/megamoe-check.json" --no-progress >"$LOGS/megamoe-check.txt" 2>&1; then
    echo "precheck point failed: no part run"; tail -20 "$LOGS/megamoe-check.txt"; exit 1
  fi
  tail -12 "$LOGS/megamoe-check.txt"
fi

for part in $PARTS; do
  name="megamoe-${part//:/-}"
  IFS=: read -r a b c d <<<"$part"
  if [[ $a == dsweep ]]; then
    args=(--shapes dsv4_flash --routing skewed --T 6976 --precision "$b" --ksm "${c:-66}" --target host
          --D "$D_LIST" --variants interleaved)
  else
    args=(--shapes "$SHAPES" --routing balanced,skewed --precision "$a" --T "$b" --ksm "${c:-66}" --target "${d:-host,local}"
          --D 0 --variants expert_wave,interleaved)
  fi
  left=$((DEADLINE_S - SECONDS))
  if ((left < 20)); then echo "part $part: not started (deadline)"; continue; fi
  resume=()
  if [[ -n $RESUME_DIR && -f $RESUME_DIR/$name.json.journal.jsonl ]]; then
    cp "$RESUME_DIR/$name.json.journal.jsonl" "$JRN/$name.json.journal.jsonl"; resume=(--resume)
  fi
  stamp "part $part (${left}s left)"
  clocks "before $part"
  # The first SIGINT finishes the point in progress and stops (journal kept, no result file); a hung point
  # is killed 60 s later.
  # shellcheck disable=SC2086
  timeout -s INT -k 60 "$left" build/bin/xstage-bench megamoe "${args[@]}" --block-n 128 --model "$MOE_MODEL" \
    --tensor-tflops "$TFLOPS" $EXTRA_ARGS "${resume[@]}" --out "$JRN/$name.json" --no-progress >"$LOGS/$name.txt" 2>&1
  rc=$?
  clocks "after $part"
  echo "part $part rc=$rc"; grep -vE "^\s*$" "$LOGS/$name.txt" | tail -4
  if [[ -f $JRN/$name.json ]]; then mv "$JRN/$name.json" "$RES/$name.json"; rm -f "$JRN/$name.json.journal.jsonl"; fi
done
stamp done
ls -la "$RES" "$JRN"
