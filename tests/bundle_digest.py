#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Independent reference for the skillrun bundle digest (skillrun-bundle(5)).

Usage: bundle_digest.py [--verbose] DIR
Prints "sha256:<hex>" (with --verbose, the records first).  Exits 123 with a
message on stderr for what skillrun refuses (symlinks, devices, FIFOs,
sockets, control characters in names).  Caps are not checked here: this is
the format's reference, not a policy.  Written from the man page, sharing no
code with src/bundle.c, so the tests compare two implementations.
"""
import hashlib
import os
import stat
import sys


class Refused(Exception):
    pass


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 17), b""):
            h.update(chunk)
    return h.hexdigest()


def collect(root, rel, out):
    with os.scandir(os.path.join(root, rel) if rel else root) as it:
        entries = list(it)
    for de in entries:
        name = de.name
        path = rel + b"/" + name if rel else name
        if any(c < 0x20 or c == 0x7F for c in name):
            raise Refused("%r: control characters in a name" % path)
        st = os.lstat(os.path.join(root, path))
        if stat.S_ISDIR(st.st_mode):
            out.append((path, b"d 0755 0 - " + path + b"/\n"))
            collect(root, path, out)
        elif stat.S_ISREG(st.st_mode):
            mode = b"0755" if st.st_mode & 0o111 else b"0644"
            digest = file_sha256(os.path.join(root, path)).encode()
            out.append((path, b"f %s %d %s %s\n" % (mode, st.st_size, digest, path)))
        else:
            raise Refused("%s: not a regular file or directory" % os.fsdecode(path))


def records(root):
    out = []
    collect(os.fsencode(root), b"", out)
    # bytes compare like strcmp: the global order, not per directory
    out.sort(key=lambda t: t[0])
    return b"".join(r for _, r in out)


def main(argv):
    verbose = "--verbose" in argv
    args = [a for a in argv if a != "--verbose"]
    if len(args) != 1:
        sys.stderr.write("usage: bundle_digest.py [--verbose] DIR\n")
        return 2
    try:
        text = records(args[0])
    except Refused as e:
        sys.stderr.write("bundle_digest.py: %s\n" % e)
        return 123
    if verbose:
        sys.stdout.buffer.write(text)
    print("sha256:" + hashlib.sha256(text).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
