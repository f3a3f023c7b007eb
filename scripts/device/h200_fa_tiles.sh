#!/usr/bin/env bash
# Issue 13, FA speed: the dynamic tile scheduler (kernels/attention/config.hpp TileSchedulerKind) checked and
# timed beside the static one. (1) build; ptxas spills of every FlashAttention instantiation (must be 0);
# (2) the FA GPU tests (Shapes, TileScheduler, Validation, each ping-pong case in its own process, runner and
# sender tests); compute-sanitizer memcheck and racecheck on small points; (3) fa_a2a --target local at
# M = 8K..64K, 8 heads, d = 128 with --fa-tile-scheduler static and dynamic, d = 64 dynamic, each with pinned
# cuDNN SDPA attached in the same call; (4) one table.
# Returns: summary.txt, results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_tiles.sh   (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
PY=/opt/torch/.venv/bin/python3; [[ -x $PY ]] || PY=python3
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
M_LIST=${XS_FA_M:-8192,16384,32768,49152,65536}
DEADLINE_S=${DEADLINE_S:-560}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_attention_tests xstage-bench \
  -- -v >"$LOGS/build.txt" 2>&1 || { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
python3 - "$LOGS/build.txt" <<'PY' | tee "$LOGS/ptxas.txt"
import re, sys
t = open(sys.argv[1]).read()
n = bad = 0
for m in re.finditer(r"Compiling entry function '(\S*flash_attention_kernel\S*)' for 'sm_90a'\n(.*?)Compile time", t, re.S):
    sp = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", m.group(2))
    k = re.search(r"EpilogueModeE(\d)ELi(\d+)ELNS1_16MainloopScheduleE(\d)", m.group(1))
    if sp and k:
        n += 1
        bad += sp.group(1) != "0" or sp.group(2) != "0"
        print(f"mode {k[1]} d {k[2]} schedule {k[3]}: spill stores/loads {sp[1]}/{sp[2]} B")
print(f"{n} FlashAttention instantiations compiled, {bad} with spills")
PY
T=build/bin/xs_gpu_attention_tests
clocks "before tests"
run_step fa_shapes 120 "$T" --gtest_filter='Shapes/FlashAttention.*:FlashAttentionTileScheduler.*:FlashAttentionValidation.*'
run_step fa_runner 150 "$T" --gtest_filter='FaRunner*:FaSender*:FaA2a*:FaExchange*'
for c in $("$T" --gtest_list_tests --gtest_filter='Schedules/FlashAttentionSchedule.*' | awk '/^  /{print $1}' | head -20); do
  run_step "sched_${c##*/}" 30 "$T" --gtest_filter="Schedules/FlashAttentionSchedule.$c"
done
run_step memcheck 90 "$SANITIZER" --tool memcheck --error-exitcode 9 "$T" \
  --gtest_filter='FlashAttentionTileScheduler.*:Shapes/FlashAttention.*/H1_M256_q1_ctas0_P1_d128'
run_step racecheck 120 "$SANITIZER" --tool racecheck --error-exitcode 9 "$T" \
  --gtest_filter='Shapes/FlashAttention.*/H1_M256_q1_ctas0_P1_d128:Shapes/FlashAttention.*/H4_M1024_q1_ctas5_P8_d128'
clocks "before timing"
bench() {  # name, extra flags
  local name=$1; shift
  run_step "$name" 150 build/bin/xstage-bench fa_a2a --M "$M_LIST" --heads 8 --target local --reps 10 \
    --out "$RES/$name.json" --no-progress "$@"
  clocks "after $name"
  [[ -f "$RES/$name.json" ]] && run_step "cudnn_$name" 60 "$PY" scripts/fa_attach_baseline.py "$RES/$name.json"
}
bench fa-d128-dynamic --fa-tile-scheduler dynamic
bench fa-d128-static --fa-tile-scheduler static
bench fa-d64-dynamic --fa-tile-scheduler dynamic --head-dim 64
stamp summary
python3 - "$RES" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
print(f"{'file':18s} {'M':>6s} {'T_FA us':>9s} {'sender us':>9s} {'TFLOPS':>7s} {'cuDNN TF':>8s} {'FA/cuDNN':>8s} {'idle':>6s} verified")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "fa-*.json"))):
    for p in json.load(open(path)).get("points", []):
        if p.get("status") != "ok": continue
        m, ex = p["extra"]["measured"], p["extra"]
        base = ex.get("baseline_sdpa_cudnn") or {}
        vs = (ex.get("vs_cudnn") or {}).get("fa_over_cudnn_speed")
        tl = (m.get("timeline") or {}).get("fa_only") or {}
        print(f"{os.path.basename(path)[:18]:18s} {p['axes']['M']:6d} {m['T_FA_s']['median']*1e6:9.1f} "
              f"{m['sender_side']['T_FA_s']['median']*1e6:9.1f} {m['fa_tflops']:7.0f} {base.get('tflops', 0):8.0f} "
              f"{vs or 0:8.3f} {tl.get('tail_idle_fraction', 0)*100:5.1f}% {p['verification']['passed']}")
PY
stamp done
