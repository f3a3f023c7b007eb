#!/usr/bin/env python3
"""Functions longer than 120 lines in src/ (issue 30: "no function over 120 lines"), against an
allowlist of the known offenders that can only shrink (tests/scripts/function_length_allowlist.txt).

Exit 0 when every function over the limit is allowlisted at no more than its recorded length and every allowlisted
entry still exists at exactly its recorded length; exit 1 otherwise, one line per problem. A function that was split
or shortened must leave (or lower) its entry: `--update` does that, and only that (it never adds or raises one).

How a function is found (a brace-matching heuristic, not a C++ parser): comments, string and character literals
(raw strings too) and preprocessor lines are blanked; then, at namespace or class scope and outside parentheses,
each `{` is classified by the text since the previous `;`, `{` or `}` at that scope: `namespace`/`extern "C"`
open a scope, `class`/`struct`/`union`/`enum` without a `(` open a class scope, any other text holding a `(` opens a
function body (lambdas assigned at namespace scope included), anything else (an initializer) is skipped. A member
brace-initializer in a constructor's init list (`) : a_{1}, b_{2} {`) stays part of the header. A function's length
is its lines from the first line of its header text to its closing brace, inclusive. Lambdas and nested classes
inside a function count toward that function. Both branches of an #if are read as one text, so a function whose
header differs between branches may be mismeasured; none does today.

Usage: check_function_length.py [--root DIR] [--allowlist FILE] [--limit N] [--list] [--update]
"""
import argparse
import os
import re
import sys

LIMIT = 120
FOLDERS = ("src",)
SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".cc")
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ALLOWLIST = os.path.join(HERE, "function_length_allowlist.txt")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or
                                                                                text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end + len(delim) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


CTOR_INIT = re.compile(r"\)\s*(noexcept\s*)?:(?!:)")
NAME_BEFORE_PAREN = re.compile(r"(operator\s*\(\s*\)|operator\s*[^\s\w(]+|~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)"
                               r"\s*(?:<[^()]*>)?\s*$")
NOT_NAMES = {"__launch_bounds__", "alignas", "__attribute__", "__declspec", "decltype", "XS_DEVICE", "if", "for",
             "while", "switch", "return", "sizeof", "noexcept", "requires"}


def function_name(header):
    """The name before the parameter list of a function header (blanked text), or a lambda's variable."""
    flat = " ".join(header.split())
    if "[" in flat and "=" in flat.split("[")[0]:
        m = re.search(r"([A-Za-z_]\w*)\s*=\s*$", flat.split("[")[0])
        if m:
            return m.group(1)
    depth = 0
    for k, ch in enumerate(flat):
        if ch == "(":
            if depth == 0:
                m = NAME_BEFORE_PAREN.search(flat[:k])
                if m:
                    name = re.sub(r"\s+", "", m.group(1))
                    if name.split("::")[-1] not in NOT_NAMES:
                        return name
            depth += 1
        elif ch == ")":
            depth -= 1
    return "?"


def functions(text):
    """(name, first line, last line) of every function body in a C++/CUDA source text."""
    code = blank(text)
    found = []
    line = 1
    header_start = None  # index where the current header text began
    header = []
    i, n = 0, len(code)
    paren = 0
    scopes = []  # "scope" (namespace or class) entries; function bodies are skipped whole

    def skip_braces(k):
        """Index just past the `}` matching the `{` at k, and the lines crossed."""
        depth = 0
        while k < n:
            if code[k] == "{":
                depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0:
                    return k + 1
            k += 1
        return n

    while i < n:
        c = code[i]
        if c == "\n":
            line += 1
        if c.isspace():
            if header_start is not None:
                header.append(c)
            i += 1
            continue
        if header_start is None and c not in ";{}":
            header_start, header = line, []
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        if c == "{" and paren <= 0:
            text_before = "".join(header)
            if CTOR_INIT.search(text_before) and re.search(r"[\w>]\s*$", text_before):
                end = skip_braces(i)  # a member brace-initializer: still the header
                line += code.count("\n", i, end)
                header.append(" {} ")
                i = end
                continue
            flat = " ".join(text_before.split())
            if re.search(r"\bnamespace\b", flat) or re.match(r'^extern\s*""', flat):
                scopes.append("scope")
            elif re.search(r"\b(class|struct|union|enum)\b", flat) and "(" not in flat:
                scopes.append("scope")
            elif "(" in flat:
                first = header_start if header_start is not None else line
                end = skip_braces(i)
                last = line + code.count("\n", i, end)
                found.append((function_name(text_before), first, last))
                line = last
                i = end
                header_start, header = None, []
                continue
            else:
                end = skip_braces(i)  # an initializer or an unnamed aggregate
                line += code.count("\n", i, end)
                i = end
                header.append(" {} ")
                continue
            header_start, header = None, []
            i += 1
            continue
        if c == "}" and paren <= 0:
            if scopes:
                scopes.pop()
            header_start, header = None, []
            i += 1
            continue
        if c == ";" and paren <= 0:
            header_start, header = None, []
            i += 1
            continue
        if header_start is not None:
            header.append(c)
        i += 1
    return found


