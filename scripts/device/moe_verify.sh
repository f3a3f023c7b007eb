#!/usr/bin/env bash
# Issue 29 items 1-2 (and issue 27's expert-wave widths and can-lose configurations) in one device call on one
# H100/H200 (sm_90a), from a fresh copy: build; the MegaMoE GPU tests (per-variant poison, the planted ordering
# bug, the fp8 kernel against the float64 reference on three shapes, the whole-phase launches); racecheck and
# synccheck on several small instances; the expert-wave width sweep with every variant (serial_then_copy,
# unfused_overlapped, phase_l1/l2) on dsv4_flash; the can-lose matrix (configs/moe/can-lose.json); and torch
# grouped_mm / _scaled_grouped_mm beside the kernel in one process on the sweep's local points
# (scripts/moe_vs_grouped_mm.py). Every step is time-boxed to finish by DEADLINE_S.
#
# Usage there:   bash scripts/device/moe_verify.sh
# Knobs (env):   PARTS="tests sweep torch sanitize canlose" (any subset; they run in this order)
#                DEADLINE_S=470   SWEEP_T=6976   SWEEP_PRECISIONS=bf16,fp8   SWEEP_KSM=66,132   REPS=8
#                CANLOSE_RUNS="few-experts few-experts-p4 large-h-small-T local-large-D" (names in the config)
#                SANITIZE_TOOLS="racecheck synccheck" (the sanitize part's compute-sanitizer tools; memcheck too)
#                POINT_ARGS="--hidden 4096 --intermediate 2048 --m-per-expert ..." (part profile: one configuration,
#                moe_vs_grouped_mm.py's flags) VS_BLOCK_NS="128 256" (part profile: one paired run per b_n)
#                NCU_SECTIONS="SpeedOfLight ..." (part profile; empty: the pairing only, no Nsight Compute, and then
#                POINT_ARGS may name several configurations, e.g. "--from-result R.json --targets local")
# Part profile (issue 29, where the mainloop loses): the configuration of POINT_ARGS paired with torch at each b_n of
# VS_BLOCK_NS (results/vs-bnN.json), then Nsight Compute (--clock-control none) on its two kernel GEMM phases and
# torch's two grouped GEMMs launched once each (scripts/moe_profile_point.py) at each b_n: results/ncu-bnN.txt (the
# details page) and results/ncu-bnN.csv (raw metrics); the .ncu-rep stays in logs/.
# Returns at most 6 files: results.tar.gz (megamoe-*.json, moe-vs-grouped-mm.json), logs.tar.gz, clocks.txt,
# env.txt, summary.txt.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
SECONDS=0
DEADLINE_S=${DEADLINE_S:-470}
PARTS=${PARTS:-"tests sweep torch sanitize canlose"}
SWEEP_T=${SWEEP_T:-6976}
SWEEP_PRECISIONS=${SWEEP_PRECISIONS:-bf16,fp8}
SWEEP_KSM=${SWEEP_KSM:-66,132}
REPS=${REPS:-8}
CANLOSE_RUNS=${CANLOSE_RUNS:-"few-experts few-experts-p4 large-h-small-T local-large-D"}
SANITIZE_TOOLS=${SANITIZE_TOOLS:-"racecheck synccheck"}
POINT_ARGS=${POINT_ARGS:-}
VS_BLOCK_NS=${VS_BLOCK_NS-"128 256"}
NCU_SECTIONS=${NCU_SECTIONS-"SpeedOfLight ComputeWorkloadAnalysis MemoryWorkloadAnalysis WarpStateStats SchedulerStats Occupancy LaunchStats"}
source "$(dirname "$0")/lib.sh"
check_parts moe_verify.sh "tests sweep torch sanitize canlose profile"
if want profile && [[ -z $POINT_ARGS ]]; then echo "moe_verify.sh: part profile needs POINT_ARGS (moe_vs_grouped_mm.py flags of one configuration)" >&2; exit 2; fi
if want profile; then
  [[ -n $VS_BLOCK_NS ]] || { echo "moe_verify.sh: VS_BLOCK_NS is empty: name 128 and/or 256" >&2; exit 2; }
  for bn in $VS_BLOCK_NS; do
    [[ $bn == 128 || $bn == 256 ]] || { echo "moe_verify.sh: VS_BLOCK_NS '$VS_BLOCK_NS': each width is 128 or 256" >&2; exit 2; }
  done
fi
start_call
SUMMARY="$OUT/summary.txt"
note() { echo "$*" | tee -a "$SUMMARY"; }
{ echo "PARTS=$PARTS DEADLINE_S=$DEADLINE_S SWEEP_T=$SWEEP_T SWEEP_PRECISIONS=$SWEEP_PRECISIONS SWEEP_KSM=$SWEEP_KSM"
  echo "REPS=$REPS CANLOSE_RUNS=$CANLOSE_RUNS"; } >"$OUT/env.txt"
cat "$LOGS/env.txt" >>"$OUT/env.txt" 2>/dev/null
clocks start

build_targets xstage-bench xs_gpu_moe_tests xstage_moe || { note "build failed"; exit 1; }
note "build done at +${SECONDS}s"

if want tests; then
  run_step gpu_moe_tests 120 build/bin/xs_gpu_moe_tests
  grep -E "^\[  (FAILED|PASSED) |^\[  SKIPPED|fp8 kernel vs float64" "$LOGS/gpu_moe_tests.txt" | head -20 >>"$SUMMARY"
fi

