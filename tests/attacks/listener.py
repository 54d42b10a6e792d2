# SPDX-License-Identifier: GPL-2.0-or-later
"""Host-side bait for tests/attacks/ipc-net.sh: listens on TCP and UDP
127.0.0.1 (one ephemeral port for both), a unix socket path and an abstract
unix socket; writes "PORT" to argv[1] once ready and appends one line per
connection or datagram to argv[2].  Runs until killed."""
import os
import select
import socket
import sys

port_file, log_file, path, abstract = sys.argv[1:5]

tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.bind(("127.0.0.1", 0))
tcp.listen(8)
port = tcp.getsockname()[1]
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", port))
unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
unix.bind(path)
os.chmod(path, 0o777)
unix.listen(8)
abst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
abst.bind("\0" + abstract)
abst.listen(8)

with open(port_file + ".tmp", "w") as f:
    f.write(str(port))
os.rename(port_file + ".tmp", port_file)

names = {tcp: "tcp", udp: "udp", unix: "unix", abst: "abstract"}
while True:
    ready, _, _ = select.select(list(names), [], [])
    for s in ready:
        if s is udp:
            s.recvfrom(4096)
        else:
            c, _ = s.accept()
            c.close()
        with open(log_file, "a") as f:
            f.write(names[s] + "\n")
