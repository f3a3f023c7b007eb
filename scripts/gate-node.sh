#!/usr/bin/env bash
# The hardware-runner gate in one command (docs/gate.md, "Gating a GPU runner"): checks the node (driver,
# clocks, throttle reasons), runs the steps of configs/gate/node.tsv (a short calibration and a smoke sweep of
# every suite), compares each with the committed baseline of this GPU model (results/<model>/gate/node/) under
# the step's gate config, and writes junit.xml, summary.md and the exit code. --backend sim runs the same on
# the simulator (CI, no GPU). --record-baseline DIR runs the steps and writes a new baseline instead.
#
# Exit: 0 pass; 1 regression (a metric WORSE or MISSING) or an unfit node (throttling, another max SM clock);
# 2 bad usage or input (no baseline for this GPU model, a step's tool refused its input); 3 a tool failed
# (CUDA, NCCL); 77 no GPU; 130 / 143 a step interrupted by SIGINT / SIGTERM (the gate stops there; the step's
# journal keeps its measured points). A step's tool failure decides the exit code over a regression.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  cat <<'EOF'
usage: scripts/gate-node.sh [--backend gpu|sim] [--out DIR] [--baseline DIR] [--bin DIR] [--steps FILE]
                            [--only STEP[,STEP...]] [--tool-args "FLAGS"] [--record-baseline DIR]
  --backend gpu|sim      measure on GPU 0 (default) or on the discrete-event simulator
  --out DIR              where the run's files go (default out/gate-node); refused if it holds files
  --baseline DIR         the baseline to compare with (default results/<gpu model>/gate/node; sim: results/sim/...)
  --bin DIR              the built tools (default build/bin)
  --steps FILE           the steps (default configs/gate/node.tsv)
  --only STEPS           run these steps only (comma list of the file's step names)
  --tool-args "FLAGS"    extra flags for every step's tool (e.g. the simulator's "--sim-R 50GB/s")
  --record-baseline DIR  run the steps and write DIR as a new baseline (DIR must not hold files); no comparison
Writes DIR/junit.xml, DIR/summary.md (also appended to $GITHUB_STEP_SUMMARY when set), each step's result,
log and gate table. Exit: 0 pass, 1 regression or unfit node, 2 bad input or no baseline, 3 tool failure,
77 no GPU.
EOF
}

backend=gpu out=out/gate-node baseline="" bin_arg="" steps_arg="" only="" tool_args=""
record=""
die() { echo "gate-node: error: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --backend|--out|--baseline|--bin|--steps|--only|--tool-args|--record-baseline)
      [[ $# -ge 2 ]] || { usage >&2; die "$1 needs a value"; } ;;
  esac
  case $1 in
    --backend) backend=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --baseline) baseline=${2:-}; shift 2 ;;
    --bin) bin_arg=${2:-}; shift 2 ;;
    --steps) steps_arg=${2:-}; shift 2 ;;
    --only) only=${2:-}; shift 2 ;;
    --tool-args) tool_args=${2:-}; shift 2 ;;
    --record-baseline) record=${2:-}; [[ -n "$record" ]] || die "--record-baseline needs a folder"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
