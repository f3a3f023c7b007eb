#!/usr/bin/env python3
"""Attach the cuDNN SDPA baseline to an `xstage-bench fa_a2a` result file, in the same device call.

For every measured fa_a2a point of points[] (suite fa_a2a, status ok) it times PyTorch's
scaled_dot_product_attention with the cuDNN backend pinned (torch.nn.attention.sdpa_kernel(
SDPBackend.CUDNN_ATTENTION), no fallback) on the point's shape: bf16, non-causal, batch 1, the point's
M (axes.M), heads (axes.heads) and head dim (axes.head_dim), on the point's GPU (axes.device, default 0).
Two input layouts are timed, [1, H, M, d] contiguous ("bhsd") and [1, M, H, d] viewed as [1, H, M, d]
("bshd"); the faster one is the baseline, both are recorded. Each sample is CUDA-event time of
--launches back-to-back calls / --launches (like the bench's graphs of back-to-back launches), after
--warmup calls; --iters samples, median reported.

Per point it writes
  extra.baseline_sdpa_cudnn = {backend, layout, median_s, p10_s, p90_s, samples_s, tflops, layouts: {..},
                               torch, cudnn, device_name, launches, iters}
  extra.vs_cudnn = {fa_over_cudnn_speed: T_cuDNN / T_FA (>= 1: FA-only at least as fast; = FA TFLOPS /
                    cuDNN TFLOPS), fa_heads_major_over_cudnn_speed (when that variant was timed),
                    fa_alone_over_cudnn_speed (FA-only timed alone like cuDNN here: back-to-back replays with
                    nothing in between, the same sustained-load regime; when timed)}
with T_FA = variants.fa.median (the layout-matched FA-only, remote-visible boundary: CUDA events, as here).
Points with the same (M, heads, head dim, device) share one measurement. The file is rewritten atomically.

SM clock under the baseline's load (the power cap moves it; issue 13): after the timed samples of each
layout, --clock-probes more batches of --launches calls, each followed by two spin kernels
(torch.cuda._sleep, which spins on the SM cycle counter) of 20,000 and 120,000 cycles, event-timed, all
enqueued behind the batch before it ends (so neither spin waits for the host to submit it); the clock is
100,000 cycles over the difference of their times (the launch overhead cancels). Recorded as
layouts.<name>.sm_clock_hz {median, p10, p90} and, for the chosen layout, cycles_per_launch = median_s x
that clock; idle_sm_clock_hz is the same probe before any load (a check of the method: the idle clock).
vs_cudnn.fa_over_cudnn_cycles = cuDNN cycles per launch / FA-only cycles per launch, FA-only's at its own
launches' median clock (measured.sender_side.clock_normalized.clock_fa_hz): the speed ratio with the
clock taken out. vs_cudnn.fa_over_cudnn_cycles_probed: the same with FA-only's clock probed exactly as
cuDNN's (the bench's measured.clock_probe_fa_hz: the same two spins after its own batches of launches), so
both clocks share the method and its bias. --clock-probes 0: no probe.

Exit codes: 0 attached (or nothing to attach: no measured fa_a2a point; file unchanged), 2 bad usage or a
file that is not an xstage result with points[], 3 the cuDNN backend failed on a shape, 77 no PyTorch, no
CUDA device visible to it or no cuDNN SDPA backend (file unchanged).
Usage: python3 scripts/fa_attach_baseline.py RESULT.json [--iters 20] [--warmup 5] [--launches 5]
       [--clock-probes 10]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

EXIT_OK, EXIT_USAGE, EXIT_DEVICE, EXIT_NO_GPU = 0, 2, 3, 77


class Unavailable(Exception):
    """No PyTorch / CUDA device / cuDNN SDPA here: exit 77, file unchanged."""


class BackendFailed(Exception):
    """The pinned cuDNN backend refused or failed a shape: exit 3, file unchanged."""


def quantile(sorted_values, q):
    """Linear interpolation, as common/stats does."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(samples_s):
    s = sorted(samples_s)
    return {"median_s": quantile(s, 0.5), "p10_s": quantile(s, 0.1), "p90_s": quantile(s, 0.9),
            "samples_s": list(samples_s)}


PROBE_SHORT_CYCLES, PROBE_LONG_CYCLES = 20000, 120000


