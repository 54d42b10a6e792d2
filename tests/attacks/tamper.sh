#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, bundle tampering: a racing writer rewrites a
# bundle file while skillrun verifies it (the TOCTOU behind CVE-2019-5736-
# style binary swaps and every "verify then open by name" bug); each run must
# be refused (exit 123, "changed while being read") or run exactly the bytes
# whose digest bundle_verified reports.  Also: changes after verification do
# not reach the sandbox, and links, FIFOs and devices in a bundle are
# refused without hanging.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

DIGEST_PY=$TOP_SRCDIR/tests/bundle_digest.py
RUNS=${SKILLRUN_ATTACK_RACE_RUNS:-20}

# Two versions of the payload, same size, different bytes.  The in-place
# rewrite also leaves transient states on disk (empty, half written): a run
# may verify one of those, as long as it verified a consistent state and
# ran exactly it.  Each run's skill copies its payload to outputs/; the
# digest recomputed by tests/bundle_digest.py over SKILL.md plus that copy
# must equal the run's bundle_verified digest.
R=$T/race-skill
mkbundle "$R"
for v in A B; do
  mkdir -p "$T/ref$v"
  head -c 2097152 /dev/zero | tr '\0' "$v" >"$T/payload.$v"
done
cp "$T/payload.A" "$R/payload"
for v in A B; do
  mkbundle "$T/ref$v/race-skill"
  cp "$R/SKILL.md" "$T/ref$v/race-skill/SKILL.md"
  cp "$T/payload.$v" "$T/ref$v/race-skill/payload"
done
chmod -R a+rX "$T"
hash_A=$(sha256sum <"$T/payload.A" | cut -d' ' -f1)
hash_B=$(sha256sum <"$T/payload.B" | cut -d' ' -f1)
digest_A=$("$PYTHON3" "$DIGEST_PY" "$T/refA/race-skill")
digest_B=$("$PYTHON3" "$DIGEST_PY" "$T/refB/race-skill")
check "the two reference digests differ" [ "$digest_A" != "$digest_B" ]
is "skillrun agrees with tests/bundle_digest.py on version A" \
  "$("$SKILLRUN" --digest "$T/refA/race-skill" | cut -d' ' -f1)" "$digest_A"

# The racing writer: rewrites the payload in place (same inode: truncate
# and write, as an editor or `cp` does) and by rename from outside the
# bundle (a new inode), as fast as it can, until $T/stop appears.  Stopped
# by that file, not by a signal: killing the loop's shell would leave its
# current cp or mv running, and a late `mv next payload` could put version
# B back after the payload was reset to A.
writer() {
  while [ ! -e "$T/stop" ]; do
    cat "$T/payload.B" >"$R/payload"
    cat "$T/payload.A" >"$R/payload"
    cp "$T/payload.B" "$T/next" && mv -f "$T/next" "$R/payload"
    cp "$T/payload.A" "$T/next" && mv -f "$T/next" "$R/payload"
  done
}
WRITER=
trap '[ -n "$WRITER" ] && kill $WRITER 2>/dev/null; wait 2>/dev/null; cleanup' EXIT

