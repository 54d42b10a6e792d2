# SPDX-License-Identifier: GPL-2.0-or-later
"""fill_fillable_fields.py INPUT.pdf FIELD_VALUES.json OUTPUT.pdf: sets each
field's value ("-" reads the values from standard input).  Every value is
checked before anything is written."""
import json
import sys

import pdfform

if len(sys.argv) != 4:
    pdfform.fail("usage: fill_fillable_fields.py INPUT.pdf FIELD_VALUES.json "
                 "OUTPUT.pdf")
src, values_path, dst = sys.argv[1:]
try:
    objs, root = pdfform.read(src)
    if values_path == "-":
        values = json.load(sys.stdin)
    else:
        with open(values_path) as f:
            values = json.load(f)
except (OSError, ValueError, pdfform.PdfError) as e:
    pdfform.fail(str(e))
by_id = {f["field_id"]: f for f in pdfform.fields(objs, root)}
errors = []
for v in values:
    f = by_id.get(v.get("field_id"))
    if f is None:
        errors.append(f"unknown field_id {v.get('field_id')!r}")
    elif f["type"] == "checkbox" and v.get("value") not in (
            f["checked_value"], f["unchecked_value"]):
        errors.append(f"{f['field_id']}: a checkbox takes "
                      f"{f['checked_value']} or {f['unchecked_value']}")
    elif f["type"] == "other":
        errors.append(f"{f['field_id']}: this kind of field is not supported")
if errors:
    pdfform.fail("; ".join(errors))
for v in values:
    f = by_id[v["field_id"]]
    body = objs[f["object"]]
    if f["type"] == "checkbox":
        name = v["value"].encode("ascii")
        body = pdfform.set_value(pdfform.set_value(body, b"V", name), b"AS", name)
    else:
        body = pdfform.set_value(body, b"V", pdfform.string(str(v["value"])))
    objs[f["object"]] = body
pdfform.write(dst, objs, root)
print(f"Filled {len(values)} fields into {dst}")
