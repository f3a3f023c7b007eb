"""Loading megamoe result files, the expected issue-12 matrix and the one point kept per matrix slot
(scripts layer; standard library only, so it runs under any python3).
"""
import json
import math
import os

SHAPES = ("dit_moe", "qwen3_5", "hy3", "mimo_v2_5", "glm_5_2", "dsv4_flash", "dsv4_pro")
PRECISIONS = ("bf16", "fp8")
ROUTINGS = ("balanced", "skewed")
TOKENS = (2048, 6976, 16384)
SKEWED_ALPHA = 0.5  # design notes section 2: skewed = Zipf alpha 0.5, gain 1 (alpha 1 is an extra point)
NEGATIVE_CONTROL = "dit_moe"
# Slot groups: (label, target, K_SM, token counts, required). The K_SM 132 column is T = 6976 only
# (issue 12); local at K_SM 132 is kept when run (the control beside host132) but not required.
GROUPS = (("host66", "host", 66, TOKENS, True), ("local66", "local", 66, TOKENS, True),
          ("host132", "host", 132, (6976,), True), ("local132", "local", 132, (6976,), False))


class InputError(Exception):
    """A result file that cannot be read as a megamoe result (exit code 2)."""


def get(obj, *keys):
    """obj[k0][k1]...; None where any level is missing or not an object."""
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj


