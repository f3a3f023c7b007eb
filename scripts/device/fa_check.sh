#!/usr/bin/env bash
# One planned call on the H200 (device tool) for the FlashAttention-A2A kernels (issue 4): build, SASS
# check (HGMMA present, no local memory), CPU + GPU attention tests (each FlashAttention shape in its own
# process, so a trap in one leaves the others' results), FA-only/fused/cc timing at M = 8K, 16K, and the
# PyTorch SDPA (cuDNN, flash) baseline on the same shapes. Logs land in $OUT/fa_logs.tar.gz.
# Usage there: bash scripts/device/fa_check.sh
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
LOGS=$(mktemp -d)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # never NVLink multicast
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
finish() { tar -C "$LOGS" -czf "$OUT/fa_logs.tar.gz" . ; ls -la "$OUT"; }

stamp env
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1 | tail -2

stamp build
t0=$(date +%s)
if ! cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DXS_BUILD_BENCHMARKS=OFF >"$LOGS/configure.txt" 2>&1; then
  tail -30 "$LOGS/configure.txt"; finish; exit 1
fi
if ! cmake --build build -j16 --target xs_attention_tests xs_gpu_attention_tests xstage-fa-point >"$LOGS/build.txt" 2>&1; then
  grep -E "error|Error" "$LOGS/build.txt" | head -40; finish; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
grep -A3 "flash_attention_kernel" "$LOGS/build.txt" | grep -E "registers|spill|stack|C75" | sort | uniq -c

stamp sass
LIB=$(find build -name "libxs_attention_kernels.a" | head -1)
if command -v cuobjdump >/dev/null && [[ -n "$LIB" ]]; then
  cuobjdump --dump-sass "$LIB" >"$LOGS/kernels.sass" 2>&1
  python3 - "$LOGS/kernels.sass" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r"Function : (\S*flash_attention_kernel\S*)\n(.*?)(?=\n\s*Function : |\Z)", text, re.S):
    body = m.group(2)
    print(f"{m.group(1)[:70]}: HGMMA {body.count('HGMMA')}, LDL {body.count('LDL')}, STL {body.count('STL')}, "
          f"UTMALDG {body.count('UTMALDG')}, STG.E.128 {body.count('STG.E.128')}, SYNCS {body.count('SYNCS')}")
PY
else
  echo "cuobjdump or libxs_kernels.a missing"
fi

stamp unit tests
build/bin/xs_attention_tests >"$LOGS/unit.txt" 2>&1; echo "xs_attention_tests rc=$?"; tail -3 "$LOGS/unit.txt"

stamp gpu tests
T=build/bin/xs_gpu_attention_tests
run_gtest() {  # filter, log name
  timeout 90 "$T" --gtest_filter="$1" >"$LOGS/$2.txt" 2>&1
  local rc=$?
  echo "$1 rc=$rc: $(grep -cE '^\[       OK \]' "$LOGS/$2.txt") ok, $(grep -cE '^\[  FAILED  \].*\(' "$LOGS/$2.txt") failed"
  [[ $rc -ne 0 ]] && grep -E "Failure|error|Expected|Which is|seed|timeout|failed" "$LOGS/$2.txt" | head -12
}
run_gtest 'Small/GpuReference.*' reference
run_gtest 'FlashAttentionValidation.*' validation
for c in $("$T" --gtest_list_tests --gtest_filter='Shapes/FlashAttention.*' | awk '/^  /{print $1}'); do
  run_gtest "Shapes/FlashAttention.$c" "fa_${c//\//_}"
done
run_gtest 'FaA2aPoint.*' runner

stamp timing
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1
if [[ "${XS_FA_POINT:-1}" == 1 ]]; then
  timeout 300 build/bin/xstage-fa-point --M 8192,16384 --heads 8 --P 8 --target local,host 2>&1 | tee "$LOGS/fa_point.txt"
  echo "xstage-fa-point rc=${PIPESTATUS[0]}"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1

stamp sdpa baseline
if python3 -c 'import torch' 2>/dev/null; then
  timeout 180 python3 scripts/fa_sdpa_baseline.py --M "${XS_FA_M:-8192,16384}" --heads 8 2>&1 | tee "$LOGS/sdpa.txt"
else
  echo "python3 torch not available: no SDPA baseline"
fi
finish
