#!/usr/bin/env bash
# Issue 29, a MegaMoE kernel change measured against the commit before it, in one device call: build this tree
# (build/) and BASE (git archive of that commit into a scratch folder, its libxstage_moe.so only, built in the
# background while the GPU tests run); the MegaMoE GPU tests of this tree; then scripts/moe_vs_grouped_mm.py on one configuration (default: dsv4_flash
# skewed, T 6976, K_SM 132, the rank of the H200 sweep results/h200/megamoe/b7f0e7b-sweep) with each library,
# alternating base / new for ROUNDS rounds (each its own process, torch beside the kernel in every one), and a
# summary of each contender's median per library and round with the new/base ratios
# (scripts/moe_ab_summary.py); last, memcheck / racecheck / synccheck on small fp8 and bf16 instances.
# Usage there: BASE=<sha> PRECISIONS="fp8 bf16" ROUNDS=2 bash scripts/device/moe_ab.sh
# Returns: results.tar.gz (ab-*.json, ab-summary.json), logs.tar.gz, clocks.txt, summary.txt.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
SECONDS=0
DEADLINE_S=${DEADLINE_S:-560}
BASE=${BASE:?BASE must name the commit to compare against}
PRECISIONS=${PRECISIONS:-"fp8 bf16"}
ROUNDS=${ROUNDS:-2}
KSM=${KSM:-132}
BLOCK_N=${BLOCK_N:-128}  # bf16 runs at this width (fp8 is built for 128 only)
M_PER_EXPERT=${M_PER_EXPERT:-673,4223,3036,338,854,9006,480,463,629,238,337,243,2344,1829,175,376,230,270,167,386,241,827,1146,208,846,309,224,27828,215,324,396,841}
source "$(dirname "$0")/lib.sh"
start_call
SUMMARY="$OUT/summary.txt"
note() { echo "$*" | tee -a "$SUMMARY"; }
note "BASE=$BASE PRECISIONS=$PRECISIONS ROUNDS=$ROUNDS KSM=$KSM BLOCK_N=$BLOCK_N this=$(cat .xs-git-sha 2>/dev/null)"
clocks start

build_targets xstage_moe xs_gpu_moe_tests || { note "build failed"; exit 1; }
note "build done at +${SECONDS}s"

# The base library, built in the background from the commit's own files.
base_dir=$(mktemp -d)
(
  if dry; then echo "DRY: build $BASE's xstage_moe in $base_dir" >"$LOGS/base-build-rc.txt"; exit 0; fi
  # The commit's files from git where this copy's .git has it; else this tree with BASE_FILES (a folder of the
  # base's versions of the changed files, carried as an ignored path, e.g. .device-carry/ab-base) laid over it.
  if git cat-file -e "$BASE^{commit}" 2>/dev/null; then
    git archive "$BASE" | tar -x -C "$base_dir"
  else
    tar --exclude=./build --exclude=./out --exclude=./.device-carry -cf - . | tar -C "$base_dir" -xf - &&
      cp -r "${BASE_FILES:?no commit $BASE here: BASE_FILES must name its changed files}/." "$base_dir/" &&
      echo "base: this tree with $(find "$BASE_FILES" -type f | wc -l) files of $BASE from $BASE_FILES"
  fi &&
    cd "$base_dir" && "$CMAKE" --preset default -G Ninja >"$LOGS/base-configure.txt" 2>&1 &&
    "$CMAKE" --build build -j12 --target xstage_moe >"$LOGS/base-build.txt" 2>&1
  echo "base build rc=$?" >"$LOGS/base-build-rc.txt"
) &
base_pid=$!

run_step gpu_moe_tests 150 build/bin/xs_gpu_moe_tests
grep -E "^\[  (FAILED|PASSED) |^\[  SKIPPED" "$LOGS/gpu_moe_tests.txt" | head -8 >>"$SUMMARY"

left=$((DEADLINE_S - SECONDS))
timeout $((left > 200 ? 200 : left)) tail --pid="$base_pid" -f /dev/null
cat "$LOGS/base-build-rc.txt" 2>/dev/null | tee -a "$SUMMARY"
base_lib="$base_dir/build/lib/libxstage_moe.so"
dry || [[ -f $base_lib ]] || { note "no base library"; grep -E "error" "$LOGS/base-build.txt" | head -20; exit 1; }

pair() {  # pair LABEL LIB PRECISION ROUND
  local label=$1 lib=$2 prec=$3 round=$4
  run_step "ab-$prec-$label-$round" 90 "$PY" scripts/moe_vs_grouped_mm.py --lib "$lib" --hidden 4096 \
    --intermediate 2048 --precision "$prec" --T 6976 --P 8 --top-k 6 --ksm "$KSM" \
    --block-n "$([[ $prec == fp8 ]] && echo 128 || echo "$BLOCK_N")" \
    --m-per-expert "$M_PER_EXPERT" --experts-per-wave 8 --launches 3 --warmup 2 --rounds 10 \
    --out "$RES/ab-$prec-$label-$round.json"
  note "ab-$prec-$label-$round rc=$STEP_RC"
}
for prec in $PRECISIONS; do
  for round in $(seq 1 "$ROUNDS"); do
    # Alternate which library goes first, so neither always runs on a cooler GPU.
    if ((round % 2)); then pair base "$base_lib" "$prec" "$round"; pair new build/lib/libxstage_moe.so "$prec" "$round"
    else pair new build/lib/libxstage_moe.so "$prec" "$round"; pair base "$base_lib" "$prec" "$round"; fi
  done
done
act "$PY" scripts/moe_ab_summary.py --base "$BASE" --new "$(cut -d' ' -f1 .xs-git-sha 2>/dev/null)" \
  --out "$RES/ab-summary.json" "$RES"/ab-*-*-*.json | tee -a "$SUMMARY"
# Sanitizers last (the A/B above must not lose its time to them): small fp8 and bf16 instances.
filters='Small/MegaMoeKernel.*/0:ThreeShapes/MegaMoeFp8Kernel.*/0'
for tool in memcheck racecheck synccheck; do
  run_step "$tool" 90 "$SANITIZER" --tool "$tool" --error-exitcode 9 build/bin/xs_gpu_moe_tests --gtest_filter="$filters"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$LOGS/$tool.txt" | head -4 | sed "s/^/$tool: /" >>"$SUMMARY"
done
clocks end
cp "$OUT/clocks.txt" "$LOGS/" 2>/dev/null
stamp "done" | tee -a "$SUMMARY"
