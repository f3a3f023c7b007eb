"""One line for what a malformed input file did to a script's reader (scripts/interference_table.py,
loaded_cap_report.py, moe_gemm_rates.py): the scripts print `script: file: problem (accepted form)` and exit 2."""
import json


def problem_text(e):
    """One line for what a malformed file did to the reader."""
    if isinstance(e, KeyError):
        return f"missing key {e}"
    if isinstance(e, OSError):
        return f"cannot read ({e.strerror})"
    if isinstance(e, json.JSONDecodeError):
        return f"not JSON ({e})"
    return f"wrong shape ({type(e).__name__}: {e})"
