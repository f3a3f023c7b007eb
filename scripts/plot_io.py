"""Shared by the plot scripts (post-processing only): a missing matplotlib, a missing file or a file of the
wrong kind ends with one line naming the problem and what to do, never a traceback.
Exit codes: 2 for a bad input file, 77 when matplotlib is missing (a skip, as for a missing GPU).
"""
import json
import sys


def fail(tool, message, code=2):
    print(f"{tool}: error: {message}", file=sys.stderr)
    raise SystemExit(code)


def pyplot(tool):
    """matplotlib.pyplot on the Agg backend, or exit 77 saying how to install it for this interpreter."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail(tool, f"matplotlib is not installed for {sys.executable}; install it with "
                   f"'{sys.executable} -m pip install matplotlib' (system python3: apt install python3-matplotlib, "
                   "which scripts/setup.sh does)", 77)
    return plt


def load_result(tool, path, expected):
    """The parsed xstage result file at `path`; exit 2 naming the problem otherwise. `expected` says which
    file the script wants ("a calibration file from xstage-calibrate")."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        fail(tool, f"cannot read {path}: {e.strerror}; expected {expected}")
    except UnicodeDecodeError:
        fail(tool, f"{path} is not a text file; expected {expected}")
    try:
        doc = json.loads(text)
    except ValueError as e:
        fail(tool, f"{path} is not JSON ({e}); expected {expected}")
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), dict) or \
            doc["schema"].get("name") != "xstage.result":
        fail(tool, f"{path} is not an xstage result file (no schema xstage.result); expected {expected}")
    if not isinstance(doc.get("points"), list):
        fail(tool, f"{path} has no points list; expected {expected}")
    return doc
