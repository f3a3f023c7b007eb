#!/usr/bin/env bash
# Second session of 2026-12-02, last call: (1) the README's ./scripts/calibrate.sh exactly, from this fresh
# copy (set-up and build check); (2) where the Ulysses-layout FA-only loses time at short M, flags only, local
# target, M = 8K and 16K, 10 rounds each: the default (P = 8 rank slices, 5 launches per graph), one rank slice
# (--P 1: one destination buffer, no per-row rank division), one launch per graph (--launches-per-graph 1: no
# FA launch directly after another inside a graph), and the static tile scheduler. nvidia-smi samples every
# 100 ms. Returns: results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_layout.sh   (device tool: timeout_s 600, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
DEADLINE_S=${DEADLINE_S:-480}
SECONDS=0
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 >"$LOGS/smi.csv" 2>&1 &
SMI_PID=$!
finish() { kill "$SMI_PID" 2>/dev/null; rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; } >"$LOGS/env.txt" 2>&1
run_step calibrate_sh 240 ./scripts/calibrate.sh
cp out/calibration-gpu-host.json "$RES/calibrate-sh.json" 2>/dev/null || ls out >>"$LOGS/calibrate_sh.txt" 2>&1
stamp build
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xstage-bench >"$LOGS/build.txt" 2>&1 ||
  { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
clocks "before layout runs"
M_SHORT=8192,16384
run_step default 60 build/bin/xstage-bench fa_a2a --M "$M_SHORT" --heads 8 --target local --reps 10 \
  --out "$RES/fa-local-default.json" --no-progress
run_step one_slice 60 build/bin/xstage-bench fa_a2a --M "$M_SHORT" --heads 8 --target local --reps 10 --P 1 \
  --out "$RES/fa-local-P1.json" --no-progress
run_step one_launch 60 build/bin/xstage-bench fa_a2a --M "$M_SHORT" --heads 8 --target local --reps 10 \
  --launches-per-graph 1 --out "$RES/fa-local-L1.json" --no-progress
run_step static 60 build/bin/xstage-bench fa_a2a --M "$M_SHORT" --heads 8 --target local --reps 10 \
  --fa-tile-scheduler static --out "$RES/fa-local-static.json" --no-progress
clocks "after"
stamp done
