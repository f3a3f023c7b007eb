#!/usr/bin/env python3
"""Print the FA-only speed table of one or more `xstage-bench fa_a2a` result files (after
scripts/fa_attach_baseline.py), one row per point, as Markdown:

  file | M | kv cluster | T_FA (graph, median us) | cuDNN SDPA (us) | FA/cuDNN speed | sender-side span (us) |
  sigma per KV tile, median / slowest CTA (us, lone launch) | back-to-back idle tail |
  cuDNN cycles / FA-only cycles, both clocks probed after their batches (vs_cudnn.fa_over_cudnn_cycles_probed)

T_FA is variants.fa.median (CUDA events around graphs of --launches-per-graph launches, per launch);
speed = extra.vs_cudnn.fa_over_cudnn_speed; the sender-side span is variants.fa_sender_side.median
(instrumented launches, first tile start to last store issued); sigma and the idle tail come from
extra.measured.timeline. Usage: python3 scripts/fa_speed_table.py RESULT.json [RESULT.json ...]
Exit codes: 0 printed, 2 unreadable file or not an fa_a2a result.
"""
import json
import os
import sys


def rows(path):
    with open(path) as f:
        doc = json.load(f)
    for p in doc["points"]:
        if p.get("suite") != "fa_a2a" or p.get("status") != "ok":
            continue
        v, x = p["variants"], p["extra"]
        tl = x["measured"]["timeline"]
        speed = x.get("vs_cudnn", {}).get("fa_over_cudnn_speed")
        cudnn = x.get("baseline_sdpa_cudnn", {}).get("median_s")
        probed = x.get("vs_cudnn", {}).get("fa_over_cudnn_cycles_probed")
        yield "| {} | {} | {} | {:.1f} | {} | {} | {:.1f} | {:.3f} / {:.3f} | {:.1%} | {} |".format(
            os.path.basename(path), p["axes"]["M"], p["axes"].get("fa_kv_cluster", 1), v["fa"]["median"] * 1e6,
            f"{cudnn * 1e6:.1f}" if cudnn else "-", f"{speed:.3f}" if speed else "-",
            v["fa_sender_side"]["median"] * 1e6, tl["fa_only"]["cta_sigma_s_per_kv_tile"]["median"] * 1e6,
            tl["fa_only"]["cta_sigma_s_per_kv_tile"]["max"] * 1e6,
            tl["fa_only_back_to_back"]["tail_idle_fraction"]["median"], f"{probed:.3f}" if probed else "-")


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    print("| file | M | kv cluster | T_FA graph (us) | cuDNN (us) | FA/cuDNN | sender span (us) "
          "| sigma/KV tile median / max (us) | b2b idle tail | cycles ratio, both probed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    try:
        for path in argv:
            for row in rows(path):
                print(row)
    except (OSError, ValueError, KeyError) as e:
        print(f"fa_speed_table: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
