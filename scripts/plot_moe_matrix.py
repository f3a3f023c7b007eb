#!/usr/bin/env python3
"""Figures of issue 12's megamoe matrix from result files (post-processing; needs matplotlib: run it with
/usr/bin/python3 where the default python3 has none). Headless (Agg).

Writes into --out-dir (prefix --prefix, default megamoe-matrix):
  <prefix>-fig8-speedup.png   paired interleaved/wave speedup by shape, precision and routing, one panel per
                              T: host K_SM 66 bars (p10..p90 whiskers), local control and host K_SM 132 markers
  <prefix>-fig10-trs.png      T_RS wave vs interleaved: per-point medians with p90 whiskers, and the sampled
                              CTA-0 timeline's Linear-2 store spans pooled per schedule
  <prefix>-fig9-timeline.png  CTA 0's tile timeline of the Table 2 point (--timeline-shape/--timeline-precision,
                              skewed, T 6976, host K_SM 66), expert-wave above interleaved
  <prefix>-table2-stall.png   eq. 15 predicted vs measured staging wait per CTA (skewed, T 6976, host K_SM 66)
  <prefix>-dsweep.png         interleaved time, median T_RS and L2 spin vs D, eq. 16 D_knee marked
A panel whose data are absent says so instead of drawing. Points are chosen as in moe_matrix_report.py.
Usage: /usr/bin/python3 scripts/plot_moe_matrix.py RESULT.json [...] --out-dir DIR [--block-n 128]
Exit codes: 0 written; 2 bad usage or input; 77 matplotlib not installed.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from moe_matrix import mechanism  # noqa: E402
from plot_io import output_path  # noqa: E402
from moe_matrix.analysis import speedup_of  # noqa: E402
from moe_matrix.points import (PRECISIONS, ROUTINGS, SHAPES, TOKENS, InputError, get, load_points,  # noqa: E402
                               select, status_of)

SCHEDULES = ("expert_wave", "interleaved")
COMBOS = [(p, r) for p in PRECISIONS for r in ROUTINGS]
COLORS = {("bf16", "balanced"): "tab:blue", ("bf16", "skewed"): "tab:cyan", ("fp8", "balanced"): "tab:red",
          ("fp8", "skewed"): "tab:orange"}


def absent(ax, what):
    ax.text(0.5, 0.5, f"{what}: not measured", ha="center", va="center", transform=ax.transAxes, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def ok_point(chosen, slot):
    rec = chosen.get(slot)
    return rec["point"] if rec is not None and status_of(rec["point"]) == "ok" else None


def fig8(plt, chosen, path):
    fig, axes = plt.subplots(len(TOKENS), 1, figsize=(13, 3.6 * len(TOKENS)), squeeze=False)
    w = 0.8 / len(COMBOS)
    for row, tokens in enumerate(TOKENS):
        ax, drawn = axes[row][0], False
        for ci, (prec, routing) in enumerate(COMBOS):
            for si, shape in enumerate(SHAPES):
                x = si + (ci - (len(COMBOS) - 1) / 2) * w
                p = ok_point(chosen, ("host", 66, shape, prec, routing, tokens))
                s = speedup_of(p) if p else None
                if s:
                    err = [[s["median"] - s["p10"]], [s["p90"] - s["median"]]] if s["p10"] is not None and \
                        s["p90"] is not None else None
                    ax.bar(x, s["median"] - 1, w, bottom=1, yerr=err, color=COLORS[(prec, routing)],
                           label=f"host 66 {prec} {routing}" if si == 0 or not drawn else None)
                    drawn = True
                for target, k_sm, marker in (("local", 66, "_"), ("host", 132, "D")):
                    q = ok_point(chosen, (target, k_sm, shape, prec, routing, tokens))
                    sq = speedup_of(q) if q else None
                    if sq:
                        ax.plot(x, sq["median"], marker, ms=9 if marker == "_" else 4, mfc="none",
                                color="k" if target == "local" else "tab:purple")
        if not drawn:
            absent(ax, f"host K_SM 66, T {tokens}")
            continue
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(range(len(SHAPES)))
        ax.set_xticklabels(SHAPES)
        ax.set_ylabel("expert-wave / interleaved")
        ax.set_title(f"T = {tokens}: bars host K_SM 66 (p10..p90); black dash local control; purple diamond "
                     f"host K_SM 132", fontsize=9)
        handles, labels = ax.get_legend_handles_labels()
        uniq = dict(zip(labels, handles))
        ax.legend(uniq.values(), uniq.keys(), fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fig10(plt, chosen, path):
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(13, 5))
    pts = [(slot, p) for slot in sorted(chosen) for p in [ok_point(chosen, slot)] if p is not None]
    xs, ys, ex, ey, colors = [], [], [], [], []
    for slot, p in pts:
        tw = [mechanism.tile(p, "expert_wave", k) for k in ("l2_store_span_median_s", "l2_store_span_p90_s")]
        ti = [mechanism.tile(p, "interleaved", k) for k in ("l2_store_span_median_s", "l2_store_span_p90_s")]
        if tw[0] is None or ti[0] is None:
            continue
        xs.append(tw[0] * 1e6)
        ys.append(ti[0] * 1e6)
        ex.append((tw[1] - tw[0]) * 1e6 if tw[1] is not None else 0)
        ey.append((ti[1] - ti[0]) * 1e6 if ti[1] is not None else 0)
        colors.append("tab:red" if slot[0] == "host" else "tab:gray")
    if xs:
        a0.errorbar(xs, ys, xerr=[[0] * len(ex), ex], yerr=[[0] * len(ey), ey], fmt="none", ecolor="0.7", lw=0.6)
        a0.scatter(xs, ys, c=colors, s=14, zorder=3)
        hi = max(xs + ys) * 1.1
        a0.plot([0, hi], [0, hi], "k--", lw=0.8)
        a0.set_xlabel("expert-wave median T_RS (µs; whisker to p90)")
        a0.set_ylabel("interleaved median T_RS (µs)")
        a0.set_title("per point (red host, gray local)", fontsize=9)
    else:
        absent(a0, "T_RS medians")
    samples = {v: [] for v in SCHEDULES}
    for slot, p in pts:
        if slot[0] != "host":
            continue
        for v in SCHEDULES:
            for e in get(p, "extra", "variants", v, "tiles", "timeline_cta0") or []:
                if e.get("l2") and isinstance(e.get("store_span_s"), (int, float)):
                    samples[v].append(e["store_span_s"] * 1e6)
    if any(samples.values()):
        for v, color in zip(SCHEDULES, ("tab:red", "tab:green")):
            if samples[v]:
                a1.hist(samples[v], bins=40, alpha=0.5, color=color, label=f"{v} ({len(samples[v])} tiles)")
        a1.set_xlabel("Linear-2 tile store span T_RS (µs), CTA 0 timeline samples, host points")
        a1.set_ylabel("tiles")
        a1.legend(fontsize=8)
    else:
        absent(a1, "timeline samples")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def fig9(plt, chosen, path, shape, precision):
    fig, ax = plt.subplots(figsize=(14, 4))
    slot = ("host", 66, shape, precision, "skewed", 6976)
    p = ok_point(chosen, slot)
    timelines = {v: get(p, "extra", "variants", v, "tiles", "timeline_cta0") for v in SCHEDULES} if p else {}
    if not p or not any(timelines.values()):
        absent(ax, f"CTA 0 timeline of host K_SM 66 {shape} {precision} skewed T 6976")
    else:
        for row, v in enumerate(SCHEDULES):
            y = row * 3
            for e in timelines[v] or []:
                t0 = e["start_s"] * 1e6
                ax.barh(y, e["mainloop_s"] * 1e6, left=t0, color="tab:red" if e.get("l2") else "tab:blue", height=0.8)
                ax.barh(y + 1, e["store_span_s"] * 1e6, left=t0 + e["mainloop_s"] * 1e6, color="tab:orange",
                        height=0.8)
                if e.get("staging_wait_s", 0) > 0:
                    ax.barh(y + 1.8, e["staging_wait_s"] * 1e6, left=t0 + e["mainloop_s"] * 1e6, color="k",
                            height=0.3)
        ax.set_yticks([0, 1, 3, 4])
        ax.set_yticklabels(["wave: mainloop", "wave: T_RS", "interleaved: mainloop", "interleaved: T_RS"], fontsize=8)
        ax.set_xlabel("µs since CTA 0's first tile (blue L1, red L2, orange storer span, black staging wait)")
        ax.set_title(f"CTA 0 timeline, host K_SM 66 {shape} {precision} skewed T 6976", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def table2_plot(plt, chosen, path):
    t = mechanism.table2_section(chosen, 0.3)
    fig, ax = plt.subplots(figsize=(7, 6))
    rows = [r for r in t["rows"] if r["measured"]]
    cmap = plt.get_cmap("tab10")
    drawn = []
    for r in rows:
        color = cmap(SHAPES.index(r["shape"]))
        for v, marker in (("expert_wave", "o"), ("interleaved", "s")):
            pred, meas = r[v]["eq15_predicted_per_cta_s"], r[v]["eq15_measured_per_cta_s"]
            if pred is None or meas is None:
                continue
            ax.scatter(meas * 1e6, pred * 1e6, marker=marker, color=color,
                       facecolors=color if r["precision"] == "bf16" else "none",
                       label=r["shape"] if r["shape"] not in drawn else None)
            drawn.append(r["shape"])
    if not drawn:
        absent(ax, "Table 2 rows (skewed, T 6976, host K_SM 66)")
    else:
        lim = ax.get_xlim()[1], ax.get_ylim()[1]
        hi = max(lim)
        ax.plot([0, hi], [0, hi], "k--", lw=0.8)
        ax.set_xlabel("measured MMA-side staging wait per CTA (µs)")
        ax.set_ylabel("eq. 15 predicted stall per CTA (µs)")
        ax.set_title("circles expert-wave, squares interleaved; filled bf16, hollow fp8", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def dsweep_plot(plt, records, path):
    sweeps = mechanism.dsweep_section(records, 0.02)["sweeps"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    if not sweeps:
        for ax in axes:
            absent(ax, "D sweep")
    for s in sweeps:
        ds = [r["D"] for r in s["rows"]]
        line = axes[0].plot(ds, [r["time_median_s"] * 1e3 for r in s["rows"]], "o-", label=s["config"])[0]
        for ax, key in ((axes[1], "trs_median_s"), (axes[2], "l2_spin_per_cta_s")):
            vals = [(d, r[key]) for d, r in zip(ds, s["rows"]) if r[key] is not None]
            if vals:
                ax.plot([d for d, _ in vals], [x * 1e6 for _, x in vals], "o-", color=line.get_color())
        if s["D_knee"] is not None:
            for ax in axes:
                ax.axvline(s["D_knee"], color=line.get_color(), ls=":", lw=1)
    if sweeps:
        for ax, label in zip(axes, ("interleaved time (ms, median)", "median T_RS (µs)", "L2 dependency spin per CTA (µs)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("row lead D (dotted: eq. 16 D_knee)")
            ax.set_ylabel(label)
        axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--prefix", default="megamoe-matrix")
    ap.add_argument("--block-n", type=int, default=128)
    ap.add_argument("--timeline-shape", default="dsv4_flash", choices=SHAPES)
    ap.add_argument("--timeline-precision", default="bf16", choices=PRECISIONS)
    a = ap.parse_args(argv)
    if not os.path.isdir(a.out_dir):
        print(f"plot_moe_matrix: --out-dir {a.out_dir} is not a directory", file=sys.stderr)
        return 2
    try:
        records = load_points(a.results)
    except InputError as e:
        print(f"plot_moe_matrix: {e}", file=sys.stderr)
        return 2
    if not records:
        print("plot_moe_matrix: no megamoe point in " + ", ".join(a.results), file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_moe_matrix: matplotlib is not installed (try /usr/bin/python3)", file=sys.stderr)
        return 77
    chosen, _, _ = select(records, a.block_n)
    names = ("fig8-speedup", "fig10-trs", "fig9-timeline", "table2-stall", "dsweep")
    # Every output checked before the first is written: never an input, a link or a non-file (plot_io.output_path).
    paths = {n: output_path("plot_moe_matrix", os.path.join(a.out_dir, f"{a.prefix}-{n}.png"), a.results)
             for n in names}
    out = lambda name: paths[name]  # noqa: E731
    fig8(plt, chosen, out("fig8-speedup"))
    fig10(plt, chosen, out("fig10-trs"))
    fig9(plt, chosen, out("fig9-timeline"), a.timeline_shape, a.timeline_precision)
    table2_plot(plt, chosen, out("table2-stall"))
    dsweep_plot(plt, records, out("dsweep"))
    for name in names:
        print("plot: " + out(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
