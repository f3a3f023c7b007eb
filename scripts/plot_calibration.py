#!/usr/bin/env python3
"""Turns an xstage calibration file into the four panels of the paper's Fig. 3.

(a) issue time vs gap with the Burst-Gap model (eq. 3) and the local-memory control,
(b) period vs gap with the max law (eq. 2) and the completion-coupled sum,
(c) isolated issue time vs volume with the knee (eq. 7),
(d) zero-gap period vs volume across K with the fitted R (eq. 1).

Usage: plot_calibration.py CALIBRATION.json [--out FIG.png]
Needs matplotlib (Debian: python3-matplotlib). Post-processing only: never needed to build or test.
"""
import argparse
import math
import os

from plot_io import fail, load_result, output_path, pyplot, run, save

TOOL = "plot_calibration"
EXPECTED = "a calibration file written by xstage-calibrate"
plt = None  # matplotlib.pyplot, imported in main() so that a missing matplotlib is one clear line


def load(path):
    doc = load_result(TOOL, path, EXPECTED)
    if not isinstance(doc.get("model"), dict):
        fail(TOOL, f"{path} has no fitted model (an xstage-bench result, or a calibration run with --no-fit: "
                   "fit it with xstage-calibrate --refit); expected " + EXPECTED)
    if not any(isinstance(p, dict) and isinstance(p.get("spec"), dict) for p in doc["points"]):
        fail(TOOL, f"{path} has no remote-store points; expected " + EXPECTED)
    return doc


def spec(p):
    return p["spec"]


def med(p, key):
    s = p.get(key)
    return None if not s else s.get("median")


def errs(p, key):
    """p10-p90 error bar around the median where the point stored samples; none (0, 0) otherwise."""
    s = p.get(key) or {}
    if not s.get("samples") or s.get("p10") is None or s.get("p90") is None:
        return 0.0, 0.0
    return max(s["median"] - s["p10"], 0.0), max(s["p90"] - s["median"], 0.0)


def yerr(pts, key, scale):
    lo_hi = [errs(p, key) for p in pts]
    return [[lo * scale for lo, _ in lo_hi], [hi * scale for _, hi in lo_hi]]


def k_colors(doc):
    """One colour per K, the same in every panel and for a K's markers and its model line."""
    ks = sorted({spec(p)["K"] for p in doc["points"] if not p.get("skipped")})
    cmap = plt.get_cmap("tab10")
    return {k: cmap(i % 10) for i, k in enumerate(ks)}


LOCAL_COLOR = "0.35"  # the local-memory control: grey, not a K colour


def tiss0_for(model, k, v):
    """T_iss^0 of the nearest (K, V) row of the fitted table."""
    rows = [r for r in model.get("tiss0", []) if r.get("s") is not None]
    if not rows:
        return None
    best = min(rows, key=lambda r: (abs(r["K"] - k), abs(math.log(max(r["V_bytes"], 1) / max(v, 1)))))
    return best["s"]


def q_for(model, k):
    rows = [r for r in model.get("Q", []) if r.get("bytes") is not None]
    if not rows:
        return None, None
    best = min(rows, key=lambda r: abs(r["K"] - k))
    return best["bytes"], best.get("bound", "fit")


def groups(points, pred):
    out = {}
    for p in points:
        if p.get("skipped") or not pred(p):
            continue
        s = spec(p)
        out.setdefault((s["suite"], s["target"], s["K"], s["B_bytes"]), []).append(p)
    return out


def panel_gap(ax, doc, key, title, colors):
    model, R = doc.get("model") or {}, (doc.get("model") or {}).get("R_Bps")
    gs = groups(doc["points"], lambda p: spec(p)["suite"] in ("periodic", "local_control"))
    for (suite, target, k, b), pts in sorted(gs.items()):
        if len({spec(p)["G_s"] for p in pts}) < 4:
            continue  # not a gap sweep
        pts.sort(key=lambda p: spec(p)["G_s"])
        g_us = [spec(p)["G_s"] * 1e6 for p in pts]
        y = [med(p, key) * 1e6 for p in pts]
        local = suite == "local_control"
        color = LOCAL_COLOR if local else colors[k]
        label = f"{target} K={k} B={b // 1024}KiB" + (" (local control)" if local else "")
        ax.errorbar(g_us, y, yerr=yerr(pts, key, 1e6), fmt="x" if local else "o", ms=3, color=color, ecolor=color,
                    elinewidth=0.8, capsize=1.5, label=label)
        if suite == "periodic" and R:
            v = k * b
            t0 = tiss0_for(model, k, v)
            if t0 is None:
                continue
            dense = [g_us[-1] * i / 200 for i in range(201)]
            if key == "issue_time_s":
                ax.plot(dense, [max(t0, v / R - g * 1e-6) * 1e6 for g in dense], "-", lw=1, color=colors[k],
                        label=f"model max(T_iss0, V/R-G), K={k}")
            else:
                ax.plot(dense, [max(t0 + g * 1e-6, v / R) * 1e6 for g in dense], "-", lw=1, color=colors[k],
                        label=f"model max(T_iss0+G, V/R), K={k}")
                ax.plot(dense, [(g * 1e-6 + v / R) * 1e6 for g in dense], ":", lw=1, color=colors[k],
                        label=f"completion-coupled G+V/R, K={k}")
    ax.set_xlabel("producer-side gap G (us)")
    ax.set_ylabel(("T_iss" if key == "issue_time_s" else "T_period") + " (us)")
    ax.set_title(title)
    ax.legend(fontsize=6)


