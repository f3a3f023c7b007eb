#!/usr/bin/env python3
"""Fig. 11 of the paper from an `xstage-bench fa_a2a` result file: the sender-visible residual
E_res(M)/T_FA of the X-Stage-fused kernel (at the sender-side boundary where the file has it, and at
remote-visible completion) and of the completion-coupled counterfactual, measured, beside
the two prior predictions (X-Stage: E_drain; completion-coupled: E_cc) from the calibration, per target.

Usage: plot_fa_a2a.py RESULT.json [--out FIG.png]   (matplotlib; post-processing only)
"""
import argparse
import os

from plot_io import fail, load_result, output_path, pyplot, run, save

TOOL = "plot_fa_a2a"
EXPECTED = "a result file written by xstage-bench fa_a2a"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    doc = load_result(TOOL, args.result, EXPECTED)
    out = output_path(TOOL, args.out, [args.result], default_from=args.result)
    copies = doc.get("extra", {}).get("fa_a2a") if isinstance(doc.get("extra"), dict) else None
    if not isinstance(copies, list):
        fail(TOOL, f"{args.result} has no fa_a2a points (extra.fa_a2a); expected " + EXPECTED)
    pts = [p for p in copies if isinstance(p, dict) and p.get("status") == "ok"]
    if not pts:
        fail(TOOL, f"{args.result}: no measured fa_a2a point (status ok)")
    plt = pyplot(TOOL)
    # One panel per (target, heads): a heads sweep must not draw two curves in one colour.
    panels = sorted({(p["spec"]["target"], p["spec"].get("heads")) for p in pts}, key=lambda th: (th[0], th[1] or 0))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    fused_color, cc_color = "tab:blue", "tab:orange"  # a measurement and its prediction share a colour
    for ax, (target, heads) in zip(axes[0], panels):
        tp = sorted((p for p in pts if p["spec"]["target"] == target and p["spec"].get("heads") == heads),
                    key=lambda p: p["spec"]["M"])
        m = [p["spec"]["M"] for p in tp]
        tfa = [p["measured"]["T_FA_s"]["median"] for p in tp]

        def series(key, paired_key):
            """Median residual in % of T_FA, with the paired p10-p90 as error bars where stored."""
            y = [100 * p["measured"][key] / t for p, t in zip(tp, tfa)]
            lo, hi = [], []
            for p, t, v in zip(tp, tfa, y):
                d = p["measured"].get(paired_key) or {}
                if d.get("p10") is None or d.get("p90") is None:
                    lo.append(0.0)
                    hi.append(0.0)
                else:
                    lo.append(max(v - 100 * d["p10"] / t, 0.0))
                    hi.append(max(100 * d["p90"] / t - v, 0.0))
            return y, [lo, hi]

        sender = [(p["measured"].get("hiding") or {}).get("sender_side") for p in tp]
        if all(sender):  # since issue 13: the sender-side boundary (paper section 5.1) first, completion beside
            y = [100 * h["E_res_s"] / t for h, t in zip(sender, tfa)]
            err = [[max(v - 100 * h["E_res_p10_s"] / t, 0.0) for h, t, v in zip(sender, tfa, y)],
                   [max(100 * h["E_res_p90_s"] / t - v, 0.0) for h, t, v in zip(sender, tfa, y)]]
            ax.errorbar(m, y, yerr=err, fmt="o-", color=fused_color, ecolor=fused_color, capsize=2,
                        label="X-Stage-fused, E_res at the sender-side boundary (p10-p90)")
            y, err = series("E_res_s", "E_res_paired_s")
            ax.errorbar(m, y, yerr=err, fmt="o:", color=fused_color, ecolor=fused_color, capsize=2, alpha=0.5,
                        label="X-Stage-fused, E_res at remote-visible completion")
        else:
            y, err = series("E_res_s", "E_res_paired_s")
            ax.errorbar(m, y, yerr=err, fmt="o-", color=fused_color, ecolor=fused_color, capsize=2,
                        label="X-Stage-fused, measured E_res (p10-p90)")
        # The clock-normalized sender-side E_res (each launch in its own SM cycles: what the local bar judges) and
        # where it went: the Q-loop growth on the critical path (measured.sender_side.critical_path, files from
        # the sixth session of 2026-12-02 on), where the file has them.
        ss = [p["measured"].get("sender_side") or {} for p in tp]
        cn = [x.get("clock_normalized", {}).get("E_res_paired_s") for x in ss]
        cn_tfa = [(x.get("clock_normalized", {}).get("T_FA_s") or {}).get("median") for x in ss]
        if all(cn) and all(cn_tfa):  # in % of the clock-normalized T_FA, as the README quotes it
            y = [100 * c["median"] / t for c, t in zip(cn, cn_tfa)]
            err = [[max(v - 100 * c["p10"] / t, 0.0) for c, t, v in zip(cn, cn_tfa, y)],
                   [max(100 * c["p90"] / t - v, 0.0) for c, t, v in zip(cn, cn_tfa, y)]]
            ax.errorbar(m, y, yerr=err, fmt="d-", color="tab:purple", ecolor="tab:purple", capsize=2, ms=4,
                        label="X-Stage-fused, E_res sender side, clock-normalized (p10-p90)")
        cp = [(x.get("critical_path") or {}).get("qloop_paired_s") for x in ss]
        if all(cp):
            ax.plot(m, [100 * c["median"] / t for c, t in zip(cp, tfa)], "x--", color="tab:green",
                    label="measured: Q-loop growth on the critical path (compute under store load)")
        y, err = series("E_cc_meas_s", "E_cc_paired_s")
        ax.errorbar(m, y, yerr=err, fmt="s-", color=cc_color, ecolor=cc_color, capsize=2,
                    label="completion-coupled, measured T_cc - T_FA (p10-p90)")
        if all("prediction" in p for p in tp):
            ax.plot(m, [100 * p["prediction"]["E_drain_s"] / t for p, t in zip(tp, tfa)], "--", color=fused_color,
                    label="prediction: X-Stage E_drain (eq. 18-19)")
            ax.plot(m, [100 * p["prediction"]["E_cc_s"] / t for p, t in zip(tp, tfa)], ":", color=cc_color,
                    label="prediction: completion-coupled E_cc (eq. 17)")
            # The phase-aware case's (each CTA issues beside its cluster) where the file has it, else the
            # aligned wave's E_issue (files before commit f385b4c).
            phase = [p["prediction"].get("phase_aware", {}).get("E_res_pred_capacity_met_s") for p in tp]
            if all(x is not None for x in phase):
                ax.plot(m, [100 * x / t for x, t in zip(phase, tfa)], "-.", color=fused_color,
                        label="prediction: E_res were Q not binding (phase-aware E_issue + E_load, sigma applied)")
            elif all(p["prediction"].get("E_res_pred_capacity_met_s") is not None for p in tp):
                ax.plot(m, [100 * p["prediction"]["E_res_pred_capacity_met_s"] / t for p, t in zip(tp, tfa)], "-.",
                        color=fused_color, label="prediction: E_res were Q not binding (E_issue + E_load, sigma "
                                                 "under load)")
            mub = tp[0]["prediction"]["M_ub_tokens"]
            ax.axvline(mub, color="gray", lw=0.8)
            ax.text(mub, ax.get_ylim()[1] * 0.9, f" M_ub*={mub:.0f}", fontsize=7)
        ax.axhspan(-2, 2, color="gray", alpha=0.12, label="+-2% of T_FA")
        ax.axhspan(-0.5, 0.5, color="gray", alpha=0.25, label="+-0.5% of T_FA")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length M (tokens)")
        ax.set_ylabel("residual / T_FA (%)")
        ax.set_title(f"fa_a2a, target {target}" + (f", {heads} heads" if heads is not None else ""))
        ax.legend(fontsize=6, loc="upper right")
    dev = ", ".join(d.get("name", "?") for d in doc.get("meta", {}).get("devices", []))
    # The file's name only: an absolute path says where the plot was made, not what it shows.
    fig.suptitle(f"FlashAttention-A2A residual over FA-only ({dev}; {os.path.basename(args.result)})", fontsize=9)
    fig.tight_layout()
    save(TOOL, fig, out, 110)
    print(out)


if __name__ == "__main__":
    run(TOOL, main, EXPECTED)
