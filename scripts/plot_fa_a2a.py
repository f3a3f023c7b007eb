#!/usr/bin/env python3
"""Fig. 11 of the paper from an `xstage-bench fa_a2a` result file: the sender-visible residual
E_res(M)/T_FA of the X-Stage-fused kernel and of the completion-coupled counterfactual, measured, beside
the two prior predictions (X-Stage: E_drain; completion-coupled: E_cc) from the calibration, per target.

Usage: plot_fa_a2a.py RESULT.json [--out FIG.png]   (matplotlib; post-processing only)
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    doc = json.load(open(args.result))
    pts = [p for p in doc.get("extra", {}).get("fa_a2a", []) if p.get("status") == "ok"]
    if not pts:
        sys.exit(f"{args.result}: no measured fa_a2a points")
    targets = sorted({p["spec"]["target"] for p in pts})
    fig, axes = plt.subplots(1, len(targets), figsize=(6 * len(targets), 4.5), squeeze=False)
    for ax, target in zip(axes[0], targets):
        tp = sorted((p for p in pts if p["spec"]["target"] == target), key=lambda p: p["spec"]["M"])
        m = [p["spec"]["M"] for p in tp]
        tfa = [p["measured"]["T_FA_s"]["median"] for p in tp]
        ax.plot(m, [100 * p["measured"]["E_res_s"] / t for p, t in zip(tp, tfa)], "o-", label="X-Stage-fused, measured E_res")
        ax.plot(m, [100 * p["measured"]["E_cc_meas_s"] / t for p, t in zip(tp, tfa)], "s-",
                label="completion-coupled, measured T_cc - T_FA")
        if all("prediction" in p for p in tp):
            ax.plot(m, [100 * p["prediction"]["E_drain_s"] / t for p, t in zip(tp, tfa)], "--",
                    label="prediction: X-Stage E_drain (eq. 18-19)")
            ax.plot(m, [100 * p["prediction"]["E_cc_s"] / t for p, t in zip(tp, tfa)], ":",
                    label="prediction: completion-coupled E_cc (eq. 17)")
            mub = tp[0]["prediction"]["M_ub_tokens"]
            ax.axvline(mub, color="gray", lw=0.8)
            ax.text(mub, ax.get_ylim()[1] * 0.9, f" M_ub*={mub:.0f}", fontsize=7)
        ax.axhspan(-2, 2, color="tab:blue", alpha=0.08, label="+-2% of T_FA")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length M (tokens)")
        ax.set_ylabel("residual / T_FA (%)")
        ax.set_title(f"fa_a2a, target {target}")
        ax.legend(fontsize=7)
    dev = ", ".join(d.get("name", "?") for d in doc.get("meta", {}).get("devices", []))
    fig.suptitle(f"FlashAttention-A2A sender-visible residual ({dev})", fontsize=9)
    fig.tight_layout()
    out = args.out or args.result.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
