#!/usr/bin/env bash
# One device call for issue 13's FA speed bar: build, check, then time every FlashAttention schedule
# (kernels/attention/config.hpp MainloopSchedule: baseline, pingpong, pingpong_full) with cuDNN SDPA side by
# side. Steps: (1) build xs_gpu_attention_tests, xstage-bench; ptxas resource usage of every instantiation
# (and SASS LDL/STL/HGMMA/BAR counts where cuobjdump exists); (2) the FA GPU tests, each schedule case in its
# own process (a trapped barrier wait fails one case, not the rest); (3) fa_a2a --target local for each
# schedule at M = 8K..64K, d = 128 and d = 64, 8 heads, with fa_attach_baseline.py's pinned cuDNN SDPA written
# into each file; (4) one table: FA-only TFLOPS per schedule and the ratio to cuDNN.
# Returns (under $OUT): summary.txt, results.tar.gz (the result files), logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_speed.sh [all|check|time]
#   check: steps 1-2; time: steps 1 (a no-op once built), 3, 4; all (default): everything. On a fresh machine
#   the build and the tests may take most of one 10-minute call: run `check`, then `time` (a machine idle for
#   30 s is given back, so `time` usually rebuilds). Every step is bounded by DEADLINE_S (560 s). XS_FA_M, XS_FA_SCHEDULES, XS_FA_DIMS, XS_FA_REPS narrow or widen it.
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"
RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3
[[ -x $PY ]] || PY=python3
PHASE=${1:-all}
case "$PHASE" in all|check|time) ;; *) echo "usage: $0 [all|check|time]" >&2; exit 2 ;; esac
M_LIST=${XS_FA_M:-8192,16384,32768,49152,65536}
SCHEDULES=${XS_FA_SCHEDULES:-baseline pingpong pingpong_full}
DIMS=${XS_FA_DIMS:-128 64}
DEADLINE_S=${DEADLINE_S:-560}  # the call's limit is 600 s: no step runs past this, the archives are always written
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { archive_folders results logs; ls -la "$OUT"; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1

stamp build
if [[ ! -f build/CMakeCache.txt ]]; then
  "$CMAKE" -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >"$LOGS/configure.txt" 2>&1 ||
    { tail -30 "$LOGS/configure.txt"; exit 1; }
fi
targets=(xstage-bench)
[[ "$PHASE" != time ]] && targets+=(xs_gpu_attention_tests)
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target "${targets[@]}" \
  >"$LOGS/build.txt" 2>&1 ||
  { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
# ptxas -v of every FlashAttention instantiation (the entry's register cap is 168 = 65536 / 384; the consumer
# warpgroups run at setmaxnreg 232): spills must be 0.
python3 - "$LOGS/build.txt" <<'PY' | tee "$LOGS/ptxas.txt"
import re, sys
t = open(sys.argv[1]).read()
mode = {"0": "local", "1": "fused", "2": "completion_coupled"}
sch = {"0": "baseline", "1": "pingpong", "2": "pingpong_full"}
n = 0
for m in re.finditer(r"Compiling entry function '(\S*flash_attention_kernel\S*)' for 'sm_90a'\n(.*?)Compile time", t, re.S):
    k = re.search(r"EpilogueModeE(\d)ELi(\d+)ELNS1_16MainloopScheduleE(\d)", m.group(1))
    regs = re.search(r"Used (\d+) registers", m.group(2))
    sp = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", m.group(2))
    if k and regs and sp:
        n += 1
        print(f"{sch[k[3]]:14s} d={k[2]:3s} {mode[k[1]]:19s} regs {regs[1]}, stack {sp[1]} B, spill st/ld {sp[2]}/{sp[3]} B")
print(f"{n} instantiations compiled in this build (0: the library was already built)")
PY
LIB=$(find build -name "libxs_attention_kernels.a" | head -1)
if command -v cuobjdump >/dev/null && [[ -n "$LIB" ]]; then
  cuobjdump --dump-sass "$LIB" >"$LOGS/kernels.sass" 2>&1
  python3 - "$LOGS/kernels.sass" <<'PY' | tee -a "$LOGS/ptxas.txt"
import re, sys
text = open(sys.argv[1]).read()
mode = {"0": "local", "1": "fused", "2": "completion_coupled"}
sch = {"0": "baseline", "1": "pingpong", "2": "pingpong_full"}
for m in re.finditer(r"Function : (\S*flash_attention_kernel\S*)\n(.*?)(?=\n\s*Function : |\Z)", text, re.S):
    b = m.group(2)
    k = re.search(r"EpilogueModeE(\d)ELi(\d+)ELNS1_16MainloopScheduleE(\d)", m.group(1))
    name = f"{sch[k[3]]} d={k[2]} {mode[k[1]]}" if k else m.group(1)[:80]
    print(f"{name}: HGMMA {b.count('HGMMA')}, LDL {b.count('LDL')}, STL {b.count('STL')}, "
          f"BAR.ARV {b.count('BAR.ARV')}, BAR.SYNC {b.count('BAR.SYNC')}, WARPSYNC {b.count('WARPSYNC')}")
    # Where the turn is passed: the pass must follow the step's HGMMAs without a wait on them in between
    # (a WARPGROUP.DEPBAR / wait before BAR.ARV would serialize the ping-pong).
    if name == "pingpong d=128 local":
        lines = b.splitlines()
        with open(sys.argv[1].replace("kernels.sass", "pingpong_bar_context.txt"), "w") as f:
            for i, line in enumerate(lines):
                if "BAR.ARV" in line or "BAR.SYNC" in line:
                    f.write("\n".join(lines[max(0, i - 12):i + 4]) + "\n----\n")
PY
fi

T=build/bin/xs_gpu_attention_tests
run_gtest() {  # filter, log name
  local left=$((DEADLINE_S - SECONDS))
  if ((left < 20)); then echo "$1: not run (deadline)"; return 0; fi
  ((left > 120)) && left=120
  timeout -k 5 "$left" "$T" --gtest_filter="$1" >"$LOGS/$2.txt" 2>&1
  local rc=$?
  echo "$1 rc=$rc: $(grep -cE '^\[       OK \]' "$LOGS/$2.txt") ok, $(grep -cE '^\[  FAILED  \].*\(' "$LOGS/$2.txt") failed"
  [[ $rc -ne 0 ]] && grep -E "Failure|Expected|Which is|seed|timeout|differs|failed" "$LOGS/$2.txt" | head -10
  return 0
}
if [[ "$PHASE" != time ]]; then
  stamp "gpu tests"
  clocks "before tests"
  run_gtest 'FlashAttentionValidation.*' validation
  run_gtest 'Shapes/FlashAttention.*' baseline_shapes
  for c in $("$T" --gtest_list_tests --gtest_filter='Schedules/FlashAttentionSchedule.*' | awk '/^  /{print $1}'); do
    run_gtest "Schedules/FlashAttentionSchedule.$c" "sched_${c##*/}"
  done
fi

[[ "$PHASE" == check ]] && exit 0
stamp timing
clocks "before timing"
for d in $DIMS; do
  for s in $SCHEDULES; do
    f="$RES/fa-d$d-$s.json"
    left=$((DEADLINE_S - SECONDS - 70))  # 70 s kept for the cuDNN attach and the archives
    if ((left < 30)); then echo "fa_a2a d=$d $s: not run (deadline)"; continue; fi
    ((left > 300)) && left=300
    stamp "fa_a2a d=$d schedule=$s (limit ${left}s)"
    timeout -k 10 "$left" build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --head-dim "$d" --target local \
      --fa-schedule "$s" --reps "${XS_FA_REPS:-10}" --out "$f" --no-progress >"$LOGS/fa-d$d-$s.txt" 2>&1
    echo "fa_a2a d=$d $s rc=$?"
    clocks "after d=$d $s"
    rm -f "$RES"/*.journal.jsonl
    # cuDNN SDPA in the same call, pinned backend, same shapes (extra.baseline_sdpa_cudnn, extra.vs_cudnn).
    [[ -f "$f" ]] && { timeout -k 5 60 "$PY" scripts/fa_attach_baseline.py "$f" >>"$LOGS/fa-d$d-$s.txt" 2>&1;
                       echo "cuDNN attach rc=$?"; }
  done
done

stamp summary
python3 - "$RES" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "fa-d*.json"))):
    doc = json.load(open(path))
    for p in doc.get("points", []):
        if p.get("suite") != "fa_a2a" or p.get("status") != "ok":
            continue
        ax, ex = p["axes"], p.get("extra", {})
        t_fa = p["variants"]["fa"]["median"]
        flops = 4.0 * ax["M"] * ax["M"] * ax["head_dim"] * ax["heads"]
        cud = ex.get("baseline_sdpa_cudnn", {})
        rows.append((ax["head_dim"], ax["M"], ax.get("fa_schedule", "baseline"), t_fa, flops / t_fa * 1e-12,
                     cud.get("tflops"), ex.get("vs_cudnn", {}).get("fa_over_cudnn_speed"),
                     p.get("verification", {}).get("passed")))
print("FA-only (layout-matched, remote-visible boundary) vs pinned cuDNN SDPA, 8 heads, bf16, target local")
print(f"{'d':>4} {'M':>6} {'schedule':14} {'T_FA us':>9} {'FA TFLOPS':>10} {'cuDNN TFLOPS':>13} {'FA/cuDNN':>9} verified")
for d, m, s, t, tf, ct, r, v in sorted(rows, key=lambda r: (-r[0], r[1], r[2])):
    ct_s = f"{ct:13.1f}" if ct else f"{'-':>13}"
    r_s = f"{r:9.3f}" if r else f"{'-':>9}"
    print(f"{d:4d} {m:6d} {s:14} {t * 1e6:9.1f} {tf:10.1f} {ct_s} {r_s} {v}")
if not rows:
    print("no measured point")
PY
