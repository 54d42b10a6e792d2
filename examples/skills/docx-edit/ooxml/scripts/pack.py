# SPDX-License-Identifier: GPL-2.0-or-later
"""pack.py INPUT_DIRECTORY OFFICE_FILE: the directory's files as an
archive, [Content_Types].xml first."""
import os
import sys
import zipfile

if len(sys.argv) != 3:
    sys.exit("usage: pack.py INPUT_DIRECTORY OFFICE_FILE")
src, dst = sys.argv[1:]
names = sorted(
    os.path.relpath(os.path.join(d, f), src).replace(os.sep, "/")
    for d, _, files in os.walk(src) for f in files)
if "[Content_Types].xml" not in names:
    sys.exit(f"error: {src} has no [Content_Types].xml")
names.remove("[Content_Types].xml")
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in ["[Content_Types].xml"] + names:
        z.write(os.path.join(src, name), name)
print(f"Packed {len(names) + 1} parts into {dst}")
