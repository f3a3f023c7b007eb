#!/usr/bin/env bash
# The FlashAttention-A2A device calls (issues 4 and 13) in one script: PARTS, run in this order whatever order they
# are given in, every step cut to what is left of DEADLINE_S. The default, PARTS="paired calibrate host local", is
# the protocol of the canonical results/h200/fa_a2a/*-bars/ calls.
#   tests       xs_gpu_attention_tests --gtest_filter=$FA_TESTS (default '*'), one process: logs/fa_tests.txt
#   tests_each  each test of $FA_EACH (default 'Shapes/*:Schedules/*') in its own process, EACH_S (30) seconds each
#               (a trapped barrier wait fails one case, not the rest): logs/fa_<test>.txt
#   sanitize    compute-sanitizer $SAN_TOOLS (default "memcheck racecheck") on $SAN_FILTER (default
#               'FlashAttentionKvCluster.*'): logs/<tool>.txt
#   sass        cuobjdump of flash_attention_kernel.cu.o: per kernel HGMMA, LDL/STL, barrier and R2UR counts and the
#               wgmma Q-loop, plus ptxas registers and spills of the instantiations this call compiled
#               (scripts/device/sass_loop_ops.py): logs/sass_report.txt, logs/sass.txt.gz
#   paired      FA-only against cuDNN SDPA in one process (scripts/fa_vs_cudnn.py), each PAIRED_RUNS entry (default
#               "fa-vs-cudnn-d128"): results/NAME.json, logs/paired_<NAME less fa-vs-cudnn->.txt; flags --M $M_LIST
#               --blocks $BLOCKS --kv-clusters $KV_CLUSTERS --heads-major-kv $HM_KV, then the entry's (later ones win)
#   calibrate   the host calibration of CAL_CONFIG (configs/calibrate/host-small-k.json):
#               results/calibration-host-small-k.json; FA_CAL_RUNS="A B": one calibration per name (-A.json, -B.json)
#   host        xstage-bench fa_a2a --target host, each HOST_RUNS entry (default "fa-a2a-host"), predicted from FA_MODEL
#               (default: this call's calibration, the first of FA_CAL_RUNS) unless the entry names its --model
#   local       xstage-bench fa_a2a --target local, LOCAL_REPS (10) rounds, each LOCAL_RUNS entry (default
#               "fa-a2a-local")
#   cudnn       pinned cuDNN SDPA written into each local run's file (scripts/fa_attach_baseline.py, CLOCK_PROBES: its
#               SM clock probes)
#   point       xstage-fa-point --M $M_POINT (8192,16384) --heads 8 --P 8 --target local,host: logs/fa_point.txt
#   sdpa        torch SDPA (cuDNN, flash) alone on M_LIST (scripts/fa_sdpa_baseline.py): logs/sdpa.txt
#   plot        scripts/plot_fa_a2a.py of every results/fa-a2a*.json: results/<same name>.png
# A RUNS entry is "NAME[:FLAGS]", entries separated by ';', e.g. LOCAL_RUNS="fa-a2a-local-kv1:--fa-kv-cluster 1;
# fa-a2a-local-kv2:--fa-kv-cluster 2". Host and local entries write results/NAME.json, logged as logs/<NAME less
# fa-a2a-, '-' as '_'>.txt (fa-a2a-host -> host.txt); their own --M, --reps or --model replace the defaults.
# Knobs (env): M_LIST (8192,16384,32768,49152,65536), BLOCKS (5), KV_CLUSTERS (1,2), HM_KV (''), PAIRED_S (210),
#   FA_CAL_S (45), HOST_S (100), LOCAL_S (90), DEADLINE_S (560).
# Usage there: OUT=<dir> [PARTS=...] [knobs] bash scripts/device/fa.sh   (device tool: timeout_s 600, carry .xs-git-sha)
# Returns: results.tar.gz, logs.tar.gz (each step's log, build, env.txt, smi.csv.gz), clocks.txt.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
PARTS=${PARTS:-"paired calibrate host local"}
M_LIST=${M_LIST:-8192,16384,32768,49152,65536}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
ORDER="tests tests_each sanitize sass paired calibrate host local cudnn point sdpa plot"
source "$(dirname "$0")/lib.sh"
check_parts fa.sh "$ORDER"
start_call
T=build/bin/xs_gpu_attention_tests

