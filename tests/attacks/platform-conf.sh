#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, platform configuration (issue 14, item 6): it
# fails closed.  A skillrun.conf that is not root's alone (a 0666 file, or
# an ordinary user's own) stops the run with the reason instead of being
# ignored, which used to drop its require-capability, require-signature and
# lowered caps; an explicit --conf that does not exist stops the run; a
# profile value that is not UTF-8 is a file:line error instead of erasing
# the policy from the audit ("policy": null).  As root and as an
# unprivileged user; in every refused case the skill never ran.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

printf 'require-capability yes\nmemory 64M\n' >"$T/lax.conf"
chmod 666 "$T/lax.conf" # root's, but anyone may rewrite it
printf 'require-capability yes\n' >"$T/strict.conf"
chmod 644 "$T/strict.conf"
printf 'require-capability yes\n' >"$T/users.conf"
chown "$NOBODY" "$T/users.conf"
chmod 644 "$T/users.conf"
printf 'include default\nhostname caf\351\n' >"$T/latin1.profile"
chmod 644 "$T/latin1.profile"
chmod a+rx "$T"

n=0
# try MODE SKILLRUN-ARGS...: one run whose skill leaves outputs/ran; sets
# $rc, $AUDIT, $ERR and $RAN (yes when the skill ran).
try() {
  local mode=$1 w pre=()
  shift
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(env); fi
  AUDIT=$w/c$n.audit ERR=$w/c$n.err
  timeout 60 "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "c$n" --audit-file "$AUDIT" \
    "$@" "$B" -- /bin/sh -c ': >/workspace/outputs/ran' >/dev/null 2>"$ERR"
  rc=$?
  RAN=no
  [ -e "$w/default/c$n/outputs/ran" ] && RAN=yes
}

# The control: a root-owned 0644 conf is honoured (its require-capability
# refuses a run without one).
try root --conf "$T/strict.conf"
is "root: a root-owned 0644 conf is honoured: refused without a capability" \
  "$rc:$(field "$AUDIT" bundle_rejected .reason)" 123:capability_required

try root --conf "$T/lax.conf"
is "root: a 0666 skillrun.conf stops the run (125)" "$rc" 125
check "root: ... naming the file and why" grep -q "lax.conf is not root's alone.*mode 0666" "$ERR"
is "root: ... the skill never ran" "$RAN" no
is "root: ... recorded as config_invalid" "$(field "$AUDIT" error .reason)" config_invalid
is "root: ... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error

for mode in root user; do
  try $mode --conf "$T/users.conf"
  is "$mode: a conf the test user owns stops the run (125)" "$rc" 125
  check "$mode: ... naming its owner" grep -q "users.conf is not root's alone (owner uid $NOBODY" "$ERR"
  is "$mode: ... the skill never ran" "$RAN" no

  try $mode --conf "$T/absent.conf"
  is "$mode: a --conf that does not exist stops the run (125)" "$rc" 125
  check "$mode: ... saying so" grep -q -- "--conf $T/absent.conf cannot be opened: No such file" "$ERR"
  is "$mode: ... the skill never ran" "$RAN" no

  try $mode -p "$T/latin1.profile"
  is "$mode: a profile value that is not UTF-8 stops the run (125)" "$rc" 125
  check "$mode: ... naming file:line" grep -q "latin1.profile:2: not valid UTF-8" "$ERR"
  is "$mode: ... the skill never ran" "$RAN" no
  check "$mode: ... and no policy_resolved without its policy" \
    not grep -q '"policy":null' "$AUDIT"

  # Any caller may name another root-owned configuration, and so drop the
  # default's require-capability (skillrun has no privilege to hold its
  # own caller to a file): the record names the file read, so that a
  # reader can tell.
  printf 'memory 128M\n' >"$T/other.conf"
  chmod 644 "$T/other.conf"
  try $mode --conf "$T/other.conf"
  is "$mode: another root-owned --conf is read" "$rc:$RAN" 0:yes
  is "$mode: ... and the record names it (policy.platform)" \
    "$(field "$AUDIT" policy_resolved .policy.platform)" "$T/other.conf"
  asu=(env)
  [ "$mode" = user ] && asu=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)
  is "$mode: ... as --explain does" \
    "$("${asu[@]}" "$SKILLRUN" --explain --conf "$T/other.conf" "$B" | jq -r .platform)" "$T/other.conf"
  # Named relative to the caller's directory, it is recorded absolute: the
  # record is read elsewhere and later (so is a profile's -p ./PATH).
  printf 'include default\n' >"$T/rel.profile"
  chmod 644 "$T/rel.profile"
  is "$mode: ... a relative --conf and -p, recorded absolute" \
    "$(cd "$T" && "${asu[@]}" "$SKILLRUN" --explain --conf other.conf -p ./rel.profile "$B" |
      jq -r '"\(.platform) \(.profile)"')" "$T/other.conf $T/./rel.profile"
done
host_unchanged platform-conf
finish
