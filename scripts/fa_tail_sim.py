#!/usr/bin/env python3
"""Idle tail of the FlashAttention dynamic tile scheduler, simulated
(docs/lab-notes/2026-12-02-fa-a2a-sessions.md, K/V clusters: where 8K goes).

N clusters (or CTAs) share U equal units; each starts with unit c, and draws its next unit from one counter
at a time inside its current unit: --draw-at 0 draws as the unit starts (the kernel's one-unit lookahead),
0.9 when 90% of it is done. A cluster's time per unit is its speed x (1 + N(0, --noise)); speeds are uniform
in 1 +- --spread, and --slow of them are --slow-factor slower still (assumed, chosen near the measured
median / slowest-CTA sigma of results/h200/archive/2026-12-02-066cda0/fa_a2a-kv-cluster-30). Prints, per draw point, the mean
span in units and the idle tail (1 - mean CTA busy time / span) over --trials seeded trials.
Defaults: the 8K point with clusters of 2 (66 clusters, 256 units).
Usage: python3 scripts/fa_tail_sim.py [--clusters 66] [--units 256] [--draw-at 0 0.5 0.9] [--trials 200]
"""
import argparse
import heapq
import random
import statistics
import sys


def simulate(clusters, units, draw_at, rnd, spread, slow, slow_factor, noise):
    speed = [1 + rnd.uniform(-spread, spread) for _ in range(clusters)]
    for c in rnd.sample(range(clusters), min(slow, clusters)):
        speed[c] *= slow_factor
    unit_time = lambda c: speed[c] * max(0.0, 1 + rnd.gauss(0, noise))
    current = []  # (start, duration) of each cluster's current unit
    events = []   # (time of the cluster's next draw, cluster)
    for c in range(clusters):
        d = unit_time(c)
        current.append((0.0, d))
        heapq.heappush(events, (draw_at * d, c))
    next_unit, finish = min(clusters, units), [0.0] * clusters
    while events:
        _, c = heapq.heappop(events)
        start, d = current[c]
        if next_unit < units:
            next_unit += 1
            d2 = unit_time(c)
            current[c] = (start + d, d2)
            heapq.heappush(events, (start + d + draw_at * d2, c))
        else:
            finish[c] = start + d
    span = max(finish)
    return span, 1 - statistics.mean(finish) / span


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", type=int, default=66)
    ap.add_argument("--units", type=int, default=256)
    ap.add_argument("--draw-at", type=float, nargs="+", default=[0.0, 0.5, 0.75, 0.9])
    ap.add_argument("--spread", type=float, default=0.06)
    ap.add_argument("--slow", type=int, default=6)
    ap.add_argument("--slow-factor", type=float, default=1.12)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--trials", type=int, default=200)
    a = ap.parse_args(argv)
    if a.clusters < 1 or a.units < a.clusters or a.trials < 1 or any(not 0 <= x < 1 for x in a.draw_at):
        print("fa_tail_sim: need clusters >= 1, units >= clusters, trials >= 1, 0 <= draw-at < 1", file=sys.stderr)
        return 2
    print(f"{a.clusters} clusters, {a.units} units ({a.units / a.clusters:.2f} per cluster), {a.trials} trials")
    for draw_at in a.draw_at:
        runs = [simulate(a.clusters, a.units, draw_at, random.Random(seed), a.spread, a.slow, a.slow_factor, a.noise)
                for seed in range(a.trials)]
        print(f"draw at {draw_at:.2f} of the unit: span {statistics.mean(r[0] for r in runs):.3f} units, "
              f"idle tail {statistics.mean(r[1] for r in runs):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
