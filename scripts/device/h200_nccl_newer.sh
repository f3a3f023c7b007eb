#!/usr/bin/env bash
# Issue 14 on the one-GPU machine with a newer NCCL: the system NCCL there is 2.28.3, whose one-rank
# communicator has no symmetric memory; PyTorch's venv carries libnccl 2.28.9 (>= 2.28.7, which dropped that
# restriction). Build against the system headers, run with that library first on LD_LIBRARY_PATH: the NCCL GPU
# tests, an nccl:0 megamoe point, an nccl:0 fa_a2a point and a small nccl:0 calibration, each verified.
# Returns: results.tar.gz, logs.tar.gz, clocks.txt, env.txt.
# Usage there: bash scripts/device/h200_nccl_newer.sh   (device tool: timeout_s 240, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
DEADLINE_S=${DEADLINE_S:-200}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { archive_folders results logs; }
trap finish EXIT
NCCL_LIB=$(find /opt/torch/.venv -name 'libnccl.so.2' 2>/dev/null | head -1)
{ cat .xs-git-sha 2>/dev/null; nvidia-smi; echo "newer NCCL: ${NCCL_LIB:-none found}"; } >"$OUT/env.txt" 2>&1
[[ -n $NCCL_LIB ]] || { echo "no libnccl.so.2 under /opt/torch/.venv"; exit 1; }
stamp build
"$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 || { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xs_gpu_tests xstage-bench xstage-calibrate \
  >"$LOGS/build.txt" 2>&1 || { grep error "$LOGS/build.txt" | head -30; exit 1; }
export LD_LIBRARY_PATH="$(dirname "$NCCL_LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ ldd build/bin/xstage-bench | grep -i nccl; NCCL_DEBUG=VERSION build/bin/xs_gpu_tests --gtest_filter='NcclComm*' 2>&1 |
  grep -i "nccl version"; } >"$LOGS/nccl_loaded.txt" 2>&1
cat "$LOGS/nccl_loaded.txt"
clocks "before"
run_step gpu_nccl 60 env NCCL_DEBUG=WARN build/bin/xs_gpu_tests --gtest_filter='Nccl*:TopologyProbe.*:GpuBackend.Nccl*'
run_step megamoe_nccl 40 build/bin/xstage-bench megamoe --shapes dsv4_flash --T 2048 --ksm 66 --target nccl:0 \
  --variants expert_wave,interleaved --launches-per-graph 1 --out "$RES/megamoe-nccl0.json" --no-progress
run_step fa_a2a_nccl 40 build/bin/xstage-bench fa_a2a --M 8192 --heads 8 --target nccl:0 --out "$RES/fa-a2a-nccl0.json" \
  --no-progress
run_step calibrate_nccl 50 build/bin/xstage-calibrate --backend gpu --target nccl:0 --no-progress --out "$RES/calibration-nccl0.json"
clocks "after"
rm -f "$RES"/*.journal.jsonl
stamp done
