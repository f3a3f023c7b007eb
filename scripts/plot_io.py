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


def output_path(tool, out, inputs, default_from=None, suffix=".png", flag="--out"):
    """The path to write: `out`, or `default_from` with its extension replaced by `suffix` beside it. Exit 2 where it
    does not end in `suffix`, is a link, a folder or a device, lies in a folder that does not exist, or is (by
    resolved path or inode) one of `inputs`: no output ever overwrites an input or writes through a link."""
    import os
    if out is None:
        if default_from is None:
            fail(tool, f"no output path given ({flag} FILE{suffix})")
        base, _ = os.path.splitext(default_from)
        out = base + suffix
    if not out or not out.lower().endswith(suffix):
        fail(tool, f"{flag} {out!r}: expected a path ending in {suffix}")
    if os.path.islink(out):
        fail(tool, f"{flag} {out}: is a symbolic link; give the path of a regular file (links are not written through)")
    if os.path.exists(out) and not os.path.isfile(out):
        fail(tool, f"{flag} {out}: exists and is not a regular file (a folder or a device)")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        fail(tool, f"{flag} {out}: its folder {parent} does not exist")
    for i in inputs:
        same = os.path.realpath(i) == os.path.realpath(out)
        if not same and os.path.exists(out) and os.path.exists(i):
            same = os.path.samefile(i, out)
        if same:
            fail(tool, f"{flag} {out}: is the input {i}; give another path (an output never overwrites an input)")
    return out


def save(tool, fig, out, dpi):
    """Writes the figure to `out` through a temporary file beside it and a rename (never half-written)."""
    import os
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(out) + ".", suffix=".png",
                               dir=os.path.dirname(os.path.abspath(out)))
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi, format="png")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp, out)
    except OSError as e:
        fail(tool, f"cannot write {out}: {e.strerror}")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def run(tool, main, expected):
    """main() with a file that lacks what the plot reads ending in one line (exit 2), not a traceback."""
    try:
        main()
    except (KeyError, IndexError, TypeError, ValueError) as e:
        fail(tool, f"the input lacks what this plot reads ({type(e).__name__}: {e}); expected {expected}")
