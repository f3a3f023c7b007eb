#!/usr/bin/env bash
# Calibrates this node: set-up if needed, build, then xstage-calibrate on GPU 0's host target (and the
# local control) — or, where there is no GPU, the same pipeline on the simulator, with a loud notice.
# Extra arguments go to xstage-calibrate (e.g. --target peer:1, --out FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
out_dir=${XS_OUT_DIR:-out}
mkdir -p "$out_dir"
backend=gpu
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then backend=sim; fi
if [[ "$backend" == gpu && ! -e build/bin/xstage-calibrate ]]; then backend=sim; fi
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
build/bin/xstage-calibrate --backend "$backend" --target host --out "$out" "$@"
rc=$?
set -e
if [[ $rc -eq 77 && "$backend" == gpu ]]; then
  echo "calibrate: the GPU backend found no usable GPU (exit 77); rerun with --backend sim" >&2
fi
[[ $rc -eq 0 ]] || exit $rc
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 scripts/plot_calibration.py "$out" --out "${out%.json}.png" && echo "plot: ${out%.json}.png"
fi
