# SPDX-License-Identifier: GPL-2.0-or-later
"""Test servers and raw clients for tests/integration/proxy.sh.

Servers (run on the host side):
  echo ADDR PORT                 echo every connection's bytes
  sink ADDR PORT COUNTFILE       discard; append each connection's byte count
  wait-port ADDR PORT            wait (10 s) until something listens
Clients (run in the sandbox's network namespace; PROXY is the proxy port on
127.0.0.1):
  connect-echo PROXY HOST PORT MSG    CONNECT, send MSG, print the echo
  connect-status PROXY HOST PORT      CONNECT, print "STATUS X-Proxy-Error"
  raw-status PROXY TEXT               send TEXT (\\r\\n escapes), print status
  forward-head PROXY URL              GET URL in absolute form with
                                      hop-by-hop headers, to an echo server:
                                      print the head the origin received
  socks PROXY ATYP HOST PORT          SOCKS5 CONNECT (ATYP 1, 3 or 4); print
                                      the reply code, then the echo of "ping"
  socks-bind PROXY                    SOCKS5 BIND: print the reply code
  idle PROXY                          connect, say nothing, print seconds
                                      until the proxy closes
  egress PROXY HOST PORT BYTES        CONNECT, send BYTES; print "sent=N"
  closes PROXY HOST PORT THREADS N    THREADS threads, each N times in turn:
                                      CONNECT, read the reply, close; print
                                      "STATUS*COUNT,..." over all of them
  hold PROXY HOST PORT FILE           CONNECT, write "ok" to FILE, then keep
                                      the tunnel open until killed
  urllib URL                          urllib with the environment's proxies:
                                      print the body or "HTTP STATUS ERROR"
"""
import os
import socket
import socketserver
import sys
import threading
import time
import urllib.error
import urllib.request


def recv_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        b = s.recv(1)
        if not b:
            break
        data += b
    return data.decode("latin-1")


def status_of(head):
    line = head.split("\r\n", 1)[0]
    parts = line.split(" ")
    code = parts[1] if len(parts) > 1 else "none"
    err = "-"
    for h in head.split("\r\n")[1:]:
        if h.lower().startswith("x-proxy-error:"):
            err = h.split(":", 1)[1].strip()
    return code, err


def dial(proxy):
    return socket.create_connection(("127.0.0.1", int(proxy)), timeout=15)


def connect(proxy, host, port):
    s = dial(proxy)
    s.sendall(("CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n"
               % (host, port, host, port)).encode())
    return s, recv_head(s)


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            b = self.request.recv(65536)
            if not b:
                return
            self.request.sendall(b)


