#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, bundle tampering: whoever can write in a bundle
# directory removes entries while skillrun walks and copies it (a file and
# a directory that come and go as fast as a loop can make them).  A name
# the walk listed and that is gone when it is stat'ed or opened, or a
# directory gone or made a file between its stat and its open, is the
# bundle changing while it is read: each run must be refused (exit 123,
# bundle_rejected with reason bundle_changed, execution_completed
# refused) or run; never end as an I/O error of skillrun's (exit 125,
# reason bundle_io), which it used to.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

RUNS=${SKILLRUN_ATTACK_RACE_RUNS:-20}

# "a" and "b" sort before z/, whose 2000 files the walk stats (and the
# copy then reads) after them: a window of milliseconds in which the
# racer removes what the walk saw.
V=$T/vanish-skill
mkbundle "$V"
mkdir "$V/z"
(cd "$V/z" && seq -w 1 2000 | sed 's/^/f/' | xargs touch)
chmod -R a+rX "$T"

# The racer: a file a (created, removed) and a directory b (made, removed,
# made a file, removed), until $T/stop appears.
cat >"$T/racer.py" <<'EOF'
import os, sys
d, stop = sys.argv[1], sys.argv[2]
os.umask(0o022)
a, b = os.path.join(d, "a"), os.path.join(d, "b")
while not os.path.exists(stop):
    os.close(os.open(a, os.O_CREAT | os.O_WRONLY, 0o644))
    os.mkdir(b, 0o755)
    os.unlink(a)
    os.rmdir(b)
    os.close(os.open(b, os.O_CREAT | os.O_WRONLY, 0o644))
    os.unlink(b)
EOF
RACER=
trap '[ -n "$RACER" ] && touch "$T/stop"; wait 2>/dev/null; cleanup' EXIT

for mode in $MODES; do
  if [ $mode = user ]; then w=$WS_user; else w=$WS_root; fi
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  rm -f "$T/stop"
  "$PYTHON3" "$T/racer.py" "$V" "$T/stop" &
  RACER=$!
  refused=0 ran=0 bad=0
  for i in $(seq "$RUNS"); do
    id=vanish-$mode-$i
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
      --audit-file "$w/$id.audit" "$V" -- /bin/true >/dev/null 2>"$w/$id.err"
    rc=$?
    reason=$(field "$w/$id.audit" bundle_rejected .reason 2>/dev/null)
    status=$(field "$w/$id.audit" execution_completed .status 2>/dev/null)
    if [ $rc -eq 123 ] && [ "$reason" = bundle_changed ] &&
      [ "$status" = refused ] &&
      grep -q 'changed while being read' "$w/$id.err"; then
      refused=$((refused + 1))
    elif [ $rc -eq 0 ] && [ "$status" = succeeded ]; then
      ran=$((ran + 1))
    else
      bad=$((bad + 1))
      diag "$mode run $i: exit $rc, bundle_rejected reason '$reason', status '$status'"
      sed 's/^/#   /' "$w/$id.err" | head -n 3
    fi
  done
  touch "$T/stop"
  wait $RACER 2>/dev/null
  RACER=
  rm -f "$V/a" "$T/stop"
  rm -rf "$V/b"
  diag "$mode: $RUNS racing runs: $refused refused as changed, $ran ran"
  [ $((refused + bad)) -gt 0 ] ||
    diag "$mode: no run met the racer: the checks below prove little here"
  is "$mode: every run whose bundle lost an entry was refused as changed (123), none failed (125)" \
    "$bad" 0
done

host_unchanged "bundle-vanish"
finish
