# SPDX-License-Identifier: GPL-2.0-or-later
"""unpack.py OFFICE_FILE OUTPUT_DIR: the archive's parts as files.  A part
whose name would leave OUTPUT_DIR is refused."""
import os
import sys
import zipfile

if len(sys.argv) != 3:
    sys.exit("usage: unpack.py OFFICE_FILE OUTPUT_DIR")
src, out = sys.argv[1:]
root = os.path.realpath(out)
with zipfile.ZipFile(src) as z:
    for info in z.infolist():
        target = os.path.realpath(os.path.join(root, info.filename))
        if not target.startswith(root + os.sep):
            sys.exit(f"error: {info.filename!r} would leave {out}")
    z.extractall(root)
    print(f"Unpacked {len(z.infolist())} parts into {out}")