def number(x):
    """A finite float, or None (JSON null, missing, NaN, text)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def quantile(values, q):
    """Linear-interpolated quantile, the definition of src/xs/common/stats (None for no values)."""
    v = sorted(values)
    if not v:
        return None
    pos = q * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def geomean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values)) if values else None


def slot_label(slot):
    target, k_sm, shape, precision, routing, tokens = slot
    return f"{target} K{k_sm} {shape} {precision} {routing} T{tokens}"


def load_points(paths):
    """Every megamoe point of the files, in file then point order, as records
    {file, index, src ("name.json#i"), point}. Raises InputError naming the file and the problem."""
    records = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except OSError as e:
            raise InputError(f"{path}: cannot read ({e.strerror})")
        except ValueError as e:
            raise InputError(f"{path}: not JSON ({e}); expected an xstage-bench megamoe result file")
        if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
            raise InputError(f"{path}: no 'points' array; expected an xstage-bench result file "
                             "(schema xstage.result)")
        schema = get(doc, "schema", "name")
        if schema is not None and schema != "xstage.result":
            raise InputError(f"{path}: schema '{schema}', expected 'xstage.result'")
        for idx, p in enumerate(doc["points"]):
            if not isinstance(p, dict) or p.get("suite") != "megamoe":
                continue
            if not isinstance(p.get("axes"), dict):
                raise InputError(f"{path}: point {idx} has no 'axes' object")
            records.append({"file": path, "index": idx, "src": f"{os.path.basename(path)}#{idx}", "point": p})
    return records


def status_of(p):
    """'failed' (status not ok), 'wrong' (checked, not passed, or wrong/unwritten/unexpected rows),
    'unverified' (not checked), else 'ok'."""
    if p.get("status") != "ok":
        return "failed"
    if wrong_rows(p) > 0 or (get(p, "verification", "checked") is True and get(p, "verification", "passed") is not True):
        return "wrong"
    if get(p, "verification", "checked") is not True:
        return "unverified"
    return "ok"


def wrong_rows(p):
    total = 0
    for v in (get(p, "verification", "values", "variants") or {}).values():
        for key in ("wrong_elements", "unwritten_slots", "unexpected_slots"):
            total += int(number(get(v, key)) or 0)
    return total


def throttled(p):
    """True / False from extra.clocks.throttled; None when not recorded."""
    t = get(p, "extra", "clocks", "throttled")
    return t if isinstance(t, bool) else None


def config_key(ax):
    """(K_SM, shape, precision, routing, T): one configuration, whatever the target."""
    return (ax.get("K_SM"), ax.get("shape"), ax.get("precision"), ax.get("routing"), ax.get("T"))


def advised_leads(records):
    """{config_key: D} from the before-run advisor of each host point (a later file's advice wins): the D the
    advisor recommended for that configuration, for --advised-d."""
    leads = {}
    for rec in records:
        p = rec["point"]
        d = get(p, "prediction", "advisor", "D")
        if p["axes"].get("target") == "host" and get(p, "prediction", "made") == "before_run" and isinstance(d, int):
            leads[config_key(p["axes"])] = d
    return leads


def matrix_slot(p, block_n, leads=None):
    """(target, K_SM, shape, precision, routing, T) when the point is a matrix run (P 8, b_n as asked,
    D auto, the design's routing), else None. With leads ({config_key: D}, --advised-d), a point run at the
    advisor's D for its configuration fills the slot too (the local control at its host twin's D)."""
    ax = p["axes"]
    d_ok = ax.get("D") == 0 or (leads is not None and ax.get("D") == leads.get(config_key(ax)))
    if not d_ok or ax.get("block_n") != block_n or ax.get("P") != 8:
        return None
    variants = ax.get("variants")  # a run without both schedules (a D sweep) is no matrix point
    if isinstance(variants, list) and variants and not {"expert_wave", "interleaved"} <= set(variants):
        return None
    routing = ax.get("routing")
    if routing == "skewed" and (number(ax.get("zipf_alpha")) != SKEWED_ALPHA or number(ax.get("gain")) != 1.0):
        return None
    if routing not in ROUTINGS or ax.get("shape") not in SHAPES or ax.get("precision") not in PRECISIONS:
        return None
    slot = (ax.get("target"), ax.get("K_SM"), ax["shape"], ax["precision"], routing, ax.get("T"))
    return slot if slot in _ALL_SLOTS else None


def expected_slots(required_only=True):
    return [(target, k_sm, shape, prec, routing, tokens)
            for _, target, k_sm, token_counts, required in GROUPS if required or not required_only
            for shape in SHAPES for prec in PRECISIONS for routing in ROUTINGS for tokens in token_counts]


_ALL_SLOTS = frozenset(expected_slots(required_only=False))


def group_of(slot):
    for label, target, k_sm, token_counts, _ in GROUPS:
        if slot[0] == target and slot[1] == k_sm and slot[5] in token_counts:
            return label
    return None


_QUALITY = {"ok": 3, "unverified": 2, "wrong": 1, "failed": 0}


def select(records, block_n, advised_d=False):
    """The point kept per matrix slot: best status (ok > unverified > wrong > failed), then not throttled,
    then the later one (files in argument order: a re-run passed after the first run wins).
    Returns (chosen {slot: record}, superseded [record + 'by'], extras [records outside the matrix])."""
    chosen, superseded, extras = {}, [], []
    leads = advised_leads(records) if advised_d else None
    for rec in records:
        slot = matrix_slot(rec["point"], block_n, leads)
        if slot is None:
            extras.append(rec)
            continue
        rank = (_QUALITY[status_of(rec["point"])], throttled(rec["point"]) is not True)
        old = chosen.get(slot)
        if old is None:
            chosen[slot] = dict(rec, rank=rank)
        elif rank >= old["rank"]:
            superseded.append(dict(old, by=rec["src"]))
            chosen[slot] = dict(rec, rank=rank)
        else:
            superseded.append(dict(rec, by=old["src"]))
    return chosen, superseded, extras


def completeness(chosen, superseded, extras):
    """Per group: expected, measured (ok), and the missing / failed / unverified / wrong slots; plus the host
    slots without a before-run prediction and the total of wrong rows."""
    groups = {}
    for label, _, _, _, required in GROUPS:
        if required:
            groups[label] = {"expected": 0, "ok": 0, "missing": [], "failed": [], "unverified": [], "wrong": []}
    no_before_run, total_wrong_rows = [], 0
    for slot in expected_slots():
        g = groups[group_of(slot)]
        g["expected"] += 1
        rec = chosen.get(slot)
        if rec is None:
            g["missing"].append(slot_label(slot))
            continue
        p = rec["point"]
        state = status_of(p)
        total_wrong_rows += wrong_rows(p)
        if state == "ok":
            g["ok"] += 1
        else:
            entry = {"config": slot_label(slot), "src": rec["src"]}
            if state == "failed":
                entry["reason"] = p.get("reason") or p.get("status")
            elif state == "wrong":
                entry["wrong_rows"] = wrong_rows(p)
                entry["detail"] = get(p, "verification", "detail") or ""
            g[state].append(entry)
        if slot[0] == "host" and get(p, "prediction", "made") != "before_run":
            no_before_run.append({"config": slot_label(slot), "src": rec["src"],
                                  "made": get(p, "prediction", "made") or "not recorded"})
    expected = sum(g["expected"] for g in groups.values())
    ok = sum(g["ok"] for g in groups.values())
    return {"expected": expected, "ok": ok, "complete": ok == expected and not no_before_run,
            "wrong_rows": total_wrong_rows, "groups": groups, "without_before_run_prediction": no_before_run,
            "superseded": [{"src": r["src"], "by": r["by"]} for r in superseded],
            "outside_matrix": [r["src"] for r in extras]}
