#!/usr/bin/env bash
# Calibrates this node: set-up if needed, build xstage-calibrate (only it), then run it on GPU 0's host
# target (and the local control) - or, where there is no GPU, the same pipeline on the simulator, with a
# loud notice. Compiler output goes to build/calibrate-build.log (shown on failure). Extra arguments go
# to xstage-calibrate (e.g. --target peer:1, --out FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build_dir=${XS_BUILD_DIR:-build}
echo "calibrate: building xstage-calibrate (log: $build_dir/calibrate-build.log)"
XS_TARGETS=xstage-calibrate XS_BUILD_LOG="$build_dir/calibrate-build.log" ./scripts/build.sh
out_dir=${XS_OUT_DIR:-out}
backend=gpu
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then backend=sim; fi
if [[ "$backend" == sim ]]; then
  cat >&2 <<'MSG'
################################################################################
##  NO GPU FOUND: calibrating the SIMULATOR, not this machine.                ##
##  The numbers below are the simulator's planted parameters recovered by the ##
##  fitter (--sim-R/--sim-tiss0/--sim-Q); they say nothing about real hardware.##
################################################################################
MSG
fi
out="$out_dir/calibration-$backend-host.json"
set +e
"$build_dir/bin/xstage-calibrate" --backend "$backend" --target host --out "$out" "$@"
rc=$?
set -e
if [[ $rc -eq 77 && "$backend" == gpu ]]; then
  echo "calibrate: the GPU backend found no usable GPU (exit 77); rerun with --backend sim" >&2
fi
[[ $rc -eq 0 ]] || exit $rc
# One interpreter for the check and the plot: the python3 on PATH.
python=$(command -v python3 || true)
if [[ -z "$python" ]]; then
  echo "plot skipped: no python3 on PATH"
elif ! "$python" -c 'import matplotlib' >/dev/null 2>&1; then
  echo "plot skipped: matplotlib is not installed for $python"
elif "$python" scripts/plot_calibration.py "$out" --out "${out%.json}.png"; then
  echo "plot: ${out%.json}.png"
else
  echo "plot skipped: $python scripts/plot_calibration.py failed (see above)" >&2
fi