def probe_sm_clock_hz(torch):
    """One SM-clock reading: two event-timed spins of known cycle counts, enqueued behind whatever the stream
    is running (the caller's batch, or a filler spin when idle) so that no event waits for the host; the
    kernel-to-kernel overhead cancels in the difference."""
    events = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    events[0].record()
    torch.cuda._sleep(PROBE_SHORT_CYCLES)
    events[1].record()
    torch.cuda._sleep(PROBE_LONG_CYCLES)
    events[2].record()
    events[2].synchronize()
    dt = events[1].elapsed_time(events[2]) * 1e-3 - events[0].elapsed_time(events[1]) * 1e-3
    return (PROBE_LONG_CYCLES - PROBE_SHORT_CYCLES) / dt if dt > 0 else None


def probe_idle_sm_clock_hz(torch):
    """The probe on an otherwise idle GPU: a 2 ms filler spin first keeps the host ahead of the GPU."""
    torch.cuda._sleep(4_000_000)
    return probe_sm_clock_hz(torch)


def clock_summary(readings):
    r = sorted(x for x in readings if x)
    if not r:
        return None
    return {"median": statistics.median(r), "p10": quantile(r, 0.1), "p90": quantile(r, 0.9), "n": len(r)}


def measure_cudnn_sdpa(m, heads, head_dim, device, iters, warmup, launches, clock_probes=0):
    """Times pinned cuDNN SDPA on one shape; returns the baseline dict (without the shape keys)."""
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        raise Unavailable(f"torch not importable ({e})")
    if not torch.cuda.is_available() or device >= torch.cuda.device_count():
        raise Unavailable(f"no CUDA device {device} visible to torch")
    if not hasattr(SDPBackend, "CUDNN_ATTENTION"):
        raise Unavailable(f"torch {torch.__version__} has no cuDNN SDPA backend")
    dev = torch.device("cuda", device)
    gen = torch.Generator(device=dev).manual_seed(1234 + m)
    flops = 4.0 * m * m * head_dim * heads
    layouts = {}
    idle_clock = None
    with torch.cuda.device(dev):
        if clock_probes > 0:
            idle_clock = clock_summary([probe_idle_sm_clock_hz(torch) for _ in range(3)])
        for name in ("bhsd", "bshd"):
            if name == "bhsd":
                q, k, v = (torch.randn((1, heads, m, head_dim), device=dev, dtype=torch.bfloat16, generator=gen)
                           for _ in range(3))
            else:
                q, k, v = (torch.randn((1, m, heads, head_dim), device=dev, dtype=torch.bfloat16,
                                       generator=gen).transpose(1, 2) for _ in range(3))
            try:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    for _ in range(warmup):
                        torch.nn.functional.scaled_dot_product_attention(q, k, v)
                    torch.cuda.synchronize(dev)
                    samples = []
                    for _ in range(iters):
                        start = torch.cuda.Event(enable_timing=True)
                        stop = torch.cuda.Event(enable_timing=True)
                        start.record()
                        for _ in range(launches):
                            torch.nn.functional.scaled_dot_product_attention(q, k, v)
                        stop.record()
                        stop.synchronize()
                        samples.append(start.elapsed_time(stop) * 1e-3 / launches)
                    readings = []
                    for _ in range(clock_probes):  # the clock right after a batch: the batch's power regime
                        for _ in range(launches):
                            torch.nn.functional.scaled_dot_product_attention(q, k, v)
                        readings.append(probe_sm_clock_hz(torch))
            except RuntimeError as e:
                raise BackendFailed(f"cuDNN SDPA {name} M={m} heads={heads} d={head_dim}: {str(e).splitlines()[0]}")
            layouts[name] = summary(samples)
            layouts[name]["tflops"] = flops / layouts[name]["median_s"] * 1e-12
            if clock_probes > 0:
                layouts[name]["sm_clock_hz"] = clock_summary(readings)
            del q, k, v
    best = min(layouts, key=lambda n: layouts[n]["median_s"])
    out = {"backend": "cudnn", "layout": best}
    out.update(layouts[best])
    if out.get("sm_clock_hz"):
        out["cycles_per_launch"] = out["median_s"] * out["sm_clock_hz"]["median"]
    if idle_clock:
        out["idle_sm_clock_hz"] = idle_clock
    out.update({"layouts": layouts, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                "device_name": torch.cuda.get_device_name(dev), "launches": launches, "iters": iters})
    return out


def fa_points(doc):
    """The measured fa_a2a points of a result document; ValueError when it is not a result with points[]."""
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
        raise ValueError("not an xstage result file: no points[] array")
    return [p for p in doc["points"]
            if isinstance(p, dict) and p.get("suite") == "fa_a2a" and p.get("status") == "ok"]