def main(argv):
    cmd = argv[1]
    if cmd in ("echo", "sink"):
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        socketserver.ThreadingTCPServer.daemon_threads = True
        if cmd == "echo":
            handler = Echo
        else:
            countfile = argv[4]
            lock = threading.Lock()

            class Sink(socketserver.BaseRequestHandler):
                def handle(self):
                    n = 0
                    while True:
                        b = self.request.recv(65536)
                        if not b:
                            break
                        n += len(b)
                    with lock, open(countfile, "a") as f:
                        f.write("%d\n" % n)
            handler = Sink
        srv = socketserver.ThreadingTCPServer((argv[2], int(argv[3])), handler)
        srv.serve_forever()
    elif cmd == "wait-port":
        end = time.time() + 10
        while time.time() < end:
            try:
                socket.create_connection((argv[2], int(argv[3])), 1).close()
                return 0
            except OSError:
                time.sleep(0.05)
        return 1
    elif cmd == "connect-echo":
        s, head = connect(argv[2], argv[3], argv[4])
        if status_of(head)[0] != "200":
            print("refused", *status_of(head))
            return 1
        s.sendall(argv[5].encode())
        got = b""
        while len(got) < len(argv[5]):
            b = s.recv(100)
            if not b:
                break
            got += b
        print(got.decode())
    elif cmd == "connect-status":
        s, head = connect(argv[2], argv[3], argv[4])
        print(*status_of(head))
    elif cmd == "raw-status":
        s = dial(argv[2])
        s.sendall(argv[3].replace("\\r\\n", "\r\n").encode())
        print(*status_of(recv_head(s)))
    elif cmd == "forward-head":
        s = dial(argv[2])
        url = argv[3]
        hostport = url.split("/")[2]
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n"
                   "Proxy-Connection: keep-alive\r\n"
                   "Proxy-Authorization: Basic c2VjcmV0OnNlY3JldA==\r\n"
                   "Connection: keep-alive, X-Hop\r\n"
                   "X-Hop: must-not-pass\r\n"
                   "X-Kept: yes\r\n\r\n" % (url, hostport)).encode())
        sys.stdout.write(recv_head(s).replace("\r\n", "|"))
        print()
    elif cmd == "socks":
        s = dial(argv[2])
        s.sendall(b"\x05\x01\x00")
        if s.recv(2) != b"\x05\x00":
            print("greeting refused")
            return 1
        atyp, host, port = int(argv[3]), argv[4], int(argv[5])
        if atyp == 1:
            addr = socket.inet_pton(socket.AF_INET, host)
        elif atyp == 4:
            addr = socket.inet_pton(socket.AF_INET6, host)
        else:
            addr = bytes([len(host)]) + host.encode()
        s.sendall(b"\x05\x01\x00" + bytes([atyp]) + addr +
                  port.to_bytes(2, "big"))
        rep = s.recv(10)
        print(rep[1] if len(rep) > 1 else "none")
        if len(rep) > 1 and rep[1] == 0:
            s.sendall(b"ping")
            print(s.recv(4).decode())
    elif cmd == "socks-bind":
        s = dial(argv[2])
        s.sendall(b"\x05\x01\x00")
        s.recv(2)
        s.sendall(b"\x05\x02\x00\x01\x0b\x00\x00\x02\x1b\x5f")
        rep = s.recv(10)
        print(rep[1] if len(rep) > 1 else "none")
    elif cmd == "idle":
        s = dial(argv[2])
        s.settimeout(10)
        t0 = time.time()
        try:
            while s.recv(100):
                pass
            print("%.2f" % (time.time() - t0))
        except socket.timeout:
            print("timeout")
    elif cmd == "egress":
        s, head = connect(argv[2], argv[3], argv[4])
        if status_of(head)[0] != "200":
            print("refused", *status_of(head))
            return 1
        total, sent, chunk = int(argv[5]), 0, b"x" * 16384
        try:
            while sent < total:
                sent += s.send(chunk[:min(len(chunk), total - sent)])
        except OSError:
            pass
        print("sent=%d" % sent)
    elif cmd == "closes":
        codes, lock = {}, threading.Lock()

        def one_by_one():
            for _ in range(int(argv[6])):
                try:
                    s, head = connect(argv[2], argv[3], argv[4])
                    code = status_of(head)[0]
                    s.close()
                except OSError as e:
                    code = "error-%s" % e.errno
                with lock:
                    codes[code] = codes.get(code, 0) + 1
        threads = [threading.Thread(target=one_by_one)
                   for _ in range(int(argv[5]))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(",".join("%s*%d" % kv for kv in sorted(codes.items())))
    elif cmd == "hold":
        s, head = connect(argv[2], argv[3], argv[4])
        with open(argv[5], "w") as f:
            f.write("ok\n" if status_of(head)[0] == "200" else
                    "refused %s %s\n" % status_of(head))
        time.sleep(600)
    elif cmd == "urllib":
        try:
            with urllib.request.urlopen(argv[2], timeout=15) as r:
                sys.stdout.write(r.read().decode())
        except urllib.error.HTTPError as e:
            print("HTTP", e.code, e.headers.get("X-Proxy-Error"))
    else:
        print("unknown command", cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
