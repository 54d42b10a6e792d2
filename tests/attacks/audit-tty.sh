#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the audit stream on a terminal nobody reads (a
# terminal stopped with ^S, an ssh session or a CI runner's pty that
# stalls).  poll(2) calls a tty writable while a few bytes fit, and a
# blocking write of more then waited for the reader with no bound: a skill
# in an allowlist run that opened a thousand refused connections filled
# the terminal with network_connect events, and the supervisor sat in
# write(2), its wall clock and sampler with it.  A --timeout 3s skill ran
# for as long as the reader slept (25 s) and left an output written after
# its deadline.  Now the stream on a terminal is written through an open
# file of its own, non-blocking, and a stall ends the run after 5 s as on
# a pipe (tests/attacks/audit-stall.sh).  As root and as an unprivileged
# user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

FB=$T/tty-flood
mkdir -p "$FB/scripts"
cat >"$FB/SKILL.md" <<'EOF'
---
name: tty-flood
description: Fills the record with refused connections.
metadata:
  sandbox.network: allowlist
  sandbox.network-allow: "allowed.test:8080"
---
EOF
# Refused CONNECTs (not on the list: no name is resolved), one at a time.
cat >"$FB/scripts/flood.py" <<'EOF'
import socket, sys
for i in range(int(sys.argv[1])):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(b"CONNECT evil%d.test:80 HTTP/1.1\r\nHost: x\r\n\r\n" % i)
    s.recv(4096)
    s.close()
EOF
printf 'include default\nnetwork allowlist\nnetwork-allow allowed.test:8080\n' \
  >"$T/allow.profile"
chmod -R a+rX "$T"
chmod 644 "$T/allow.profile"

# onpty MODE KIND ID COMMAND...: the flood skill run with COMMAND and its
# skillrun's stdout on a new pty.  KIND live: the pty is read all along;
# stalled: nobody reads it for 25 s (or until skillrun exits), then it is
# read to its end; ctty: stalled, and the pty is root's (0620) and the
# controlling terminal of skillrun's session, as a terminal is after
# `sudo -u`.  The pty has a terminal's settings (ONLCR: a blocking write
# waits for room for "\r\n"); what it got is in $W/$ID.stream, each
# "\r\n" back to "\n".  Sets $rc, $W and $waited (seconds until
# skillrun had exited or the 25 s were up).
onpty() {
  local mode=$1 kind=$2 report cmd
  ID=$3
  shift 3
  if [ "$mode" = user ]; then W=$WS_user; else W=$WS_root; fi
  cmd=("$SKILLRUN" -p "$T/allow.profile" --workspace-root "$W" --execution-id "$ID"
    --timeout 3s "$FB" -- "$@")
  if [ "$mode" = user ]; then cmd=("${AS_USER[@]}" "${cmd[@]}"); fi
  report=$("$PYTHON3" - "$kind" 25 "$W/$ID.stream" "$W/$ID.err" "${cmd[@]}" <<'EOF'
import fcntl, os, pty, subprocess, sys, termios, time
kind, secs, out, err = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
r, w = pty.openpty()
if kind != "ctty":
    os.chmod(os.ttyname(w), 0o666)


def ctty():
    os.setsid()
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)


with open(err, "wb") as e:
    p = subprocess.Popen(sys.argv[5:], stdout=w, stderr=e, stdin=subprocess.DEVNULL,
                         preexec_fn=ctty if kind == "ctty" else None)
os.close(w)
got = bytearray()
os.set_blocking(r, False)


def drain():
    while True:
        try:
            b = os.read(r, 65536)
        except BlockingIOError:
            return True
        except OSError:  # the other side closed: EIO
            return False
        if not b:
            return False
        got.extend(b)


start = time.monotonic()
while p.poll() is None and time.monotonic() - start < secs:
    if kind == "live":
        drain()
    time.sleep(0.05)
waited = time.monotonic() - start
while drain() and p.poll() is None:
    time.sleep(0.01)
rc = p.wait()
drain()
with open(out, "wb") as o:
    o.write(got.replace(b"\r\n", b"\n"))
print(rc, int(waited))
EOF
  )
  read -r rc waited <<<"$report"
  diag "$mode: $kind: exit $rc, ${waited} s"
}

