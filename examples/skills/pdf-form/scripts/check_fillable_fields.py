# SPDX-License-Identifier: GPL-2.0-or-later
"""check_fillable_fields.py FILE.pdf: says whether the PDF has fillable
form fields (exit 0 either way; 1 when it cannot be read)."""
import sys

import pdfform

if len(sys.argv) != 2:
    pdfform.fail("usage: check_fillable_fields.py FILE.pdf")
try:
    objs, root = pdfform.read(sys.argv[1])
except (OSError, pdfform.PdfError) as e:
    pdfform.fail(str(e))
found = pdfform.fields(objs, root)
if found:
    print(f"This PDF has {len(found)} fillable form fields")
else:
    print("This PDF does not have fillable form fields")