# Paths are the caller's (relative to where it runs); defaults are the repository's. Then work from the repository.
abs() { [[ -z "$1" || $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
[[ -n "$out" ]] || die "--out: needs a folder"
out=$(abs "$out") baseline=$(abs "$baseline") record=$(abs "$record")
bin=$(abs "${bin_arg:-$repo/build/bin}") steps_file=$(abs "${steps_arg:-$repo/configs/gate/node.tsv}")
cd "$repo" || exit 2
[[ $backend == gpu || $backend == sim ]] || die "--backend '$backend': accepted gpu or sim"
[[ -f "$steps_file" ]] || die "--steps: $steps_file is not a file"
for tool in xstage-calibrate xstage-bench xstage-gate; do
  [[ -x "$bin/$tool" ]] || die "$bin/$tool not found: build first (./scripts/build.sh) or pass --bin"
done
# An output folder is absent or an empty real folder, and can be made: each refusal says which of these it is not.
check_new_dir() {  # check_new_dir FLAG DIR
  local up
  if [[ -L "$2" ]]; then
    die "$1 $2 is a symbolic link: name an empty or new folder (no output goes through a link)"
  elif [[ -e "$2" && ! -d "$2" ]]; then
    die "$1 $2 is a file, not a folder: name an empty or new folder"
  elif [[ -d "$2" && -n "$(ls -A "$2")" ]]; then
    die "$1 $2 holds files: name an empty or new folder (no output overwrites another)"
  fi
  up=$(dirname "$2")
  while [[ ! -e "$up" && ! -L "$up" ]]; do up=$(dirname "$up"); done
  [[ -d "$up" ]] || die "$1 $2 cannot be created: $up is a file, not a folder"
}
check_new_dir --out "$out"
[[ -z "$record" ]] || check_new_dir --record-baseline "$record"

# The steps: name, sim, gate config, command.
declare -a step_names step_sim step_config step_command
while IFS=$'\t' read -r name sim config command; do
  [[ -z "$name" || $name == \#* ]] && continue
  [[ -n "$command" && ($sim == yes || $sim == no) && -f "$config" ]] ||
    die "$steps_file: line for '$name': expected <step> <yes|no> <gate config file> <command>, tab-separated"
  step_names+=("$name"); step_sim+=("$sim"); step_config+=("$config"); step_command+=("$command")
done <"$steps_file"
if [[ -n "$only" ]]; then
  for want in ${only//,/ }; do
    [[ " ${step_names[*]} " == *" $want "* ]] || die "--only: no step '$want' in $steps_file; accepted: ${step_names[*]}"
  done
fi

cases=()       # JUnit <testcase> elements of the node checks and the steps
rows=()        # summary table rows
worst=0        # exit code so far
notes=()
record_code() {  # a tool's failure (2, 3, 77) decides over a regression (1)
  local rc=$1
  if ((rc != 0 && rc != 1)); then ((worst == 0 || worst == 1)) && worst=$rc; elif ((rc == 1 && worst == 0)); then worst=1; fi
}
xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' <<<"$1"; }
md() { tr '|\n' '/ ' <<<"$1"; }  # one Markdown table cell
add_case() {  # add_case CLASS NAME pass|fail|error|skip DETAIL
  local body
  case $3 in
    pass) body="<system-out>$(xml "$4")</system-out>" ;;
    fail) body="<failure message=\"$(xml "$4")\">$(xml "$4")</failure>" ;;
    error) body="<error message=\"$(xml "$4")\">$(xml "$4")</error>" ;;
    skip) body="<skipped message=\"$(xml "$4")\"/>" ;;
  esac
  cases+=("    <testcase classname=\"gate-node.$1\" name=\"$(xml "$2")\" time=\"0\">$body</testcase>")
}

# 1. The node: model, driver, clocks, throttle reasons (GPU); the simulator has none.
smi_query() { nvidia-smi -i 0 --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null | head -1 | sed 's/ *$//'; }
throttle_reasons() {  # the active clock-event (throttle) reasons as a hex mask; newer drivers renamed the field
  local mask
  mask=$(smi_query clocks_event_reasons.active) && [[ $mask == 0x* ]] || mask=$(smi_query clocks_throttle_reasons.active)
  echo "$mask"
}
# Reasons that make a measurement untrustworthy: SW power cap 0x4, HW slowdown 0x8, sync boost 0x10,
# SW thermal 0x20, HW thermal 0x40, HW power brake 0x80 (nvml clocksEventReasons). Idle 0x1 and
# application-clock setting 0x2 are not.
bad_throttle() { [[ $1 == 0x* ]] && (( ($1 & 0xFC) != 0 )); }
if [[ $backend == sim ]]; then
  model=sim; gpu_name="simulator"; driver="-"; max_sm_mhz="-"
  add_case node "GPU, driver, clocks, throttle reasons" skip "simulator: no GPU to check"
else
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! gpu_name=$(smi_query name) || [[ -z "$gpu_name" ]]; then
    echo "gate-node: no GPU: nvidia-smi is missing or lists no GPU (the simulator: --backend sim)" >&2
    exit 77
  fi
  driver=$(smi_query driver_version)
  max_sm_mhz=$(smi_query clocks.max.sm)
  # "NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100-80gb-hbm3: the results/ folder of the model.
  model=$(tr '[:upper:]' '[:lower:]' <<<"$gpu_name" | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
  add_case node "GPU model" pass "$gpu_name (results/$model), driver $driver, max SM clock $max_sm_mhz MHz"
  mask=$(throttle_reasons)
  if bad_throttle "$mask"; then
    add_case node "throttle reasons before the run" fail "active clock-event reasons $mask (nvidia-smi -q -d PERFORMANCE)"
    rows+=("| node: throttle reasons before | **FAIL** | active $mask |"); record_code 1
  else
    add_case node "throttle reasons before the run" pass "${mask:-unknown}"
  fi
fi
[[ -n "$baseline" ]] || baseline=$repo/results/$model/gate/node
same_dir() { [[ -n "$1" && -n "$2" ]] && [[ "$(realpath -m "$1")" == "$(realpath -m "$2")" ]]; }
if same_dir "$out" "$baseline" || same_dir "$out" "$record"; then
  die "--out $out is also the baseline or the recorded baseline: name another folder"
fi

if [[ -z "$record" && ! -f "$baseline/node.txt" ]]; then
  echo "gate-node: error: no baseline for this GPU model ($gpu_name) in ${baseline#$repo/}: record one on a quiet node" >&2
  echo "gate-node:   with scripts/gate-node.sh --record-baseline <new folder>, check it, and commit it as" >&2
  echo "gate-node:   results/$model/gate/node/ (docs/ci-gpu-runner.md, 'Recording a baseline'); or pass --baseline" >&2
  exit 2
fi
# A baseline of another GPU model (a --baseline given by hand) would judge the model difference as regressions.
if [[ -z "$record" ]]; then
  base_gpu=$(sed -n 's/^gpu: //p' "$baseline/node.txt" | head -1)
  if [[ "$base_gpu" != "$gpu_name" ]]; then
    echo "gate-node: error: the baseline ${baseline#$repo/} was recorded on ${base_gpu:-an unnamed GPU}, this node is $gpu_name:" >&2
    echo "gate-node:   compare with a baseline of this GPU model (results/$model/gate/node/, or record one)" >&2
    exit 2
  fi
fi
mkdir -p "$out/logs" "$out/gate" || die "--out $out: cannot create it"
{
  echo "gpu: $gpu_name"; echo "model: $model"; echo "driver: $driver"; echo "max_sm_clock_mhz: $max_sm_mhz"
  # the commit the tools were built from (their own stamp), not this folder's .git: on a GPU machine the copy's
  # .git may be older than its files (a baseline of 2026-12-06 said 93f8ee7+dirty for tools of e9158ce)
  echo "backend: $backend"; echo "git: $("$bin/xstage-gate" --version 2>/dev/null |
    sed -n 's/.*(git \([0-9a-f]\{7\}\)[0-9a-f]*\(, dirty\)\{0,1\}).*/\1\2/p' | sed 's/, dirty/+dirty/' | grep . || echo unknown)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "tool_args: $tool_args"
} >"$out/node.txt"
node_field() { sed -n "s/^$1: //p" "$2" 2>/dev/null | head -1; }

if [[ -z "$record" ]]; then
  if [[ $backend == gpu ]]; then
    base_driver=$(node_field driver "$baseline/node.txt")
    base_clock=$(node_field max_sm_clock_mhz "$baseline/node.txt")
    if [[ "$base_clock" != "$max_sm_mhz" ]]; then
      add_case node "max SM clock" fail "$max_sm_mhz MHz, the baseline's node $base_clock MHz: another clock setting or SKU"
      rows+=("| node: max SM clock | **FAIL** | $max_sm_mhz MHz, baseline $base_clock MHz |"); record_code 1
    else
      add_case node "max SM clock" pass "$max_sm_mhz MHz, as the baseline's node"
    fi
    if [[ "$base_driver" != "$driver" ]]; then
      notes+=("driver $driver, the baseline was recorded with $base_driver: a change the gate may attribute to the code")
    fi
  fi
fi

# 2. Every suite of xstage-bench must have a step.
while read -r suite _; do
  [[ -z "$suite" ]] && continue
  if [[ " ${step_names[*]} " != *" $suite "* ]]; then
    add_case steps "$suite has a step" error "xstage-bench suite $suite has no line in $steps_file"
    rows+=("| $suite | **ERROR** | no step in $steps_file: a suite must say how it is smoke-tested |"); record_code 2
  fi
done < <("$bin/xstage-bench" --list)

# 3. The steps: measure, then compare.
for i in "${!step_names[@]}"; do
  name=${step_names[$i]} config=${step_config[$i]}
  if [[ -n "$only" && ",$only," != *",$name,"* ]]; then continue; fi
  if [[ $backend == sim && ${step_sim[$i]} == no ]]; then
    add_case steps "$name" skip "needs a GPU: the simulator runs the calibration and the remote_store suites"
    rows+=("| $name | skipped | needs a GPU |")
    continue
  fi
  read -r -a command <<<"${step_command[$i]}"
  read -r -a extra <<<"$tool_args"
  result="$out/$name.json"
  "$bin/${command[0]}" "${command[@]:1}" --backend "$backend" --no-progress --out "$result" "${extra[@]}" \
    >"$out/logs/$name.txt" 2>&1
  rc=$?
  # A finished step's journal is spent. A failed or interrupted step keeps its measured points (the tool's
  # message says how to --resume); an interrupt (130 SIGINT, 143 SIGTERM) also stops the gate: a Ctrl-C means stop.
  ((rc == 0)) && rm -f "$result.journal.jsonl"
  if ((rc != 0)); then
    why=$(grep -m1 "error" "$out/logs/$name.txt" || tail -n 1 "$out/logs/$name.txt")
    [[ -f "$result.journal.jsonl" ]] && why+=" (its measured points are kept in $result.journal.jsonl)"
    add_case steps "$name" error "exit $rc: $why"
    rows+=("| $name | **ERROR** (exit $rc) | $(md "$why") |"); record_code "$rc"
    if ((rc == 130 || rc == 143)); then
      notes+=("interrupted during $name (exit $rc): the later steps were not run")
      break
    fi
    continue
  fi
  add_case steps "$name" pass "measured: $result"
  if [[ -n "$record" ]]; then
    rows+=("| $name | recorded | $name.json |")
    continue
  fi
  if [[ ! -f "$baseline/$name.json" ]]; then
    add_case gate "$name" error "no baseline file $baseline/$name.json"
    rows+=("| $name | **ERROR** | no baseline file $baseline/$name.json: record the baseline again |"); record_code 2
    continue
  fi
  "$bin/xstage-gate" --baseline "$baseline/$name.json" --candidate "$result" --config "$config" \
    --junit "$out/gate/$name.xml" --md --only-failures >"$out/gate/$name.md" 2>"$out/logs/$name-gate.txt"
  rc=$?
  verdict=$(grep -E "^(PASS|FAIL)" "$out/gate/$name.md" | tail -n 1)
  case $rc in
    0) rows+=("| $name | PASS | $verdict |") ;;
    1) rows+=("| $name | **FAIL** | $verdict |") ;;
    *) why=$(grep -m1 "error" "$out/logs/$name-gate.txt"); add_case gate "$name" error "xstage-gate exit $rc: $why"
       rows+=("| $name | **ERROR** (gate exit $rc) | $(md "$why") |") ;;
  esac
  record_code "$rc"