def attach(doc, measure):
    """Adds extra.baseline_sdpa_cudnn and extra.vs_cudnn to every measured fa_a2a point of `doc` in place.

    measure(m, heads, head_dim, device) -> baseline dict with median_s. Returns the number of points
    changed. Raises ValueError for a point without the axes or the fa variant it needs (nothing changed).
    """
    points = fa_points(doc)
    keys = []
    for i, p in enumerate(points):
        ax = p.get("axes", {})
        try:
            keys.append((int(ax["M"]), int(ax["heads"]), int(ax.get("head_dim", 128)), int(ax.get("device", 0))))
            float(p["variants"]["fa"]["median"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"fa_a2a point {i} ({p.get('id')}) lacks axes M/heads or variants.fa.median ({e})")
    cache = {}
    for key in keys:  # measure everything first: a failure leaves the document untouched
        if key not in cache:
            cache[key] = measure(*key)
    for p, key in zip(points, keys):
        base = cache[key]
        extra = p.setdefault("extra", {})
        extra["baseline_sdpa_cudnn"] = base
        ratios = {}
        t_base = base["median_s"]
        for variant, name in (("fa", "fa_over_cudnn_speed"), ("fa_heads_major", "fa_heads_major_over_cudnn_speed"),
                              ("fa_alone", "fa_alone_over_cudnn_speed")):
            t = p["variants"].get(variant, {}).get("median")
            if t and t > 0 and t_base > 0:
                ratios[name] = t_base / t
        fa_clock = (((extra.get("measured") or {}).get("sender_side") or {}).get("clock_normalized") or {}) \
            .get("clock_fa_hz", {}).get("median")
        t_fa = p["variants"]["fa"]["median"]
        if base.get("cycles_per_launch") and fa_clock and t_fa > 0:
            ratios["fa_over_cudnn_cycles"] = base["cycles_per_launch"] / (t_fa * fa_clock)
        # Both clocks by the same probe (the bench probes FA-only after its own batches: measured.clock_probe_fa_hz).
        fa_probe = ((extra.get("measured") or {}).get("clock_probe_fa_hz") or {}).get("median")
        if base.get("cycles_per_launch") and fa_probe and t_fa > 0:
            ratios["fa_over_cudnn_cycles_probed"] = base["cycles_per_launch"] / (t_fa * fa_probe)
        extra["vs_cudnn"] = ratios
    return len(points)


def write_atomically(path, doc):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)) or ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None, measure=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--clock-probes", type=int, default=10)
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    if args.iters < 1 or args.warmup < 0 or args.launches < 1 or args.clock_probes < 0:
        print("fa_attach_baseline: --iters and --launches must be >= 1, --warmup and --clock-probes >= 0",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        with open(args.result) as f:
            doc = json.load(f)
        points = fa_points(doc)
    except (OSError, ValueError) as e:
        print(f"fa_attach_baseline: {args.result}: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not points:
        print(f"fa_attach_baseline: {args.result}: no measured fa_a2a point; file unchanged")
        return EXIT_OK
    if measure is None:
        def measure(m, heads, head_dim, device):
            return measure_cudnn_sdpa(m, heads, head_dim, device, args.iters, args.warmup, args.launches,
                                      args.clock_probes)
    try:
        n = attach(doc, measure)
    except Unavailable as e:
        print(f"fa_attach_baseline: skipped, {e}; {args.result} unchanged", file=sys.stderr)
        return EXIT_NO_GPU
    except BackendFailed as e:
        print(f"fa_attach_baseline: {e}; {args.result} unchanged", file=sys.stderr)
        return EXIT_DEVICE
    except ValueError as e:
        print(f"fa_attach_baseline: {args.result}: {e}; file unchanged", file=sys.stderr)
        return EXIT_USAGE
    write_atomically(args.result, doc)
    for p in points:
        ax, ex = p["axes"], p["extra"]
        ratio = ex["vs_cudnn"].get("fa_over_cudnn_speed")
        print(f"{p['id']} M={ax['M']} heads={ax['heads']}: cuDNN SDPA {ex['baseline_sdpa_cudnn']['median_s'] * 1e6:.1f} us"
              f" ({ex['baseline_sdpa_cudnn']['layout']}), FA-only/cuDNN speed "
              + (f"{ratio:.3f}" if ratio is not None else "n/a"))
    print(f"wrote {args.result} ({n} points)")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
