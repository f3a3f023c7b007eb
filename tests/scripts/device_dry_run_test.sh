#!/usr/bin/env bash
# CTest scripts.device_dry_run (issue 30): the device-call scripts of scripts/device/ without a GPU. Every script
# parses (bash -n; shellcheck -S error where installed), shares lib.sh's helpers instead of copies (no block of 11
# significant lines in two scripts), refuses an unknown part with exit 2 before it runs anything, and every part runs
# under DRY_RUN=1 (lib.sh: build and GPU commands printed, not run) with the commands and the result file names
# docs/device-scripts.md gives. Usage: device_dry_run_test.sh <source dir>. Exit 0 when every check passed.
src=${1:?usage: device_dry_run_test.sh <source dir>}
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() { grep -qF -- "$1" "$2" || fail "'$1' not in $(basename "$2")"; }
lists() { tar -tzf "$2" 2>/dev/null | grep -qx -- "$1" || fail "$1 not in $2"; }
# run NAME [ENV=VALUE...] SCRIPT [ARGS...]: DRY_RUN=1 OUT=$tmp/NAME, output in $tmp/NAME.out, exit code in rc.
run() {
  local name=$1; shift
  env DRY_RUN=1 OUT="$tmp/$name" "$@" >"$tmp/$name.out" 2>&1
  rc=$?
  echo "\$ $* -> exit $rc"
}
scripts=(scripts/device/*.sh)

for s in "${scripts[@]}"; do bash -n "$s" || fail "$s: syntax"; done
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck -S error "${scripts[@]}" || fail "shellcheck -S error"
else
  echo "shellcheck not installed: skipped"
fi
for s in "${scripts[@]}"; do
  case $s in */lib.sh|*/stamp.sh) continue ;; esac
  grep -q 'source "$(dirname "$0")/lib.sh"\|source scripts/device/lib.sh' "$s" || fail "$s does not source lib.sh"
  grep -qE '^(stamp|clocks|archive_folders|run_step|build_targets|start_call)\(\)' "$s" && fail "$s redefines a lib.sh helper"
done
# Copied blocks: any 11 consecutive non-blank, non-comment lines (leading space ignored) found in two scripts.
dups=$(for s in "${scripts[@]}"; do
         sed -e 's/^[[:space:]]*//' -e '/^#/d' -e '/^$/d' "$s" |
           awk -v f="$s" '{l[NR] = $0} END {for (i = 1; i + 10 <= NR; i++) {w = l[i]; for (j = 1; j <= 10; j++) w = w "\x1f" l[i + j]; print f "\t" w}}' |
           sort -u -t $'\t' -k2,2
       done | sort -t $'\t' -k2,2 | awk -F '\t' '$2 == prev && $1 != pf {print pf " and " $1} {prev = $2; pf = $1}' | sort -u)
[[ -z $dups ]] || fail "a block of 11 lines copied between: $dups"

# Unknown parts: exit 2, nothing run.
run bad-session bash scripts/device/session.sh predictions bogus
[[ $rc == 2 && ! -e $tmp/bad-session/predictions.tar ]] || fail "session.sh bogus: exit $rc or a part ran"
for script in fa calibration moe_bench moe_verify; do
  run "bad-$script" PARTS=bogus bash "scripts/device/$script.sh"
  [[ $rc == 2 ]] || fail "$script.sh PARTS=bogus: exit $rc, expected 2"