done

if [[ $backend == gpu ]]; then  # throttling during the run shows in the reasons right after it
  mask=$(throttle_reasons)
  if bad_throttle "$mask"; then
    add_case node "throttle reasons after the run" fail "active clock-event reasons $mask: the measurements ran throttled"
    rows+=("| node: throttle reasons after | **FAIL** | active $mask |"); record_code 1
  else
    add_case node "throttle reasons after the run" pass "${mask:-unknown}"
  fi
fi

# 4. JUnit: the node checks and steps, then every gate's test suites (named by their step).
{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo '<testsuites name="gate-node">'
  echo "  <testsuite name=\"gate-node\" tests=\"${#cases[@]}\">"
  printf '%s\n' "${cases[@]}"
  echo "  </testsuite>"
  for f in "$out"/gate/*.xml; do
    [[ -f "$f" ]] || continue
    step=$(basename "$f" .xml)
    sed -e '1,2d' -e '$d' -e "s/<testsuite name=\"/<testsuite name=\"$step: /" \
        -e "s/classname=\"xstage-gate\\./classname=\"gate-node.$step./" "$f"
  done
  echo '</testsuites>'
} >"$out/junit.xml"

# 5. Summary.
case $worst in
  0) head="PASS" ;; 1) head="FAIL (regression or unfit node)" ;; 77) head="NO GPU (exit 77)" ;;
  *) head="ERROR (exit $worst)" ;;
esac
[[ -n "$record" ]] && ((worst == 0)) && head="BASELINE RECORDED in ${record#$repo/}"
{
  echo "# xstage node gate: $head"
  echo
  echo "GPU: $gpu_name, driver $driver, max SM clock $max_sm_mhz MHz; backend $backend;" \
       "$( [[ -n "$record" ]] && echo "recording ${record#$repo/}" || echo "baseline ${baseline#$repo/} (recorded $(node_field date "$baseline/node.txt") at $(node_field git "$baseline/node.txt"))")"
  for n in "${notes[@]}"; do echo; echo "> note: $n"; done
  echo
  echo "| step | verdict | detail |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
  for f in "$out"/gate/*.md; do
    [[ -f "$f" ]] || continue
    grep -q "^PASS" "$f" && continue
    echo; echo "## $(basename "$f" .md): failing rows"; echo; cat "$f"
  done
} >"$out/summary.md"
[[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"

if [[ -n "$record" ]] && ((worst == 0)); then
  mkdir -p "$record" || die "--record-baseline $record: cannot create it"
  cp "$out/node.txt" "$record/node.txt"
  for i in "${!step_names[@]}"; do
    [[ -f "$out/${step_names[$i]}.json" ]] && cp "$out/${step_names[$i]}.json" "$record/"
  done
  { echo "# Baseline of scripts/gate-node.sh (docs/ci-gpu-runner.md): steps of ${steps_file#$repo/}"
    echo "command: scripts/gate-node.sh --backend $backend --record-baseline ${record#$repo/}${tool_args:+ --tool-args \"$tool_args\"}"
    cat "$out/node.txt"; } >"$record/MANIFEST"
fi
sed -n '1p' "$out/summary.md"
printf '%s\n' "${rows[@]}" | sed 's/^| //; s/ |$//; s/ | /: /'
echo "gate-node: wrote $out/junit.xml and $out/summary.md"
exit "$worst"
