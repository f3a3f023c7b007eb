#!/usr/bin/env python3
"""Plots of an `xstage-bench megamoe` result file (post-processing only; never needed to build or test).

Panels: (a) per-launch time of every variant per point (host and local), (b) interleaved-over-wave speedup
per point with the local control beside host, (c) a tile timeline of CTA 0 (Fig. 9 analogue: mainloops,
storer spans and MMA-side waits) for expert-wave and interleaved of one point, (d) L2 mainloop and T_RS
medians per variant (where the drain cost lands).
Usage: python3 scripts/plot_megamoe.py RESULT.json [--out FILE.png] [--timeline-point N]
"""
import argparse
import sys

from plot_io import fail, load_result, output_path, pyplot, run, save

TOOL = "plot_megamoe"
EXPECTED = "a result file written by xstage-bench megamoe"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--out", default=None)
    ap.add_argument("--timeline-point", type=int, default=0, help="index of the point whose timeline is drawn")
    a = ap.parse_args()
    doc = load_result(TOOL, a.result, EXPECTED)
    out = output_path(TOOL, a.out, [a.result], default_from=a.result)
    pts = [p for p in doc["points"] if isinstance(p, dict) and p.get("suite") == "megamoe" and p.get("status") == "ok"]
    if not pts:
        fail(TOOL, f"no measured megamoe point (suite megamoe, status ok) in {a.result}; expected " + EXPECTED)
    plt = pyplot(TOOL)
    label = [f"{p['axes']['precision']} K{p['axes']['K_SM']} {p['axes']['target']}" for p in pts]
    variants = ["expert_wave", "interleaved", "serial", "expert_wave_cc", "interleaved_cc", "unfused"]
    fig, ax = plt.subplots(2, 2, figsize=(15, 10))
    w = 0.13
    for i, v in enumerate(variants):
        ax[0, 0].bar([x + (i - 2.5) * w for x in range(len(pts))],
                     [p["variants"][v]["median"] * 1e3 for p in pts], w, label=v)
    ax[0, 0].set_xticks(range(len(pts)))
    ax[0, 0].set_xticklabels(label, rotation=30, ha="right", fontsize=8)
    ax[0, 0].set_ylabel("ms per launch (median)")
    ax[0, 0].set_title("(a) variants")
    ax[0, 0].legend(fontsize=7)
    sp = [p["extra"]["speedup_interleaved_vs_wave"] for p in pts]
    ax[0, 1].bar(range(len(pts)), [s["median"] for s in sp],
                 yerr=[[s["median"] - s["p10"] for s in sp], [s["p90"] - s["median"] for s in sp]],
                 color=["tab:red" if p["axes"]["target"] != "local" else "tab:gray" for p in pts])
    ax[0, 1].axhline(1.0, color="k", lw=0.8)
    ax[0, 1].set_xticks(range(len(pts)))
    ax[0, 1].set_xticklabels(label, rotation=30, ha="right", fontsize=8)
    ax[0, 1].set_ylabel("expert-wave / interleaved (same round)")
    ax[0, 1].set_title("(b) speedup of interleaving (gray: local control)")
    tp = pts[min(a.timeline_point, len(pts) - 1)]
    for row, v in enumerate(["expert_wave", "interleaved"]):
        tl = tp["extra"]["variants"][v]["tiles"]["timeline_cta0"]
        for e in tl:
            t0 = e["start_s"] * 1e6
            y = row * 3
            ax[1, 0].barh(y, e["mainloop_s"] * 1e6, left=t0, color="tab:red" if e["l2"] else "tab:blue", height=0.8)
            ax[1, 0].barh(y + 1, e["store_span_s"] * 1e6, left=t0 + e["mainloop_s"] * 1e6, color="tab:orange", height=0.8)
            if e["staging_wait_s"] > 0:
                ax[1, 0].barh(y + 1.8, e["staging_wait_s"] * 1e6, left=t0 + e["mainloop_s"] * 1e6, color="k", height=0.3)
    ax[1, 0].set_yticks([0, 1, 3, 4])
    ax[1, 0].set_yticklabels(["wave: mainloop", "wave: T_RS", "interleaved: mainloop", "interleaved: T_RS"], fontsize=8)
    ax[1, 0].set_xlabel("us since CTA 0's first tile (blue L1, red L2, orange storer span, black staging wait)")
    ax[1, 0].set_title(f"(c) CTA 0 timeline, {label[min(a.timeline_point, len(pts) - 1)]}")
    for i, v in enumerate(["expert_wave", "interleaved", "expert_wave_cc", "interleaved_cc"]):
        ax[1, 1].bar([x + (i - 1.5) * 0.2 for x in range(len(pts))],
                     [p["extra"]["variants"][v]["tiles"]["l2_mainloop_median_s"] * 1e6 for p in pts], 0.2, label=f"{v}: L2 mainloop")
        ax[1, 1].scatter([x + (i - 1.5) * 0.2 for x in range(len(pts))],
                         [p["extra"]["variants"][v]["tiles"]["l2_store_span_median_s"] * 1e6 for p in pts],
                         color="k", marker="_", s=80, zorder=3)
    ax[1, 1].set_xticks(range(len(pts)))
    ax[1, 1].set_xticklabels(label, rotation=30, ha="right", fontsize=8)
    ax[1, 1].set_ylabel("us (median over tiles); black dash: T_RS")
    ax[1, 1].set_title("(d) L2 mainloop and storer span T_RS per variant")
    ax[1, 1].legend(fontsize=7)
    fig.suptitle(f"megamoe {pts[0]['axes']['shape']} T={pts[0]['axes']['T']} b_n={pts[0]['axes']['block_n']} "
                 f"({doc.get('meta', {}).get('git_sha', '?')[:7]})")
    fig.tight_layout()
    save(TOOL, fig, out, 90)
    print("plot: " + out)
    return 0


if __name__ == "__main__":
    run(TOOL, main, EXPECTED)
