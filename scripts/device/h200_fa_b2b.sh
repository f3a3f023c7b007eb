#!/usr/bin/env bash
# Issue 13, FA speed diagnostic: is a FlashAttention launch slower when it follows another one back to back?
# fa_a2a --target local at M = 8K, 16K (8 heads, d = 128) for each tile scheduler with 5 and with 1 launch per
# graph / sender-side round; prints each run's single instrumented launch beside the back-to-back launches'
# timelines (span, idle tail, per-CTA sigma median and slowest, inter-launch gap).
# Returns: summary.txt, results.tar.gz, logs.tar.gz, clocks.txt.
# Usage there: bash scripts/device/h200_fa_b2b.sh   (device tool: timeout_s 300, carry .xs-git-sha)
set -uo pipefail
OUT=${OUT:-$PWD/out/device}
LOGS="$OUT/logs"; RES="$OUT/results"
mkdir -p "$LOGS" "$RES"
CMAKE=${CMAKE:-/opt/torch/.venv/bin/cmake}
[[ -x "$CMAKE" ]] || CMAKE=cmake
DEADLINE_S=${DEADLINE_S:-280}
SECONDS=0
source "$(dirname "$0")/lib.sh"
finish() { rm -f "$RES"/*.journal.jsonl; archive_folders results logs; }
trap finish EXIT
stamp build
[[ -f build/CMakeCache.txt ]] || "$CMAKE" --preset default -G Ninja >"$LOGS/configure.txt" 2>&1 ||
  { tail -30 "$LOGS/configure.txt"; exit 1; }
timeout -k 5 $((DEADLINE_S - SECONDS)) "$CMAKE" --build build -j16 --target xstage-bench >"$LOGS/build.txt" 2>&1 ||
  { grep -E "error" "$LOGS/build.txt" | head -30; exit 1; }
clocks "before"
for tiles in dynamic static; do
  for L in 5 1; do
    run_step "$tiles-L$L" 60 build/bin/xstage-bench fa_a2a --M 8192,16384 --heads 8 --target local --reps 10 \
      --fa-tile-scheduler "$tiles" --launches-per-graph "$L" --out "$RES/fa-$tiles-L$L.json" --no-progress
  done
done
clocks "after"
python3 - "$RES" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys
us = lambda x: x * 1e6
for path in sorted(glob.glob(os.path.join(sys.argv[1], "fa-*.json"))):
    for p in json.load(open(path)).get("points", []):
        if p.get("status") != "ok": continue
        m = p["extra"]["measured"]; t = m["timeline"]; one = t["fa_only"]; b = t.get("fa_only_back_to_back") or {}
        g = lambda k: b.get(k, {}).get("median", 0)
        print(f"{os.path.basename(path):18s} M {p['axes']['M']:6d} T_FA {us(m['T_FA_s']['median']):7.1f} sender "
              f"{us(m['sender_side']['T_FA_s']['median']):7.1f} | single: span {us(one['span_s']):7.1f} idle "
              f"{one['tail_idle_fraction']*100:4.1f}% sigma {us(one['cta_sigma_s_per_kv_tile']['median']):.3f}/"
              f"{us(one['cta_sigma_s_per_kv_tile']['max']):.3f} | b2b: span {us(g('span_s')):7.1f} idle "
              f"{g('tail_idle_fraction')*100:4.1f}% sigma {us(g('cta_sigma_median_s_per_kv_tile')):.3f}/"
              f"{us(g('cta_sigma_max_s_per_kv_tile')):.3f} gap {us(g('inter_launch_gap_s')):6.1f} us")
PY
stamp done
