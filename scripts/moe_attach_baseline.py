#!/usr/bin/env python3
"""Attach the PyTorch grouped-GEMM baseline to an `xstage-bench megamoe` result file, side by side.

Superseded for issue 29 by moe_vs_grouped_mm.py (torch and the kernel in one process, on the same tensors, timed
the same way, clocks for both); kept to re-derive the older committed files. This one runs torch in another
process, on other inputs, with per-call events.

For every measured point (status ok), runs scripts/moe_grouped_mm_baseline.py on the same GPU with the
point's rows per local expert (extra.pairs_per_local_expert, padded to 128 like the kernel) and shapes,
then stores its JSON under point.extra.baseline_grouped_mm and the ratios under point.extra.vs_baseline:
  whole_kernel_over_gemms: baseline L1+L2 median / kernel time (serial, interleaved): >= 1 means the fused
      kernel (Dispatch + both GEMMs + SwiGLU + Combine) is at least as fast as the two GEMMs alone;
  l1_tflops_ratio / l2_tflops_ratio: kernel per-phase mainloop TFLOPS / baseline per-phase TFLOPS.
Points of the same shape and routing share one baseline run. The file is rewritten atomically.
Usage: python3 scripts/moe_attach_baseline.py RESULT.json [--iters 20]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    with open(args.result) as f:
        doc = json.load(f)
    here = os.path.dirname(os.path.abspath(__file__))
    cache = {}
    for p in doc.get("points", []):
        if p.get("status") != "ok" or p.get("suite") != "megamoe":
            continue
        ax, ex = p["axes"], p["extra"]
        key = (ax["hidden"], ax["intermediate"], ax["precision"], tuple(ex["pairs_per_local_expert"]))
        if key not in cache:
            cmd = [sys.executable, os.path.join(here, "moe_grouped_mm_baseline.py"),
                   "--m-per-expert", ",".join(str(m) for m in ex["pairs_per_local_expert"]),
                   "--hidden", str(ax["hidden"]), "--intermediate", str(ax["intermediate"]),
                   "--precision", ax["precision"], "--iters", str(args.iters), "--align", "128"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            try:
                cache[key] = json.loads(run.stdout)
            except json.JSONDecodeError:
                cache[key] = {"status": "failed", "reason": (run.stderr or run.stdout)[-2000:], "exit": run.returncode}
        base = cache[key]
        ex["baseline_grouped_mm"] = base
        ratios = {}
        prec = ax["precision"]
        totals = [t for t in base.get("totals", []) if t.get("precision") == prec]
        phases = {ph["phase"]: ph for ph in base.get("phases", []) if ph.get("precision") == prec}
        if totals:
            total = totals[0]["median_s"]
            for v in ("serial", "interleaved"):
                if v in p.get("variants", {}):
                    ratios[f"whole_kernel_over_gemms_{v}"] = total / p["variants"][v]["median"]
            for ph in ("l1", "l2"):
                b = phases.get(ph, {}).get("tflops")
                k = ex["variants"].get("serial", {}).get(f"{ph}_mainloop_tflops")
                if b and k:
                    ratios[f"{ph}_tflops_ratio"] = k / b
        ex["vs_baseline"] = ratios
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.result)) or ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args.result)
    for key, base in cache.items():
        print(f"baseline h={key[0]} I={key[1]} {key[2]}: " + json.dumps(base)[:600])


if __name__ == "__main__":
    main()
