#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Lists the reasons and layers skillrun's sources can put in an error.

  audit-reasons.py SRC_DIR

Reads every src/*.c and prints one line per value found, sorted and
unique: "KIND VALUE", KIND being

  refused  a reason given with SR_EXIT_REFUSED (bundle_rejected's, or
           input_rejected's for an --input)
  failed   a reason given with SR_EXIT_FAILED (error's)
  layer    a layer given to sr_error_layer (layer_failed's)
  warning  a literal reason of a warning event

and one line "unresolved FILE:LINE: EXPR" per reason it cannot tell (not
a string literal, a macro of the same file, a parameter of a function
whose callers pass literals, a field set by designated initialisers, or
the reason of a local struct sr_error another call filled, E.reason).
tests/integration/docs.sh holds these against audit.schema.json, so that
the schema's lists are derived from the code and cannot drift.
"""

import glob
import os
import re
import sys

STRING = r'"(?:[^"\\\n]|\\.)*"'


def strip_comments(s):
    """C comments become spaces (newlines kept, for line numbers); string
    literals are kept."""
    out = []
    i = 0
    pat = re.compile(r'/\*.*?\*/|//[^\n]*|' + STRING + r"|'(?:[^'\\\n]|\\.)*'",
                     re.S)
    for m in pat.finditer(s):
        out.append(s[i:m.start()])
        t = m.group(0)
        if t.startswith("/"):
            out.append(re.sub(r"[^\n]", " ", t))
        else:
            out.append(t)
        i = m.end()
    out.append(s[i:])
    return "".join(out)


def call_args(s, start):
    """The top-level arguments of the call whose '(' is at s[start - 1]."""
    args, cur, depth, i = [], [], 1, start
    while i < len(s) and depth:
        c = s[i]
        if c == '"':
            m = re.compile(STRING).match(s, i)
            cur.append(m.group(0))
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if not depth:
                break
        if c == "," and depth == 1:
            args.append(" ".join("".join(cur).split()))
            cur = []
        else:
            cur.append(c)
        i += 1
    args.append(" ".join("".join(cur).split()))
    return args


def literal(expr):
    m = re.fullmatch(STRING, expr)
    return m.group(0)[1:-1] if m else None


def branches(expr):
    """COND ? A : B as [A, B]; anything else as [expr]."""
    m = re.fullmatch(r"[^?]+\?\s*([^:]+?)\s*:\s*(.+)", expr)
    return [m.group(1), m.group(2)] if m else [expr]


def main():
    src = sys.argv[1]
    files = {f: strip_comments(open(f, encoding="utf-8").read())
             for f in sorted(glob.glob(os.path.join(src, "*.c")))}
    found = set()
    unresolved = []
    # Wrappers: a function with a parameter `reason` that it gives to
    # sr_error_set: {name: (index of that parameter, exit code)}.
    wrappers = {}
    # Designated initialisers of a field `reason`: every literal one.
    field_reasons = set()
    calls = []  # (file, line, code expr, reason expr)
    for f, s in files.items():
        macros = dict(re.findall(r"#define\s+([A-Z_]+)\s+(" + STRING + ")", s))
        for m in re.finditer(r"\bsr_error_set\s*\(", s):
            a = call_args(s, m.end())
            if len(a) < 4 or a[0] == "struct sr_error *e":
                continue  # the declaration
            line = s.count("\n", 0, m.start()) + 1
            reason = macros.get(a[3], a[3])
            calls.append((f, line, a[1], reason))
        for m in re.finditer(r"\bsr_error_layer\s*\(", s):
            a = call_args(s, m.end())
            if len(a) < 2 or a[1] == "const char *layer":
                continue
            v = literal(a[1])
            if v is None:
                unresolved.append(f"{os.path.basename(f)}:"
                                  f"{s.count(chr(10), 0, m.start()) + 1}: "
                                  f"layer {a[1]}")
            else:
                found.add(("layer", v))
        # warning events' reasons: "reason", "LITERAL" in their fields.
        for m in re.finditer(r"\bsr_audit_emit\s*\(", s):
            a = call_args(s, m.end())
            if len(a) > 2 and a[1] == '"warning"':
                for v in re.findall(r'"reason",\s*"([a-z_]+)"', a[2]):
                    found.add(("warning", v))
        for m in re.finditer(r"\.reason\s*=\s*(" + STRING + ")", s):
            field_reasons.add(m.group(1)[1:-1])
        # static int NAME(..., const char *reason, ...) { ... }
        for m in re.finditer(r"\b(?:static\s+)?int\s+([a-z_0-9]+)\s*\(([^;{)]*)\)\s*\{",
                             s):
            params = [p.strip() for p in m.group(2).split(",")]
            idx = [i for i, p in enumerate(params)
                   if re.fullmatch(r"const char \*reason", p)]
            if idx:
                body_end = s.find("\n}\n", m.end())
                body = s[m.end():body_end]
                code = re.search(r"sr_error_set\([^,]+,\s*([A-Z_]+),[^,]+,\s*reason\b",
                                 body)
                if code:
                    wrappers[m.group(1)] = (idx[0], code.group(1))
    kinds = {"SR_EXIT_REFUSED": "refused", "SR_EXIT_FAILED": "failed"}
    for f, line, code, reason in calls:
        codes, reasons = branches(code), branches(reason)
        if len(reasons) == 1:
            reasons = reasons * len(codes)
        if len(codes) == 1:
            codes = codes * len(reasons)
        for c, r in zip(codes, reasons):
            kind = kinds.get(c)
            if kind is None:
                continue  # --verify-audit's 1 and 2, a cancellation's 128+N
            v = literal(r)
            if v is not None:
                found.add((kind, v))
            elif r in ("reason",) and any(w[1] == c for w in wrappers.values()):
                pass  # a wrapper's parameter: its callers below
            elif r.endswith("->reason") and c == "SR_EXIT_REFUSED":
                found |= {(kind, x) for x in field_reasons}
            elif re.fullmatch(r"[a-z_]+\.reason", r):
                pass  # another error's reason passed on: found where set
            else:
                unresolved.append(f"{os.path.basename(f)}:{line}: {r}")
    for name, (idx, c) in wrappers.items():
        for f, s in files.items():
            for m in re.finditer(r"\b" + name + r"\s*\(", s):
                a = call_args(s, m.end())
                if len(a) <= idx or a[idx] == "const char *reason":
                    continue
                v = literal(a[idx])
                if v is not None:
                    found.add((kinds[c], v))
                elif a[idx] != "reason":
                    unresolved.append(f"{os.path.basename(f)}:"
                                      f"{s.count(chr(10), 0, m.start()) + 1}: "
                                      f"{a[idx]}")
    for kind, v in sorted(found):
        print(kind, v)
    for u in sorted(set(unresolved)):
        print("unresolved", u)


if __name__ == "__main__":
    main()
