# SPDX-License-Identifier: GPL-2.0-or-later
"""The parts of a .docx the docx-edit scripts use."""
import sys
import zipfile
import xml.etree.ElementTree as ET

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DOCUMENT = "word/document.xml"
ET.register_namespace("w", W)


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    """(every part's bytes in archive order, the document's XML tree)."""
    try:
        with zipfile.ZipFile(path) as z:
            parts = [(i, z.read(i)) for i in z.infolist()]
    except (OSError, zipfile.BadZipFile) as e:
        fail(f"{path}: {e}")
    doc = next((data for i, data in parts if i.filename == DOCUMENT), None)
    if doc is None:
        fail(f"{path}: no {DOCUMENT}: not a Word document")
    return parts, ET.fromstring(doc)


def paragraphs(tree):
    for p in tree.iter(f"{{{W}}}p"):
        yield "".join(t.text or "" for t in p.iter(f"{{{W}}}t"))


def save(path, parts, tree):
    doc = ET.tostring(tree, xml_declaration=True, encoding="UTF-8")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in parts:
            z.writestr(info, doc if info.filename == DOCUMENT else data)
