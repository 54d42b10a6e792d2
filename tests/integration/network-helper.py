# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for tests/integration/network.sh (servers on the host side,
probes run inside the sandbox).

Host side:
  dns ADDR PORT NAME=IP...     a DNS server over UDP that answers A queries
                               (AAAA for an IPv6 address) for the names
                               given (TTL 0), NOERROR with no answer for
                               their other types, NXDOMAIN otherwise;
                               NAME=A,B answers A, then B, then A... (a
                               rebinding name), NAME=A+B both at once;
                               a first argument --log=FILE appends
                               each question's name to FILE, a line each
  wheel-index DIR NAME VERSION a tiny pure-Python wheel and a PEP 503
                               "simple" index for it under DIR
  abstract-listen NAME FILE    listen on the abstract unix socket @NAME;
                               append a line to FILE per connection
In the sandbox:
  direct HOST PORT             a TCP connect without the proxy: "connected"
                               or the errno's name (ENETUNREACH...)
  abstract NAME                connect to @NAME: "connected" or the errno
"""
import base64
import errno
import hashlib
import os
import socket
import struct
import sys
import zipfile


def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def dns(addr, port, pairs):
    table, turn, log = {}, {}, None
    if pairs and pairs[0].startswith("--log="):
        log = open(pairs.pop(0)[len("--log="):], "a")
    for p in pairs:
        name, ips = p.split("=", 1)
        # A list of answers, each a list of addresses.
        table[name.lower().rstrip(".")] = [
            [(28, socket.inet_pton(socket.AF_INET6, ip)) if ":" in ip
             else (1, socket.inet_aton(ip)) for ip in alt.split("+")]
            for alt in ips.split(",")]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, int(port)))
    while True:
        q, peer = s.recvfrom(512)
        if len(q) < 12:
            continue
        qid, _flags, qd = struct.unpack("!HHH", q[:6])
        if qd != 1:
            continue
        # The question: labels, then QTYPE and QCLASS.
        i, labels = 12, []
        while i < len(q) and q[i] != 0:
            n = q[i]
            labels.append(q[i + 1:i + 1 + n].decode("ascii", "replace"))
            i += 1 + n
        i += 1
        if i + 4 > len(q):
            continue
        qtype = struct.unpack("!H", q[i:i + 2])[0]
        question = q[12:i + 4]
        name = ".".join(labels).lower()
        if log:
            log.write(name + "\n")
            log.flush()
        answers = b""
        if name not in table:
            rcode, an = 3, 0
        elif qtype in (1, 28) and any(t == qtype for alt in table[name]
                                      for t, _ in alt):
            alts = table[name]
            k = turn.get((name, qtype), 0)
            turn[(name, qtype)] = k + 1
            addrs = [a for t, a in alts[k % len(alts)] if t == qtype]
            rcode, an = 0, len(addrs)
            answers = b"".join(b"\xc0\x0c" +
                               struct.pack("!HHIH", qtype, 1, 0, len(a)) + a
                               for a in addrs)
        else:
            rcode, an = 0, 0
        head = struct.pack("!HHHHHH", qid, 0x8180 | rcode, 1, an, 0, 0)
        s.sendto(head + question + answers, peer)


def b64(digest):
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel_index(top, name, version):
    """A wheel pip accepts (METADATA, WHEEL, RECORD with hashes) and the
    index pages that point at it, with its sha256 in the link."""
    files = {
        "%s/__init__.py" % name: b"VALUE = 42\n",
        "%s-%s.dist-info/METADATA" % (name, version):
            ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
             "Summary: a test wheel\n" % (name, version)).encode(),
        "%s-%s.dist-info/WHEEL" % (name, version):
            b"Wheel-Version: 1.0\nGenerator: skillrun-tests\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "%s-%s.dist-info/RECORD" % (name, version)
    lines = ["%s,sha256=%s,%d" % (p, b64(hashlib.sha256(d).digest()), len(d))
             for p, d in files.items()]
    lines.append("%s,," % record)
    files[record] = ("\n".join(lines) + "\n").encode()
    whl = "%s-%s-py3-none-any.whl" % (name, version)
    os.makedirs(os.path.join(top, "packages"), exist_ok=True)
    path = os.path.join(top, "packages", whl)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            z.writestr(p, d)
    sha = hashlib.sha256(open(path, "rb").read()).hexdigest()
    os.makedirs(os.path.join(top, "simple", name), exist_ok=True)
    with open(os.path.join(top, "simple", "index.html"), "w") as f:
        f.write('<html><body><a href="%s/">%s</a></body></html>\n'
                % (name, name))
    with open(os.path.join(top, "simple", name, "index.html"), "w") as f:
        f.write('<html><body><a href="../../packages/%s#sha256=%s">%s</a>'
                '</body></html>\n' % (whl, sha, whl))
    print(sha)


def abstract_listen(name, logfile):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + name)
    s.listen(16)
    while True:
        c, _ = s.accept()
        with open(logfile, "a") as f:
            f.write("connection\n")
        c.close()


def main(argv):
    cmd = argv[1]
    if cmd == "dns":
        dns(argv[2], argv[3], argv[4:])
    elif cmd == "wheel-index":
        wheel_index(argv[2], argv[3], argv[4])
    elif cmd == "abstract-listen":
        abstract_listen(argv[2], argv[3])
    elif cmd == "direct":
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect((argv[2], int(argv[3])))
            print("connected")
        except OSError as e:
            print(errname(e))
    elif cmd == "abstract":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect("\0" + argv[2])
            print("connected")
        except OSError as e:
            print(errname(e))
    else:
        print("unknown command", cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
