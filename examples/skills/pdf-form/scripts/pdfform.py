# SPDX-License-Identifier: GPL-2.0-or-later
"""The little of PDF the pdf-form scripts need: the objects of a file whose
objects are not compressed, the AcroForm fields, and a rewrite with
a fresh cross-reference table."""

import re
import sys

OBJ = re.compile(rb"(\d+)\s+(\d+)\s+obj\b(.*?)\bendobj", re.S)
REF = re.compile(rb"(\d+)\s+0\s+R\b")


class PdfError(Exception):
    pass


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"%PDF-"):
        raise PdfError(f"{path}: not a PDF")
    objs = {int(m.group(1)): m.group(3).strip() for m in OBJ.finditer(data)}
    if b"/ObjStm" in data or not objs:
        raise PdfError(f"{path}: compressed object streams are not supported")
    trailer = data[data.rfind(b"trailer"):]
    root = REF.search(trailer[trailer.find(b"/Root"):])
    if not root:
        raise PdfError(f"{path}: no /Root in the trailer")
    return objs, int(root.group(1))


def value_of(body, key):
    """The raw token after /key: a name, a (string), an [array], a ref."""
    m = re.search(rb"/" + key + rb"\s*(\((?:\\.|[^\\)])*\)|\[[^\]]*\]|"
                  rb"\d+\s+0\s+R|/[^\s/\[\]()<>]+|<<.*?>>)", body, re.S)
    return m.group(1) if m else None


def unstring(tok):
    s = tok[1:-1]
    return re.sub(rb"\\(.)", rb"\1", s).decode("latin-1")


def string(text):
    esc = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + esc.encode("latin-1", "replace") + b")"


def pages(objs, root):
    kids = value_of(objs[int(REF.search(value_of(objs[root], b"Pages")).group(1))],
                    b"Kids")
    return [int(n) for n in REF.findall(kids or b"")]


def fields(objs, root):
    """[{field_id, page, rect, type, ...}], in the order of /Fields."""
    form = value_of(objs[root], b"AcroForm")
    if form is None:
        return []
    if REF.fullmatch(form):
        form = objs[int(REF.match(form).group(1))]
    order = pages(objs, root)
    out = []
    for num in (int(n) for n in REF.findall(value_of(form, b"Fields") or b"")):
        body = objs.get(num, b"")
        ft, name = value_of(body, b"FT"), value_of(body, b"T")
        if not ft or not name:
            continue
        page = value_of(body, b"P")
        rect = value_of(body, b"Rect") or b"[]"
        v = value_of(body, b"V")
        f = {"field_id": unstring(name),
             "page": order.index(int(REF.match(page).group(1))) + 1
             if page and REF.match(page) else 1,
             "rect": [float(x) for x in rect[1:-1].split()],
             "value": None if v is None else unstring(v)
             if v.startswith(b"(") else v.decode("latin-1"),
             "object": num}
        if ft == b"/Tx":
            f["type"] = "text"
        elif ft == b"/Btn":
            f.update(type="checkbox", checked_value="/On",
                     unchecked_value="/Off")
        else:
            f["type"] = "other"
        out.append(f)
    return out


def set_value(body, key, tok):
    """body with /key set to tok: replaced, or added before the last >>."""
    old = value_of(body, key)
    if old is None:
        end = body.rstrip().rfind(b">>")
        return body[:end] + b"/" + key + b" " + tok + b" " + body[end:]
    return re.sub(rb"/" + key + rb"\s*" + re.escape(old),
                  lambda m: b"/" + key + b" " + tok, body, count=1)


def write(path, objs, root):
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objs):
        offsets[num] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (num, objs[num])
    size = max(objs) + 1
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += (b"%010d 00000 n \n" % offsets[num]) if num in offsets \
            else b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        size, root, xref)
    with open(path, "wb") as f:
        f.write(out)


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)