done
# A part's own PARTS (and GATE), a repeated part and no part at all: refused before the first part runs.
for knob in CALIBRATION_PARTS:calibration FA_PARTS:fa MOE_PARTS:moe MOE_BENCH_PARTS:moe_bench; do
  run "bad-nested-${knob#*:}" "${knob%%:*}=bogus" bash scripts/device/session.sh checks "${knob#*:}"
  [[ $rc == 2 && ! -e $tmp/bad-nested-${knob#*:}/checks.tar ]] || fail "session.sh ${knob%%:*}=bogus: exit $rc or a part ran"
done
run bad-twice bash scripts/device/session.sh checks checks
[[ $rc == 2 && ! -e $tmp/bad-twice/checks.tar ]] || fail "session.sh checks checks: exit $rc or a part ran"
run bad-none bash scripts/device/session.sh
[[ $rc == 2 ]] || fail "session.sh without parts: exit $rc, expected 2"
run bad-gate GATE=sometimes bash scripts/device/gpu_checks.sh
[[ $rc == 2 ]] || fail "gpu_checks.sh GATE=sometimes: exit $rc, expected 2"

# Every session part, default knobs.
parts=(predictions interference epilogue gemm moe calibrate_sh checks gate_record calibration fa moe_bench)
run session bash scripts/device/session.sh "${parts[@]}"
[[ $rc == 0 ]] || fail "session.sh: exit $rc"
for part in "${parts[@]}"; do
  [[ -f $tmp/session/$part.tar ]] || fail "session.sh: no $part.tar"
done
S=$tmp/session
has "xstage-predict fa-score" "$S/predictions.log"
has "INTERFERENCE OK" "$S/interference.log"
has "--config configs/calibrate/loaded-epilogue.json" "$S/epilogue.log"
has "scripts/moe_gemm_rates.py rates" "$S/gemm.log"
has "bench canlose-local-large-D" "$S/moe.log"
has "./scripts/calibrate.sh in a fresh copy" "$S/calibrate_sh.log"
has "./scripts/gate-node.sh --out $S/checks/checks/gate" "$S/checks.log"
has "./scripts/gate-node.sh --record-baseline $S/gate_record/baseline --out" "$S/gate_record.log"
has "./scripts/gate-node.sh --baseline $S/gate_record/baseline --out $S/gate_record/check" "$S/gate_record.log"
has "DRY: build xs_gpu_tests xstage-calibrate xstage-gate" "$S/calibration.log"
has "--address-mode scattered --threads 64 --out $S/calibration/results/cal-scattered.json" "$S/calibration.log"
has "scripts/fa_vs_cudnn.py --lib build/lib/libxstage_fa.so --out $S/fa/results/fa-vs-cudnn-d128.json" "$S/fa.log"
has "--tensor-tflops bf16=708,fp8=589 --launches-per-graph 1 --out $S/moe_bench/journals/megamoe-fp8-6976-132-host.json" \
  "$S/moe_bench.log"

# fa.sh: the canonical bars protocol's files (results/h200/fa_a2a/*-bars/results/), and run lists.
run fa HOST_RUNS="fa-a2a-host;fa-a2a-host-kv2:--fa-kv-cluster 2" bash scripts/device/fa.sh
[[ $rc == 0 ]] || fail "fa.sh: exit $rc"
for f in fa-vs-cudnn-d128 calibration-host-small-k fa-a2a-host fa-a2a-host-kv2 fa-a2a-local; do
  lists "results/$f.json" "$tmp/fa/results.tar.gz"
done
has "--model $tmp/fa/results/calibration-host-small-k.json --heads 8 --target host --fa-kv-cluster 2" "$tmp/fa.out"
has "--M 8192,16384,32768,49152,65536 --blocks 5 --kv-clusters 1,2 --heads-major-kv" "$tmp/fa.out"
run fa-parts PARTS="tests sanitize sass local cudnn point sdpa plot" LOCAL_REPS=30 CLOCK_PROBES=5 \
  LOCAL_RUNS="fa-a2a-local-kv1:--fa-kv-cluster 1;fa-a2a-local-L1:--M 8192 --launches-per-graph 1" bash scripts/device/fa.sh
[[ $rc == 0 ]] || fail "fa.sh parts: exit $rc"
has "--reps 30 --heads 8 --target local --fa-kv-cluster 1 --out" "$tmp/fa-parts.out"
has "--reps 30 --heads 8 --target local --M 8192 --launches-per-graph 1 --out" "$tmp/fa-parts.out"
has "scripts/fa_attach_baseline.py $tmp/fa-parts/results/fa-a2a-local-kv1.json --clock-probes 5" "$tmp/fa-parts.out"
has "--tool racecheck --error-exitcode 9 build/bin/xs_gpu_attention_tests --gtest_filter=FlashAttentionKvCluster.*" \
  "$tmp/fa-parts.out"
has "scripts/device/sass_loop_ops.py" "$tmp/fa-parts.out"
has "plot_fa_a2a.py $tmp/fa-parts/results/fa-a2a-local-L1.json" "$tmp/fa-parts.out"

# calibration.sh: issue 9's file names; moe_bench.sh: the matrix's and the first b_n results' names.
run calibration PARTS="run1 run2 scattered gate diagnostics plots" bash scripts/device/calibration.sh
for f in cal-run1 cal-run2 cal-scattered completion-zero-gap same-lines; do
  lists "results/$f.json" "$tmp/calibration/results.tar.gz"
done
has "--baseline $tmp/calibration/results/cal-run1.json --candidate $tmp/calibration/results/cal-run2.json" \
  "$tmp/calibration.out"
run moe_bench PARTS="precheck perf:256:bf16 bf16:2048 dsweep:fp8:132" bash scripts/device/moe_bench.sh
for f in megamoe-check megamoe-bn256 megamoe-bf16-2048 megamoe-dsweep-fp8-132; do
  lists "results/$f.json" "$tmp/moe_bench/results.tar.gz"
done
has "scripts/moe_attach_baseline.py $tmp/moe_bench/results/megamoe-bn256.json" "$tmp/moe_bench.out"
[[ -f $tmp/moe_bench/env.txt && -f $tmp/moe_bench/journals.tar.gz ]] || fail "moe_bench.sh: no env.txt or journals.tar.gz"

# The A/B and the sanitizer knob.
run moe_ab BASE=HEAD PRECISIONS=bf16 ROUNDS=1 bash scripts/device/moe_ab.sh
[[ $rc == 0 ]] || fail "moe_ab.sh: exit $rc"
lists results/ab-bf16-base-1.json "$tmp/moe_ab/results.tar.gz"
lists results/ab-bf16-new-1.json "$tmp/moe_ab/results.tar.gz"
run moe_verify PARTS="tests sanitize" SANITIZE_TOOLS="memcheck racecheck" bash scripts/device/moe_verify.sh
has "--tool memcheck --error-exitcode 9 build/bin/xs_gpu_moe_tests" "$tmp/moe_verify.out"

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "device scripts: every check passed"
