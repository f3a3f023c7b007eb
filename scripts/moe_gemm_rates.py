#!/usr/bin/env python3
"""Per-shape GEMM rates for the MegaMoE ab initio prediction (issue 28 item 2), from a microbenchmark: torch
grouped_mm / _scaled_grouped_mm on each shape's two Linears (scripts/moe_vs_grouped_mm.py's torch_l1, torch_l2
contenders), never an application run.

  select  MATRIX.json... --out CONFIGS.json   one local point per (shape, precision) of the given megamoe result
          files (their configuration only: shape, T, P, top-k, rows per expert), written as a result file that
          moe_vs_grouped_mm.py --from-result reads.
  rates   PAIRED.json --out RATES.json        moe_vs_grouped_mm.py's output -> xstage.gemm_rates: per (shape,
          precision) l1_flops_per_s = useful L1 flops / torch_l1 median, the same for L2; device_sms the SMs torch
          ran on (the whole device).
Exit codes: 0 ok, 2 bad usage or input.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_input import problem_text  # noqa: E402


SELECT_FORM = "expected megamoe result files of xstage-bench: an object with points [{suite, status, axes, extra}]"
RATES_FORM = ("expected moe_vs_grouped_mm.py output: an object with points [{status, config {shape, precision}, "
              "flops {l1, l2}, contenders {torch_l1, torch_l2: {median_s}}}]")
MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError)


def fail(msg):
    print(f"moe_gemm_rates: {msg}", file=sys.stderr)
    sys.exit(2)




def read_points(path, form):
    """The points array of a JSON file; fail()s with one line on a missing, non-JSON or non-object file."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {problem_text(e)} ({form})")
    if not isinstance(doc, dict) or not isinstance(doc.get("points", []), list):
        fail(f"{path}: not an object with a points array ({form})")
    return doc.get("points", [])


def write_new(path, doc):
    if os.path.lexists(path):
        fail(f"{path} exists; outputs never overwrite a file (give a new path)")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        fail(f"{path}: folder {folder} does not exist (give a path in an existing folder)")
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        fail(f"{path}: cannot write ({e.strerror}) (give a writable path)")


def select(files, out):
    seen, points = set(), []
    for path in files:
        try:
            for p in read_points(path, SELECT_FORM):
                ax = p.get("axes", {})
                if p.get("suite") != "megamoe" or p.get("status") != "ok" or ax.get("target") != "local":
                    continue
                key = (ax.get("shape"), ax.get("precision"))
                if key in seen:
                    continue
                seen.add(key)
                points.append({"suite": "megamoe", "status": "ok", "axes": ax,
                               "extra": {"pairs_per_local_expert": p.get("extra", {}).get("pairs_per_local_expert", []),
                                         "D": p.get("extra", {}).get("D", 1)}})
        except MALFORMED as e:
            fail(f"{path}: {problem_text(e)} ({SELECT_FORM})")
    if not points:
        fail(f"no ok local megamoe point in {', '.join(files)} ({SELECT_FORM})")
    write_new(out, {"schema": {"name": "xstage.result", "version": "1.0"}, "points": points,
                    "meta": {"note": "configurations selected by scripts/moe_gemm_rates.py select", "from": files}})
    print(f"wrote {out}: {len(points)} configurations")


def rates(paired, out, device_sms):
    rows = []
    try:
        for p in read_points(paired, RATES_FORM):
            if p.get("status") != "ok":
                continue
            cfg, c, flops = p["config"], p.get("contenders", {}), p.get("flops", {})
            t1, t2 = c.get("torch_l1", {}).get("median_s"), c.get("torch_l2", {}).get("median_s")
            if not t1 or not t2 or not flops.get("l1") or not flops.get("l2"):
                continue
            rows.append({"shape": cfg.get("shape", ""), "precision": cfg["precision"],
                         "l1_flops_per_s": flops["l1"] / t1, "l2_flops_per_s": flops["l2"] / t2,
                         "device_sms": device_sms,
                         "source": f"torch grouped_mm on {cfg.get('source', '')} ({paired}), useful flops / median"})
    except MALFORMED as e:
        fail(f"{paired}: {problem_text(e)} ({RATES_FORM})")
    if not rows:
        fail(f"{paired}: no point with torch_l1 and torch_l2 medians ({RATES_FORM})")
    # The paired run's time and GPU travel with the rates: a score can then tell whether they predate the data it
    # judges and come from the same GPU (meta.date_utc, meta.devices[0].name, as in xstage's own files).
    meta = {"from": paired, "tool": "scripts/moe_gemm_rates.py rates"}
    try:
        with open(paired) as f:
            source = json.load(f).get("meta") or {}
        if source.get("time_utc"):
            meta["date_utc"] = source["time_utc"]
        if source.get("device_name"):
            meta["devices"] = [{"name": source["device_name"]}]
    except (OSError, ValueError):
        pass  # read_points above already read it; a second read failing leaves the rates undated
    write_new(out, {"schema": {"name": "xstage.gemm_rates", "version": "1.0"}, "rates": rows, "meta": meta})
    print(f"wrote {out}: {len(rows)} rates")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("select")
    s.add_argument("files", nargs="+")
    s.add_argument("--out", required=True)
    r = sub.add_parser("rates")
    r.add_argument("paired")
    r.add_argument("--out", required=True)
    r.add_argument("--device-sms", type=int, default=132)
    a = ap.parse_args(argv)
    if a.cmd == "select":
        select(a.files, a.out)
    else:
        rates(a.paired, a.out, a.device_sms)


if __name__ == "__main__":
    main(sys.argv[1:])
