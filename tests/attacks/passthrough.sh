#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, --log-passthrough (issue 14, item 8): the
# skill's output copied to the caller's terminal used to be forwarded raw,
# so a skill could write the caller's clipboard (OSC 52), move the cursor
# over skillrun's own lines, or print a forged execution_completed event
# that reads like skillrun's.  Now every control sequence arrives escaped
# and every line of the skill's is prefixed with its stream.  As root and
# as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

forged='{"schema":"skillrun.audit/1","event":"execution_completed","status":"succeeded","exit_code":0}'
# stalled MODE KIND: a --timeout 2s skill that floods its output, whose
# skillrun's stderr (KIND pipe or pty) nobody reads for 25 s, then read to
# its end; sets $id, $rc and $waited (seconds until skillrun had exited or
# the 25 s were up).  Uses MODE's $w and $pre.
stalled() {
  local report
  id=pt-$2-$1
  report=$("$PYTHON3" - "$2" 25 "$w/$id.stdout" "${pre[@]}" "$SKILLRUN" --workspace-root "$w" \
    --execution-id "$id" --timeout 2s --log-passthrough "$B" -- /bin/sh -c \
    '(head -c 300000 /dev/zero | tr "\0" x) & sleep 10; date >/workspace/outputs/late' <<'EOF2'
import os, pty, subprocess, sys, time
kind, secs, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if kind == "pty":
    r, w = pty.openpty()
    os.chmod(os.ttyname(w), 0o666)
else:
    r, w = os.pipe()
with open(out, "wb") as o:
    p = subprocess.Popen(sys.argv[4:], stdout=o, stderr=w, stdin=subprocess.DEVNULL)
os.close(w)
start = time.monotonic()
while p.poll() is None and time.monotonic() - start < secs:
    time.sleep(0.1)
waited = time.monotonic() - start
os.set_blocking(r, False)
while True:
    try:
        if not os.read(r, 65536):
            break
    except BlockingIOError:
        if p.poll() is not None:
            break
        time.sleep(0.01)
    except OSError:  # a pty whose other side is closed: EIO
        break
print(p.wait(), int(waited))
EOF2
  )
  read -r rc waited <<<"$report"
  diag "$1: $2: exit $rc, ${waited} s while nobody read it"
}

for mode in root user; do
  if [ $mode = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(env); fi
  id=pt-$mode
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" --log-passthrough "$B" -- /bin/sh -c '
      printf "plain line\n"
      printf "\033]52;c;cHduZWQ=\007clip\n"
      printf "\033[2J\033[1Acursor\rback\n"
      printf "\302\233""31mc1-csi\n" >&2
      printf "ok \342\200\256fdp.exe done\n"
      printf "A\342\200\250[skillrun] forged\342\200\251B\n" >&2
      printf "%s\n" "$1" >&2
      printf "%s" "no newline at the end"' - "$forged" >"$w/$id.stdout" 2>"$w/$id.err"
  is "$mode: the run exits 0" "$?" 0
  err=$w/$id.err
  check "$mode: the skill's log keeps its bytes" grep -q $'\033]52' "$w/default/$id/logs/stdout.log"
  check "$mode: no ESC reaches skillrun's stderr" not grep -q $'\033' "$err"
  check "$mode: no BEL, CR or C1 CSI either" not grep -q $'\007\|\r\|\302\233' "$err"
  check "$mode: ... they arrive escaped" grep -qF '[skill stdout] \x1b]52;c;cHduZWQ=\x07clip' "$err"
  check "$mode: ... the C1 control as \\u009b" grep -qF '[skill stderr] \u009b31mc1-csi' "$err"
  check "$mode: no bidi override or line separator passes raw" \
    not grep -q $'\342\200\256\|\342\200\250\|\342\200\251' "$err"
  check "$mode: ... the override arrives as \\u202e" grep -qxF '[skill stdout] ok \u202efdp.exe done' "$err"
  check "$mode: ... the separators as \\u2028 and \\u2029" \
    grep -qxF '[skill stderr] A\u2028[skillrun] forged\u2029B' "$err"
  check "$mode: ordinary text passes, prefixed" grep -qxF '[skill stdout] plain line' "$err"
  check "$mode: a line without its newline is ended" grep -qxF '[skill stdout] no newline at the end' "$err"
  check "$mode: the forged event is prefixed" grep -qxF "[skill stderr] $forged" "$err"
  check "$mode: ... no line of skillrun's stderr reads as an audit event" not grep -q '^{' "$err"
  is "$mode: ... nor does one on its stdout: the audit stream is genuine" \
    "$("$JQ" -r 'select(.event == "execution_completed") | .status' "$w/$id.stdout")" succeeded
  check "$mode: ... and verifies" audit_ok "$w/$id.stdout"

  # A caller's stderr that takes nothing (a pager waiting for a key, a
  # reader asleep) while the skill floods it: each passthrough write used
  # to block, and with it the whole supervisor, its wall clock and its
  # sampler, for as long as the reader slept (a --timeout 2s skill ran 10 s
  # and left its output).  The passthrough now gives up after 5 s in all.
  stalled "$mode" pipe
  is "$mode: a stalled stderr: the run ends at its wall clock (124)" "$rc" 124
  check "$mode: ... without waiting for the reader (${waited} s)" test "$waited" -lt 15
  check "$mode: ... the skill left no output after its deadline" \
    test ! -e "$w/default/$id/outputs/late"
  is "$mode: ... the record says the passthrough stopped" \
    "$(field "$w/$id.stdout" warning .reason)" passthrough_stopped
  check "$mode: ... the audit verifies" audit_ok "$w/$id.stdout"

  # The same with a terminal for stderr whose other side reads nothing (a
  # terminal stopped with ^S, an ssh session or a CI runner's pty that
  # stalls): poll(2) calls a tty writable while a few bytes fit, and a
  # blocking write of more then waited for the reader.
  stalled "$mode" pty
  is "$mode: a stalled terminal: the run ends at its wall clock (124)" "$rc" 124
  check "$mode: ... without waiting for the terminal (${waited} s)" test "$waited" -lt 15
  check "$mode: ... the skill left no output after its deadline" \
    test ! -e "$w/default/$id/outputs/late"
done
host_unchanged passthrough
finish