for mode in $MODES; do
  if [ $mode = user ]; then w=$WS_user; else w=$WS_root; fi
  writer &
  WRITER=$!
  refused=0 ran=0 bad=0 transient=0
  for i in $(seq "$RUNS"); do
    id=race-$mode-$i
    if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" --audit-file "$w/$id.audit" \
      "$R" -- /bin/sh -c 'p=/workspace/inputs/bundle/payload; sha256sum < $p; cp $p /workspace/outputs/payload' \
      >/dev/null 2>"$w/$id.err"
    rc=$?
    verified=$(field "$w/$id.audit" bundle_verified .digest)
    printed=$(cut -d' ' -f1 "$w/default/$id/logs/stdout.log" 2>/dev/null)
    recomputed=
    if [ $rc -eq 0 ] && [ -f "$w/default/$id/outputs/payload" ]; then
      mkdir -p "$T/check/$id/race-skill"
      cp "$R/SKILL.md" "$w/default/$id/outputs/payload" "$T/check/$id/race-skill/"
      chmod 644 "$T/check/$id/race-skill/payload"
      recomputed=$("$PYTHON3" "$DIGEST_PY" "$T/check/$id/race-skill")
      harvested=$(sha256sum <"$T/check/$id/race-skill/payload" | cut -d' ' -f1)
    fi
    if [ $rc -eq 123 ] && grep -q 'changed while being read' "$w/$id.err" "$w/$id.audit"; then
      refused=$((refused + 1))
    elif [ $rc -eq 0 ] && [ -n "$verified" ] && [ "$recomputed" = "$verified" ] &&
      [ "$printed" = "$harvested" ]; then
      ran=$((ran + 1))
      case "$printed" in
      "$hash_A" | "$hash_B") ;;
      *) transient=$((transient + 1)) ;;
      esac
    else
      bad=$((bad + 1))
      diag "$mode run $i: exit $rc, printed '$printed', verified '$verified', recomputed '$recomputed'"
      sed 's/^/#   /' "$w/$id.err" | head -n 5
    fi
  done
  touch "$T/stop"
  wait $WRITER 2>/dev/null
  rm -f "$T/stop"
  WRITER=
  cp "$T/payload.A" "$R/payload"
  diag "$mode: $RUNS racing runs: $refused refused, $ran ran verified bytes ($transient of them a transient on-disk state)"
  is "$mode: every racing run was refused or ran exactly the verified bytes" "$bad" 0

  # A change after verification does not reach the running skill.
  id=late-$mode
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" --audit-file "$w/$id.audit" \
    "$R" -- /bin/sh -c 'sleep 1; sha256sum < /workspace/inputs/bundle/payload' >/dev/null 2>&1 &
  sup=$!
  # Slow builds (ASan) can take seconds to get there: wait up to 30 s, and
  # only then change the source.
  seen=no
  for _ in $(seq 600); do
    [ -n "$(field "$w/$id.audit" bundle_verified .digest 2>/dev/null)" ] && { seen=yes; break; }
    sleep 0.05
  done
  cat "$T/payload.B" >"$R/payload"
  wait $sup
  is "$mode: a run whose source changed after verification exits 0" "$?:$seen" 0:yes
  is "$mode: ... it verified version A" "$(field "$w/$id.audit" bundle_verified .digest)" \
    "$digest_A"
  is "$mode: ... and the skill saw the verified bytes" \
    "$(cut -d' ' -f1 "$w/default/$id/logs/stdout.log")" "$hash_A"
  cp "$T/payload.A" "$R/payload"

  # Pinning: the digest of A refuses B.
  cat "$T/payload.B" >"$R/payload"
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "pin-$mode" \
    --expect-sha256 "${digest_A#sha256:}" "$R" -- /bin/true >/dev/null 2>&1
  is "$mode: a bundle that no longer matches its pin is refused" "$?" 123
  cp "$T/payload.A" "$R/payload"
done

# Things that are not files in the bundle: each refused with 123, quickly
# (a FIFO must not block the verifier: the classic open-a-FIFO DoS).
bad_bundle() { # NAME SETUP-COMMAND...
  local d=$T/bad-$1
  shift
  mkbundle "$d"
  (cd "$d" && "$@")
  chmod -R a+rX "$d" 2>/dev/null
  local t0 w
  t0=$(date +%s)
  if [ "$ANY_MODE" = user ]; then w=$WS_user; else w=$WS_root; fi
  timeout 20 "$SKILLRUN" --workspace-root "$w" --execution-id "bad-$(basename "$d")" \
    "$d" -- /bin/true >/dev/null 2>&1
  local rc=$?
  is "a bundle with ${d##*/bad-} is refused" "$rc" 123
  check "... within seconds" [ $(($(date +%s) - t0)) -lt 10 ]
}
bad_bundle symlink-to-shadow ln -s /etc/shadow shadow
bad_bundle symlink-dir ln -s / root
bad_bundle fifo mkfifo pipe
if needs_root "a bundle with a character device (mknod)"; then
  bad_bundle chardev mknod null c 1 3
fi
bad_bundle socket "$PYTHON3" -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'

# A bundle over the file cap (10,000 entries) is refused at the entry where
# one walker in pre-order reaches the cap, and nothing past it is walked,
# also when the root's subtrees are shared between two walkers (bundle.c
# walk_root: the second counts the first's entries; it used to walk up to
# the cap on its own, reading what lies past it).  SKILL.md and a/ are
# walked before the split, b and c by the first walker, d/ (9,900 files)
# and e/ by the second; the cap falls inside d/.  Whether e/ was read shows
# in its access time, set far in the past.
W=$T/wide-over-cap
mkbundle "$W"
mkdir "$W/a" "$W/d" "$W/e"
(cd "$W/a" && seq -w 1 300 | sed 's/^/f/' | xargs touch)
(cd "$W/d" && seq -w 1 9900 | sed 's/^/f/' | xargs touch)
: >"$W/b"
: >"$W/c"
: >"$W/e/x"
chmod -R a+rX "$W"
touch -a -d @1 "$W/e"
if [ "$ANY_MODE" = user ]; then w=$WS_user; else w=$WS_root; fi
timeout 60 "$SKILLRUN" --workspace-root "$w" --execution-id wide-over-cap \
  "$W" -- /bin/true >/dev/null 2>"$T/wide.err"
is "a wide bundle over the file cap is refused" "$?" 123
check "... at the entry one walker reaches the cap at (d/)" \
  grep -q "bundle $W: d/f[0-9]*: too many files" "$T/wide.err"
is "... and the directory past the cap was not read" "$(stat -c %X "$W/e")" 1
ls "$W/e" >/dev/null
[ "$(stat -c %X "$W/e")" != 1 ] ||
  diag "reading a directory does not move its access time here: the last check proves nothing"

host_unchanged "tamper"
finish
