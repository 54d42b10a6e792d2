#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, --stdin from an input someone else reads too (a
# worker pool fed from one queue, a terminal): the supervisor read the
# caller's standard input, a blocking file it must not switch to
# O_NONBLOCK, once poll(2) called it readable; another reader could take
# those bytes first, and the read then waited for more, holding the whole
# supervisor: a --timeout 2s skill ran on past its deadline, cancellation
# too waited, for as long as the input's writer liked.  Now it is read
# without waiting (RWF_NOWAIT, MSG_DONTWAIT, or a non-blocking file of its
# own), the caller's file left as it was.  Anonymous pipe, named FIFO and
# terminal; as root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# The FIFO and the terminal are handed to the test user: only root can.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to hand a FIFO and a terminal to uid $NOBODY"
. "$(dirname "$0")/common.sh"

# shared MODE KIND: a --timeout 2s skill that never reads, its --stdin
# (KIND pipe, fifo or pty) shared with three other readers, while the test
# writes a byte (a line, for the terminal) every 20 ms for 1.5 s, and then
# nothing, holding its end open for 12 s.  A read that would wait is seen
# (skillrun asleep in read(2) on its standard input) and no more is
# written: the race is lost at once, not only on the last byte.  Sets $id,
# $rc, $waited (seconds until skillrun exited, 12 if it had not), $flags
# (whether the caller's file is still without O_NONBLOCK) and $seen (how
# often skillrun was found waiting in a read).
shared() {
  local report
  id=sh-$2-$1
  report=$("$PYTHON3" - "$2" "$USER_UID" "$T/fifo-$id" "${pre[@]}" "$SKILLRUN" \
    --workspace-root "$w" --execution-id "$id" --audit-file "$w/$id.audit" \
    --timeout 2s --stdin "$B" -- /bin/sh -c \
    'sleep 4; date >/workspace/outputs/late; sleep 30' <<'EOF2'
import fcntl, os, pty, subprocess, sys, termios, time
kind, uid, fifo = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if kind == "pty":
    w, r = pty.openpty()
    a = termios.tcgetattr(r)
    a[3] &= ~termios.ECHO
    termios.tcsetattr(r, termios.TCSANOW, a)
    os.chown(os.ttyname(r), uid, -1)
    data = b"x\n"
elif kind == "fifo":
    os.mkfifo(fifo, 0o600)
    os.chown(fifo, uid, -1)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(r, True)
    w = os.open(fifo, os.O_WRONLY)
    data = b"x"
else:
    r, w = os.pipe()
    data = b"x"
null = subprocess.DEVNULL
p = subprocess.Popen(sys.argv[4:], stdin=r, stdout=null, stderr=null)
thieves = [subprocess.Popen(["cat"], stdin=r, stdout=null, stderr=null) for _ in range(3)]

def in_read():
    # Asleep in a read of what the test writes: read(2) on its fd 0 (x86-64
    # says so in /proc/PID/syscall), or the kernel's read functions.
    try:
        with open("/proc/%d/wchan" % p.pid) as f:
            wchan = f.read()
        with open("/proc/%d/syscall" % p.pid) as f:
            call = f.read().split()
    except OSError:
        return False
    if os.uname().machine == "x86_64" and call[:2] == ["0", "0x0"]:
        return True
    return wchan in ("pipe_read", "n_tty_read", "wait_woken")

start = time.monotonic()
seen = 0
writing = True
while p.poll() is None and time.monotonic() - start < 12:
    if writing and time.monotonic() - start < 1.5:
        os.write(w, data)
    time.sleep(0.02)
    if writing and in_read():
        time.sleep(0.05)
        if in_read():  # not a read that returned just now
            seen += 1
            writing = False
waited = time.monotonic() - start
flags = "blocking" if not fcntl.fcntl(r, fcntl.F_GETFL) & os.O_NONBLOCK else "nonblock"
os.close(w)
for t in thieves:
    t.kill()
print(p.wait(), int(waited), flags, seen)
EOF2
  )
  read -r rc waited flags seen <<<"$report"
  diag "$1: $2: exit $rc after ${waited} s; seen waiting in a read: $seen"
}

for mode in $MODES; do
  if [ $mode = user ]; then w=$WS_user pre=("${AS_USER[@]}"); else
    w=$WS_root pre=(env); fi
  for kind in pipe fifo pty; do
    shared "$mode" "$kind"
    is "$mode: $kind: a shared input: the run ends at its wall clock (124)" "$rc" 124
    check "$mode: $kind: ... without waiting for the input (${waited} s)" test "$waited" -lt 8
    check "$mode: $kind: ... the skill left no output after its deadline" \
      test ! -e "$w/default/$id/outputs/late"
    is "$mode: $kind: ... execution_completed says timeout" \
      "$(field "$w/$id.audit" execution_completed .status)" timeout
    check "$mode: $kind: ... metadata.json is there" test -s "$w/default/$id/metadata.json"
    is "$mode: $kind: ... the caller's file is still blocking" "$flags" blocking
  done
done
host_unchanged stdin-shared
finish