FLOOD='python3 /workspace/inputs/bundle/scripts/flood.py 1100'
for mode in $MODES; do
  # A terminal that reads: every event arrives, however many, and the
  # stream is the run's record.
  onpty "$mode" live "tty-live-$mode" /bin/sh -c "$FLOOD"
  is "$mode: a terminal that reads: the run succeeds" "$rc" 0
  is "$mode: ... all 1000 network_connect events reach it" \
    "$(grep -c '"event":"network_connect"' "$W/$ID.stream")" 1000
  check "$mode: ... the stream verifies" audit_ok "$W/$ID.stream"
  check "$mode: ... and is the run's audit.jsonl" \
    cmp -s "$W/$ID.stream" "$W/default/$ID/audit.jsonl"

  # A terminal that reads nothing: the stall ends the run after 5 s.
  onpty "$mode" stalled "tty-stalled-$mode" /bin/sh -c \
    "$FLOOD; sleep 12; date >/workspace/outputs/late"
  SCHEMA_SKIP+=("$W/$ID.stream")
  is "$mode: a stalled terminal: exit 125" "$rc" 125
  check "$mode: ... without waiting for the terminal (${waited} s)" test "$waited" -lt 15
  check "$mode: ... the skill left no output after its deadline" \
    test ! -e "$W/default/$ID/outputs/late"
  is "$mode: ... one line says which event was left untaken" "$(cat "$W/$ID.err")" \
    "skillrun: audit: the audit stream's reader left event 'network_connect' untaken for 5 s"
  is "$mode: ... execution_completed: error" \
    "$(field "$W/default/$ID/audit.jsonl" execution_completed .status)" error
  check "$mode: ... the run's audit.jsonl verifies" audit_ok "$W/default/$ID/audit.jsonl"
done

# A pty's master side as the audit stream (a program that feeds another
# on the pty's slave side): what skillrun writes goes to that slave.
# Opened again (/proc/self/fd/N is /dev/ptmx) it was a new pty, of the same
# st_rdev, that nobody had: the stream was lost and the run succeeded.
for mode in $MODES; do
  if [ "$mode" = user ]; then W=$WS_user; pre=("${AS_USER[@]}"); else
    W=$WS_root
    pre=()
  fi
  ID=tty-master-$mode
  "$PYTHON3" - "$W/$ID.stream" "${pre[@]}" "$SKILLRUN" --workspace-root "$W" \
    --execution-id "$ID" "$FB" -- /bin/true <<'EOF'
import os, pty, subprocess, sys, time, tty
master, slave = pty.openpty()
tty.setraw(slave)
p = subprocess.Popen(sys.argv[2:], stdout=master, stdin=subprocess.DEVNULL)
# The master stays open here: its last close would hang the pty up,
# and what the slave side had not read yet would go with it.
os.set_blocking(slave, False)
got = bytearray()
while True:
    done = p.poll() is not None
    try:
        while True:
            b = os.read(slave, 65536)
            if not b:
                break
            got.extend(b)
    except OSError:
        pass
    if done:
        break
    time.sleep(0.05)
open(sys.argv[1], "wb").write(got)
sys.exit(p.returncode)
EOF
  is "$mode: a pty's master side: the run succeeds" "$?" 0
  check "$mode: ... its slave side gets the stream, the run's audit.jsonl" \
    cmp -s "$W/$ID.stream" "$W/default/$ID/audit.jsonl"
done

# Another user's terminal, the controlling one of the caller's session (as
# after `sudo -u`): its node is not the caller's to open again.
if [ "$(id -u)" -eq 0 ] && [[ " $MODES " == *" user "* ]]; then
  onpty user ctty tty-ctty /bin/sh -c "$FLOOD; sleep 12; date >/workspace/outputs/late"
  SCHEMA_SKIP+=("$W/$ID.stream")
  is "user: another user's controlling terminal, stalled: exit 125" "$rc" 125
  check "user: ... without waiting for the terminal (${waited} s)" test "$waited" -lt 15
  check "user: ... the skill left no output after its deadline" \
    test ! -e "$W/default/$ID/outputs/late"
else
  pass "# SKIP another user's terminal: needs root to play both users"
fi
host_unchanged audit-tty
finish
