# SPDX-License-Identifier: GPL-2.0-or-later
"""extract_form_field_info.py INPUT.pdf FIELD_INFO.json: the form's fields
as a JSON list (field_id, page, rect, type; checkboxes their values)."""
import json
import sys

import pdfform

if len(sys.argv) != 3:
    pdfform.fail("usage: extract_form_field_info.py INPUT.pdf FIELD_INFO.json")
try:
    objs, root = pdfform.read(sys.argv[1])
except (OSError, pdfform.PdfError) as e:
    pdfform.fail(str(e))
info = [{k: v for k, v in f.items() if k != "object"}
        for f in pdfform.fields(objs, root)]
with open(sys.argv[2], "w") as out:
    json.dump(info, out, indent=2)
print(f"Wrote {len(info)} fields to {sys.argv[2]}")