# each_run LIST FUNCTION: FUNCTION NAME FLAGS... for every "NAME[:FLAGS]" entry of the ';'-separated LIST.
each_run() {
  local entries entry flags
  IFS=';' read -r -a entries <<<"$1"
  for entry in "${entries[@]}"; do
    entry=${entry# }
    [[ -n $entry ]] || continue
    flags=""
    [[ $entry == *:* ]] && flags=${entry#*:}
    read -r -a flags <<<"$flags"
    "$2" "${entry%%:*}" "${flags[@]}"
  done
}
step_of() { local name=${1#fa-a2a-}; echo "${name//-/_}"; }

part_tests() { run_step fa_tests 150 "$T" --gtest_filter="${FA_TESTS:-*}"; }
part_tests_each() {
  if dry; then echo "DRY: each test of ${FA_EACH:-Shapes/*:Schedules/*} in its own process"; return 0; fi
  local test
  for test in $("$T" --gtest_list_tests --gtest_filter="${FA_EACH:-Shapes/*:Schedules/*}" |
                awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}'); do
    run_step "fa_${test//\//_}" "${EACH_S:-30}" "$T" --gtest_filter="$test"
  done
}
part_sanitize() {
  # shellcheck disable=SC2086  # SAN_TOOLS: a list
  run_sanitizers 75 "$T" "${SAN_FILTER:-FlashAttentionKvCluster.*}" ${SAN_TOOLS:-memcheck racecheck}
}
part_sass() {
  local obj cuobjdump
  obj=$(find build -name 'flash_attention_kernel.cu.o' 2>/dev/null | head -1)
  cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  act "$cuobjdump" -sass "${obj:-build/.../flash_attention_kernel.cu.o}" >"$LOGS/sass.txt" 2>&1
  act "$PY" scripts/device/sass_loop_ops.py "$LOGS/sass.txt" --ptxas "$LOGS/build.txt" | tee "$LOGS/sass_report.txt"
  gzip -f "$LOGS/sass.txt"
}
paired_run() {  # paired_run NAME FLAGS...
  local name=$1; shift
  run_step "paired_$(step_of "${name#fa-vs-cudnn-}")" "${PAIRED_S:-210}" "$PY" scripts/fa_vs_cudnn.py \
    --lib build/lib/libxstage_fa.so --out "$RES/$name.json" --M "$M_LIST" --blocks "${BLOCKS:-5}" \
    --kv-clusters "${KV_CLUSTERS:-1,2}" --heads-major-kv "${HM_KV:-}" "$@"
}
part_paired() {
  clocks "before paired"
  each_run "${PAIRED_RUNS:-fa-vs-cudnn-d128}" paired_run
  clocks "after paired"
}
part_calibrate() {
  local runs name
  read -r -a runs <<<"${FA_CAL_RUNS:-}"
  ((${#runs[@]})) || runs=("")
  for name in "${runs[@]}"; do
    run_step "calibrate${name:+_$name}" "${FA_CAL_S:-45}" build/bin/xstage-calibrate --backend gpu --target host \
      --config "${CAL_CONFIG:-configs/calibrate/host-small-k.json}" \
      --out "$RES/calibration-host-small-k${name:+-$name}.json" --no-progress
  done
}
fa_a2a_run() {  # fa_a2a_run TARGET LIMIT NAME FLAGS...: one xstage-bench fa_a2a run into $RES/NAME.json
  local target=$1 limit=$2 name=$3 args=(); shift 3
  has_flag --M "$@" || args+=(--M "$M_LIST")
  if [[ $target == local ]]; then
    has_flag --reps "$@" || args+=(--reps "${LOCAL_REPS:-10}")
  elif ! has_flag --model "$@"; then
    local first model
    read -r first _ <<<"${FA_CAL_RUNS:-}"
    model=${FA_MODEL:-$RES/calibration-host-small-k${first:+-$first}.json}
    [[ -f $model ]] || { echo "$(step_of "$name"): not run (no model $model)"; return 0; }
    args+=(--model "$model")
  fi
  run_step "$(step_of "$name")" "$limit" build/bin/xstage-bench fa_a2a "${args[@]}" --heads 8 --target "$target" \
    "$@" --out "$RES/$name.json" --no-progress
}
host_run() { fa_a2a_run host "${HOST_S:-100}" "$@"; }
local_run() { fa_a2a_run local "${LOCAL_S:-90}" "$@"; }
part_host() { each_run "${HOST_RUNS:-fa-a2a-host}" host_run; clocks "after host"; }
part_local() { each_run "${LOCAL_RUNS:-fa-a2a-local}" local_run; clocks "after local"; }
cudnn_run() {
  [[ -f "$RES/$1.json" ]] || return 0
  run_step "cudnn_$(step_of "$1")" 60 "$PY" scripts/fa_attach_baseline.py "$RES/$1.json" \
    ${CLOCK_PROBES:+--clock-probes "$CLOCK_PROBES"}
}
part_cudnn() { each_run "${LOCAL_RUNS:-fa-a2a-local}" cudnn_run; }
part_point() {
  run_step fa_point 300 build/bin/xstage-fa-point --M "${M_POINT:-8192,16384}" --heads 8 --P 8 --target local,host
}
part_sdpa() { run_step sdpa 180 "$PY" scripts/fa_sdpa_baseline.py --M "$M_LIST" --heads 8; }
part_plot() {
  local file
  for file in "$RES"/fa-a2a*.json; do
    [[ -f $file ]] || continue
    run_step "plot_$(step_of "$(basename "$file" .json)")" 60 "$PY" scripts/plot_fa_a2a.py "$file" \
      --out "${file%.json}.png"
  done
}

targets=()
{ want tests || want tests_each || want sanitize; } && targets+=(xs_gpu_attention_tests)
want sass && targets+=(xs_attention_kernels)
want paired && targets+=(xstage_fa)
want calibrate && targets+=(xstage-calibrate)
{ want host || want local; } && targets+=(xstage-bench)
want point && targets+=(xstage-fa-point)
if ((${#targets[@]})); then build_targets "${targets[@]}" || exit 1; fi
clocks start
for part in $ORDER; do
  want "$part" && "part_$part"
done
clocks end
stamp "done"
