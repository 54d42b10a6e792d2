#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a bundle file held under a lease: whoever owns
# a file of a bundle may take a write lease on it (fcntl(2) F_SETLEASE)
# and ignore the SIGIO that asks for it back.  skillrun's copy opens the
# file O_NONBLOCK (a FIFO swapped in must not block it), which such a
# lease turns into EWOULDBLOCK.  That ended the run as skillrun's own
# failure (exit 125, an error event with reason bundle_io, "open:
# Resource temporarily unavailable") where an --input so held is refused
# (123): a bundle's owner chose the exit status an orchestrator retries
# on.  An --input so held must stay refused at once: opened for reading
# without O_NONBLOCK, it waited out the lease break time (45 s).  The entry cannot be read: the bundle is refused (exit 123,
# bundle_rejected with reason bundle_invalid, naming it), with its record
# whole.  As root against uid 65534 and as uid 65534 against another
# local user.
. "$(dirname "$0")/../integration/lib.sh"
# The lease is another user's: only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play the caller and another local user"
command -v "$PYTHON3" >/dev/null || skip_all "no $PYTHON3 to take a lease"
. "$(dirname "$0")/common.sh"

# hold.py FILE READY STOP: a write lease on FILE, SIGIO ignored, until STOP
# appears (60 s at most); READY says it is held.
cat >"$T/hold.py" <<'EOF'
import fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
path, ready, stop = sys.argv[1:4]
fd = os.open(path, os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
open(ready, "w").close()
end = time.time() + 60
while not os.path.exists(stop) and time.time() < end:
    time.sleep(0.05)
EOF
chmod 644 "$T/hold.py"
# Leases may be off (fs.leases-enable) or not supported where $T is.
: >"$T/probe"
"$PYTHON3" -c 'import fcntl, os, sys
fcntl.fcntl(os.open(sys.argv[1], os.O_RDONLY), fcntl.F_SETLEASE, fcntl.F_WRLCK)' \
  "$T/probe" 2>/dev/null || skip_all "no file lease can be taken in $T"

# A python the other users may run (a shim under root's home may not be).
HOLD_PY=
for py in "$PYTHON3" /usr/bin/python3; do
  if setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- "$py" -c '' 2>/dev/null &&
    setpriv --reuid="$((NOBODY - 1))" --regid="$((NOBODY - 1))" --clear-groups -- "$py" -c '' 2>/dev/null; then
    HOLD_PY=$py
    break
  fi
done
[ -n "$HOLD_PY" ] || skip_all "no python3 uid $NOBODY and uid $((NOBODY - 1)) may run"

HOLDER=
trap '[ -n "$HOLDER" ] && touch "$S/stop"; wait 2>/dev/null; cleanup' EXIT

for mode in $MODES; do
  if [ $mode = user ]; then
    w=$WS_user pre=("${AS_USER[@]}") other=$((NOBODY - 1))
  else
    w=$WS_root pre=(env) other=$NOBODY
  fi
  # The other user's bundle, readable by all.
  L=$T/lease-$mode
  mkbundle "$L"
  printf 'data\n' >"$L/held"
  chown -R "$other:$other" "$L"
  chmod -R a+rX "$L"
  # The holder's ready and stop files, where it may write.
  S=$T/sync-$mode
  mkdir "$S"
  chown "$other:$other" "$S"

  # hold FILE: uid $other holds a write lease on FILE until release.
  hold() {
    rm -f "$S/ready" "$S/stop"
    setpriv --reuid="$other" --regid="$other" --clear-groups -- \
      "$HOLD_PY" "$T/hold.py" "$1" "$S/ready" "$S/stop" &
    HOLDER=$!
    for _ in $(seq 500); do
      [ -e "$S/ready" ] && break
      sleep 0.02
    done
    if [ ! -e "$S/ready" ]; then
      release
      die "$mode: uid $other could not take a lease on $1"
    fi
  }
  release() {
    touch "$S/stop"
    wait $HOLDER
    HOLDER=
  }
  # run ID: one run of the bundle; $rc, $A (the audit stream), $E.
  run() {
    A=$w/$1.audit E=$w/$1.err R=$w/default/$1
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$1" \
      "$L" -- /bin/true >"$A" 2>"$E" </dev/null
    rc=$?
  }

  run lease-$mode-free
  is "$mode: the bundle of uid $other runs while no lease is held" "$rc" 0

  hold "$L/held"
  run lease-$mode-held
  release
  is "$mode: a bundle file of uid $other held under its lease: refused (123)" "$rc" 123
  is "$mode: ... bundle_rejected reason bundle_invalid" \
    "$(field "$A" bundle_rejected .reason)" bundle_invalid
  is "$mode: ... no error event" "$(field "$A" error .reason)" ""
  check "$mode: ... the message names the bundle, the file and the lease" \
    grep -q "bundle $L: held: open (another process holds a lease on it)" "$E"
  is "$mode: ... execution_completed refused" \
    "$(field "$A" execution_completed .status)" refused
  check "$mode: ... the stream verifies" audit_ok "$A"
  check "$mode: ... the run directory's audit.jsonl is the same" cmp -s "$A" "$R/audit.jsonl"
  is "$mode: ... metadata.json says refused" "$(meta_status "$R")" refused

  # An --input of uid $other's under its lease: refused at once (123),
  # as skillrun(1) says.  Opened without O_NONBLOCK, the open waited out
  # the kernel's lease-break-time (45 s by default) before it went on.
  P=$T/plain-$mode
  mkbundle "$P"
  chmod -R a+rX "$P"
  printf 'data\n' >"$S/input"
  chown "$other:$other" "$S/input"
  chmod 644 "$S/input"
  hold "$S/input"
  A=$w/lease-$mode-input.audit
  t0=$(date +%s)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "lease-$mode-input" \
    -i "$S/input:input" "$P" -- /bin/true >"$A" 2>/dev/null </dev/null
  rc=$?
  t1=$(date +%s)
  release
  is "$mode: an --input of uid $other held under its lease: refused (123)" "$rc" 123
  is "$mode: ... input_rejected input_invalid" \
    "$(field "$A" input_rejected .reason)" input_invalid
  check "$mode: ... at once, not after the lease break time ($((t1 - t0)) s)" \
    [ $((t1 - t0)) -lt 20 ]
done

host_unchanged "bundle-lease"
finish
