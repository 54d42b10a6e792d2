# SPDX-License-Identifier: GPL-2.0-or-later
"""docx_to_text.py FILE.docx: the paragraphs, one per line."""
import sys

import docx

if len(sys.argv) != 2:
    docx.fail("usage: docx_to_text.py FILE.docx")
_, tree = docx.load(sys.argv[1])
for line in docx.paragraphs(tree):
    print(line)
