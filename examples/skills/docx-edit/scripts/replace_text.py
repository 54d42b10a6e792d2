# SPDX-License-Identifier: GPL-2.0-or-later
"""replace_text.py IN.docx OLD NEW OUT.docx: OLD becomes NEW in every run."""
import sys

import docx

if len(sys.argv) != 5:
    docx.fail("usage: replace_text.py IN.docx OLD NEW OUT.docx")
src, old, new, dst = sys.argv[1:]
if not old:
    docx.fail("OLD must not be empty")
parts, tree = docx.load(src)
changed = 0
for t in tree.iter(f"{{{docx.W}}}t"):
    if t.text and old in t.text:
        t.text = t.text.replace(old, new)
        changed += 1
if not changed:
    docx.fail(f"{old!r} is in no run of {src}; nothing written")
docx.save(dst, parts, tree)
print(f"Replaced {old!r} in {changed} runs; wrote {dst}")