def measure(root, limit):
    """{(path, name): [lengths, longest first]} of the functions over `limit` lines under root's folders."""
    over = {}
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for filename in sorted(filenames):
                if not filename.endswith(SUFFIXES):
                    continue
                path = os.path.join(dirpath, filename)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for name, first, last in functions(text):
                    length = last - first + 1
                    if length > limit:
                        over.setdefault((rel, name), []).append(length)
    for lengths in over.values():
        lengths.sort(reverse=True)
    return over


def read_allowlist(path):
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            if len(parts) != 3 or not parts[2].isdigit():
                raise SystemExit(f"{path}:{number}: expected '<path> <function> <lines>', got '{raw.rstrip()}'")
            allowed.setdefault((parts[0], parts[1]), []).append(int(parts[2]))
    for lengths in allowed.values():
        lengths.sort(reverse=True)
    return allowed


def compare(over, allowed, limit):
    """Problems (new or grown offenders, stale entries) and the shrunk allowlist."""
    problems, shrunk = [], {}
    for key in sorted(set(over) | set(allowed)):
        have, may = over.get(key, []), allowed.get(key, [])
        path, name = key
        for k, length in enumerate(have):
            if k >= len(may):
                problems.append(f"{path}: {name} has {length} lines (limit {limit}; not in the allowlist): split it")
            elif length > may[k]:
                problems.append(f"{path}: {name} grew to {length} lines (allowlisted at {may[k]}): split it")
            elif length < may[k]:
                problems.append(f"{path}: {name} is now {length} lines (allowlisted at {may[k]}): lower its entry "
                                f"(--update)")
        for length in may[len(have):]:
            problems.append(f"{path}: {name} (allowlisted at {length} lines) is gone or within {limit} lines: "
                            f"drop its entry (--update)")
        kept = [min(a, b) for a, b in zip(have, may)]
        if kept:
            shrunk[key] = kept
    return problems, shrunk


def write_allowlist(path, entries, limit):
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# Functions over {limit} lines in src/ (tests/scripts/check_function_length.py): "
                "this list may only\n# shrink. '<path> <function> <lines>'; split a function, then lower or drop its "
                "entry (--update).\n")
        for (p, name), lengths in sorted(entries.items()):
            for length in lengths:
                f.write(f"{p} {name} {length}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.normpath(os.path.join(HERE, "..", "..")))
    parser.add_argument("--allowlist", default=DEFAULT_ALLOWLIST)
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--list", action="store_true", help="print every function over the limit and exit 0")
    parser.add_argument("--update", action="store_true",
                        help="lower or drop the allowlist's entries for functions that shrank (never adds or raises)")
    args = parser.parse_args()
    over = measure(args.root, args.limit)
    if args.list:
        for (path, name), lengths in sorted(over.items(), key=lambda kv: -kv[1][0]):
            for length in lengths:
                print(f"{length:5d}  {path} {name}")
        return 0
    allowed = read_allowlist(args.allowlist)
    problems, shrunk = compare(over, allowed, args.limit)
    if args.update:
        write_allowlist(args.allowlist, shrunk, args.limit)
        problems = [p for p in compare(over, shrunk, args.limit)[0]]
    for p in problems:
        print(p)
    total = sum(len(v) for v in over.values())
    print(f"check_function_length: {total} functions over {args.limit} lines, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
