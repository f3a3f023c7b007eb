"""The xstage contenders of fa_vs_cudnn.py: which FA launches its options ask for (names, option parsing) and the
descriptor each launches with (the ctypes mirror of src/xs/attention/run/fa_c_api.h). Pure: no torch, no GPU
(tests/scripts/test_fa_vs_cudnn.py checks it on the CPU)."""
import ctypes
from typing import NamedTuple

C_API_VERSION = 4
OUT_HEADS_MAJOR, OUT_ULYSSES = 0, 1  # XS_FA_OUT_*
KV_CLUSTER_SIZES = (1, 2)            # src/xs/kernels/attention/config.hpp kKvClusterSizes
MAX_TAIL_KV_SPLITS = 8               # kMaxTailKvSplits


class XsFaDesc(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("q", ctypes.c_void_p), ("k", ctypes.c_void_p), ("v", ctypes.c_void_p),
                ("out", ctypes.c_void_p), ("out_bytes", ctypes.c_uint64), ("seq_len", ctypes.c_int),
                ("num_heads", ctypes.c_int), ("head_dim", ctypes.c_int), ("out_layout", ctypes.c_int),
                ("num_ranks", ctypes.c_int), ("kv_cluster_size", ctypes.c_int), ("tile_scheduler", ctypes.c_int),
                ("num_ctas", ctypes.c_int), ("heads_per_band", ctypes.c_int), ("records", ctypes.c_void_p),
                ("records_bytes", ctypes.c_uint64), ("store_barrier", ctypes.c_int),
                ("tail_kv_splits", ctypes.c_int), ("tail_split_units", ctypes.c_int)]


class FaContender(NamedTuple):
    """One xstage FA launch timed against cuDNN: its name and the descriptor fields it sets."""
    name: str
    layout: int                  # OUT_ULYSSES (the bench's FA-only) or OUT_HEADS_MAJOR
    kv_cluster: int              # kv_cluster_size
    heads_per_band: int = 1      # 1: the kernel's m-block-fastest order; 0: auto bands of heads sized to L2
    records: bool = False        # instrumented: TileRecords written into a buffer of xs_fa_records_bytes
    store_barrier: bool = False  # the barrier after the stores that instrumented launches take, no records
    tail_kv_splits: int = 1      # 1: no split tail
    tail_split_units: int = 0    # 0: one per cluster of the grid
    num_ctas: int = 0            # the persistent grid: 0 one CTA per SM, else that many (a multiple of kv_cluster)


def desc_fields(c, q, k, v, out, out_bytes, seq_len, num_heads, head_dim, num_ranks):
    """The XsFaDesc fields of contender c on these tensors (device addresses), records off (set after sizing)."""
    return dict(version=C_API_VERSION, q=q, k=k, v=v, out=out, out_bytes=out_bytes, seq_len=seq_len,
                num_heads=num_heads, head_dim=head_dim, out_layout=c.layout, num_ranks=num_ranks,
                kv_cluster_size=c.kv_cluster, tile_scheduler=1, num_ctas=c.num_ctas, heads_per_band=c.heads_per_band,
                records=None, records_bytes=0, store_barrier=int(c.store_barrier), tail_kv_splits=c.tail_kv_splits,
                tail_split_units=c.tail_split_units)


def parse_int_list(text, what):
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{what}: '{text}' is not a comma-separated list of integers")
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"{what}: '{text}': give positive integers, e.g. 8192,16384")
    return values


# The options that list K/V cluster sizes of a kind of contender ('' for none, except --kv-clusters).
KV_OPTIONS = (("kv_clusters", "--kv-clusters"), ("heads_major_kv", "--heads-major-kv"),
              ("auto_band_kv", "--auto-band-kv"), ("records_kv", "--records-kv"),
              ("store_barrier_kv", "--store-barrier-kv"), ("tail_splits_kv", "--tail-splits-kv"),
              ("grid_kv", "--grid-kv"))


def parse_contender_options(args):
    """Turns args' contender options (argparse strings) into lists in place; ValueError naming the option."""
    for attr, flag in KV_OPTIONS:
        text = getattr(args, attr)
        kvs = parse_int_list(text, flag) if text or attr == "kv_clusters" else []
        if any(kv not in KV_CLUSTER_SIZES for kv in kvs):
            raise ValueError(f"{flag}: K/V cluster sizes 1 and 2 are built, got {kvs}")
        setattr(args, attr, kvs)
    try:
        args.tail_splits = [int(x) for x in args.tail_splits.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--tail-splits: '{args.tail_splits}' is not a comma-separated list of integers")
    if not args.tail_splits or any(not 1 <= s <= MAX_TAIL_KV_SPLITS for s in args.tail_splits):
        raise ValueError(f"--tail-splits: split counts 1 (off) to {MAX_TAIL_KV_SPLITS}, got {args.tail_splits}")
    if args.grid != 0 and not args.grid_kv:
        raise ValueError(f"--grid {args.grid}: give --grid-kv too (the K/V cluster sizes of the fa_u_kvN_gG contenders)")
    if args.grid <= 0 and args.grid_kv:
        raise ValueError(f"--grid: the persistent grid of the fa_u_kvN_gG contenders, a positive CTA count, got {args.grid}")
    if args.grid > 0 and any(args.grid % kv for kv in args.grid_kv):
        raise ValueError(f"--grid: {args.grid} CTAs is not a multiple of every --grid-kv cluster size {args.grid_kv}")
    if args.tail_split_units < 0:
        raise ValueError(f"--tail-split-units: 0 (one per cluster of the grid) or more, got {args.tail_split_units}")


def fa_contenders(args):
    """The FA contenders of parsed options, in a fixed order, each name once:
    fa_u_kvN, fa_u_kvN_auto, fa_hm_kvN, fa_u_kvN_rec, fa_u_kvN_sb, fa_u_kvN_tsS (fa_u_kvN_tsS_unitsU with
    --tail-split-units U > 0), fa_u_kvN_gG (--grid G)."""
    out = [FaContender(f"fa_u_kv{kv}", OUT_ULYSSES, kv) for kv in args.kv_clusters]
    out += [FaContender(f"fa_u_kv{kv}_auto", OUT_ULYSSES, kv, heads_per_band=0) for kv in args.auto_band_kv]
    out += [FaContender(f"fa_hm_kv{kv}", OUT_HEADS_MAJOR, kv) for kv in args.heads_major_kv]
    out += [FaContender(f"fa_u_kv{kv}_rec", OUT_ULYSSES, kv, records=True) for kv in args.records_kv]
    out += [FaContender(f"fa_u_kv{kv}_sb", OUT_ULYSSES, kv, store_barrier=True) for kv in args.store_barrier_kv]
    units = f"_units{args.tail_split_units}" if args.tail_split_units else ""
    out += [FaContender(f"fa_u_kv{kv}_ts{s}{units}", OUT_ULYSSES, kv, tail_kv_splits=s,
                        tail_split_units=args.tail_split_units)
            for kv in args.tail_splits_kv for s in args.tail_splits]
    out += [FaContender(f"fa_u_kv{kv}_g{args.grid}", OUT_ULYSSES, kv, num_ctas=args.grid) for kv in args.grid_kv]
    seen = set()
    return [c for c in out if not (c.name in seen or seen.add(c.name))]