def panel_isolated(ax, doc, colors):
    model, R = doc.get("model") or {}, (doc.get("model") or {}).get("R_Bps")
    by_k = {}
    for p in doc["points"]:
        if not p.get("skipped") and spec(p)["suite"] == "isolated":
            by_k.setdefault(spec(p)["K"], []).append(p)
    for k, pts in sorted(by_k.items()):
        pts.sort(key=lambda p: spec(p)["K"] * spec(p)["B_bytes"])
        v = [spec(p)["K"] * spec(p)["B_bytes"] for p in pts]
        y = [med(p, "issue_time_s") * 1e6 for p in pts]
        ax.errorbar([x / 2**20 for x in v], y, yerr=yerr(pts, "issue_time_s", 1e6), fmt="o", ms=3, color=colors[k],
                    ecolor=colors[k], elinewidth=0.8, capsize=1.5, label=f"measured K={k}")
        q, bound = q_for(model, k)
        if R and q is not None:
            t0s = [tiss0_for(model, k, x) or p["issue_time_s"]["median"] for x, p in zip(v, pts)]
            ax.plot([x / 2**20 for x in v], [max(t0, (x - q) / R) * 1e6 for t0, x in zip(t0s, v)], "-", lw=1,
                    color=colors[k], label=f"model, Q{'>=' if bound == 'lower' else '='}{q / 2**20:.2f} MiB")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("isolated burst volume V (MiB)")
    ax.set_ylabel("T_iss (us)")
    ax.set_title("(c) isolated bursts: capacity knee")
    ax.legend(fontsize=6)


def panel_zero_gap(ax, doc, colors):
    R = (doc.get("model") or {}).get("R_Bps")
    by_k = {}
    for p in doc["points"]:
        s = spec(p)
        if not p.get("skipped") and s["suite"] == "periodic" and s["G_s"] == 0:
            by_k.setdefault(s["K"], []).append(p)
    vmax = 0
    for k, pts in sorted(by_k.items()):
        v = [spec(p)["K"] * spec(p)["B_bytes"] for p in pts]
        vmax = max(vmax, max(v))
        pts.sort(key=lambda p: spec(p)["B_bytes"])
        v = [spec(p)["K"] * spec(p)["B_bytes"] for p in pts]
        ax.errorbar([x / 2**20 for x in v], [med(p, "period_s") * 1e6 for p in pts], yerr=yerr(pts, "period_s", 1e6),
                    fmt="o", ms=3, color=colors[k], ecolor=colors[k], elinewidth=0.8, capsize=1.5, label=f"K={k}")
    if R and vmax:
        xs = [vmax * i / 100 for i in range(101)]
        ax.plot([x / 2**20 for x in xs], [x / R * 1e6 for x in xs], "-", lw=1, color="black",
                label=f"V/R, R={R / 1e9:.1f} GB/s")
    ax.set_xlabel("aggregate burst volume V (MiB)")
    ax.set_ylabel("zero-gap T_period (us)")
    ax.set_title("(d) drain rate across K")
    ax.legend(fontsize=6)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("calibration")
    ap.add_argument("--out", default=None, help="PNG path (default: beside the input)")
    args = ap.parse_args()
    doc = load(args.calibration)
    out = output_path(TOOL, args.out, [args.calibration], default_from=args.calibration)
    global plt
    plt = pyplot(TOOL)
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    colors = k_colors(doc)
    panel_gap(axes[0][0], doc, "issue_time_s", "(a) issue time vs gap", colors)
    panel_gap(axes[0][1], doc, "period_s", "(b) period vs gap: max law", colors)
    panel_isolated(axes[1][0], doc, colors)
    panel_zero_gap(axes[1][1], doc, colors)
    dev = ", ".join(d.get("name", "?") for d in doc.get("meta", {}).get("devices", [])) or doc["meta"].get("backend", "")
    # The file's name only: an absolute path says where the plot was made, not what it shows.
    fig.suptitle(f"X-Stage calibration: {dev}  ({os.path.basename(args.calibration)}); "
                 "error bars p10-p90 of the repetitions", fontsize=9)
    fig.tight_layout()
    save(TOOL, fig, out, 110)
    print(out)


if __name__ == "__main__":
    run(TOOL, main, EXPECTED)