bench() {  # bench NAME LIMIT ARGS...: one xstage-bench megamoe run into $RES/megamoe-NAME.json
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE_S - SECONDS))
  ((left > limit)) && left=$limit
  if ((left < 30)); then note "$name: not run (deadline)"; return 0; fi
  clocks "before $name"
  stamp "bench $name (${left}s left)"
  act timeout -s INT -k 30 "$left" build/bin/xstage-bench megamoe "$@" --reps "$REPS" --out "$RES/megamoe-$name.json" \
    --no-progress >"$LOGS/bench-$name.txt" 2>&1
  local rc=$?
  clocks "after $name"
  # Stopped at its limit: the result file is not written; keep the finished points' journal with the logs.
  [[ -f "$RES/megamoe-$name.json" ]] || mv "$RES/megamoe-$name.json.journal.jsonl" "$LOGS/" 2>/dev/null
  note "bench $name rc=$rc"; grep -vE "^\s*$" "$LOGS/bench-$name.txt" | tail -12 | tee -a "$SUMMARY"
}

if want sweep; then
  # Every variant (all families), expert-wave widths 1,2,4,8, host and local, at the issue's configuration.
  bench sweep 170 --shapes dsv4_flash --routing skewed --T "$SWEEP_T" --precision "$SWEEP_PRECISIONS" --ksm "$SWEEP_KSM" \
    --target local,host --experts-per-wave 1,2,4,8 --variants all
fi

if want torch; then
  left=$((DEADLINE_S - SECONDS))
  if ((left < 40)); then
    note "torch: not run (deadline)"
  elif [[ ! -f "$RES/megamoe-sweep.json" ]]; then
    note "torch: no sweep result to pair"
  else
    run_step moe_vs_grouped_mm 120 "$PY" scripts/moe_vs_grouped_mm.py --lib build/lib/libxstage_moe.so \
      --from-result "$RES/megamoe-sweep.json" --targets local --out "$RES/moe-vs-grouped-mm.json" \
      --experts-per-wave 1,2,4,8 --launches 3 --warmup 2 --rounds 10
    grep -E "^==|whole_kernel|phase|failed|skipped" "$LOGS/moe_vs_grouped_mm.txt" | head -20 >>"$SUMMARY"
  fi
fi
if want sanitize; then
  # Several instances: b_n 128 and 256 (every schedule, both epilogues, local and host destinations), the
  # whole-phase launches, and the fp8 kernel on the smallest of its three shapes.
  filters='Small/MegaMoeKernel.*/0:Small/MegaMoeKernel.*/3:MegaMoeKernelPhases.*:ThreeShapes/MegaMoeFp8Kernel.*/0'
  for tool in $SANITIZE_TOOLS; do
    run_step "$tool" 100 "$SANITIZER" --tool "$tool" --error-exitcode 9 build/bin/xs_gpu_moe_tests \
      --gtest_filter="$filters"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$LOGS/$tool.txt" | head -6 | sed "s/^/$tool: /" >>"$SUMMARY"
  done
fi

if want profile; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  read -r -a point <<<"$POINT_ARGS"
  for bn in $VS_BLOCK_NS; do
    run_step "vs-bn$bn" 150 "$PY" scripts/moe_vs_grouped_mm.py --lib build/lib/libxstage_moe.so "${point[@]}" \
      --block-n "$bn" --out "$RES/vs-bn$bn.json" --experts-per-wave 1,8 --launches 3 --warmup 2 --rounds 10
    grep -E "^==|failed|skipped" "$LOGS/vs-bn$bn.txt" | head -5 >>"$SUMMARY"
  done
  if [[ -z $NCU_SECTIONS ]]; then
    note "profile: NCU_SECTIONS empty: no Nsight Compute run"
  elif [[ -z $NCU ]]; then
    note "profile: no ncu on this machine"
  else
    sections=()
    for s in $NCU_SECTIONS; do sections+=(--section "$s"); done
    for bn in $VS_BLOCK_NS; do
      run_step "ncu-bn$bn" 150 "$NCU" --clock-control none --profile-from-start off "${sections[@]}" -f \
        -o "$LOGS/ncu-bn$bn" "$PY" scripts/moe_profile_point.py --lib build/lib/libxstage_moe.so "${point[@]}" \
        --block-n "$bn" --out "$RES/profiled-bn$bn.json"
      if [[ -f "$LOGS/ncu-bn$bn.ncu-rep" ]]; then
        act "$NCU" -i "$LOGS/ncu-bn$bn.ncu-rep" --page details >"$RES/ncu-bn$bn.txt" 2>&1
        act "$NCU" -i "$LOGS/ncu-bn$bn.ncu-rep" --page raw --csv >"$RES/ncu-bn$bn.csv" 2>&1
        gzip -f "$RES/ncu-bn$bn.csv"
      fi
      note "ncu b_n $bn rc=$STEP_RC"
    done
  fi
fi

if want canlose; then
  for run in $CANLOSE_RUNS; do
    mapfile -t args < <("$PY" - "$run" <<'PYEOF'
import json, sys
cfg = json.load(open("configs/moe/can-lose.json"))
run = next((r for r in cfg["runs"] if r["name"] == sys.argv[1]), None)
if run is None:
    sys.exit(f"no run {sys.argv[1]} in configs/moe/can-lose.json")
flags = {"--variants": cfg["variants"], "--experts-per-wave": cfg["experts_per_wave"]}
for k, v in run.items():
    if k not in ("name", "why"):
        flags["--" + k] = str(v)
for k, v in flags.items():
    print(k)
    print(v)
PYEOF
)
    if ((${#args[@]} == 0)); then note "canlose $run: bad config"; continue; fi
    bench "canlose-$run" 90 "${args[@]}" --routing skewed
  done
fi

clocks end
cp "$OUT/clocks.txt" "$LOGS/" 2>/dev/null
stamp "done" | tee -a "$SUMMARY"
