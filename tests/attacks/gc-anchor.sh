#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, gc and the audit key: an anchor proves that
# skillrun wrote a ledger, so gc (--gc, or a run's clean-up before it
# starts) signs only ledgers nobody but the key's holder could have
# written.  Another user who owns a workspace root (or who got to make
# .active first in a shared, sticky one) shapes a dead run's ledger as
# they please (here: a real run's ledger with its later events cut off)
# and links it in as a marker; root's gc, holding skillrun.conf's
# audit-key, may close that record but must not anchor it: no line of
# it verifies with the audit public key.  Nor may the gc of a caller who
# is the overflow uid of its user namespace, where the forger, whom the
# namespace does not map, shows as the caller.
. "$(dirname "$0")/../integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: the audit key comes from a root-owned skillrun.conf, and the forger is another user"
sandbox_possible || skip_all "user namespaces are not available"

T=$(tmpdir)
B=$T/forged-skill
mkbundle "$B"
chmod -R a+rX "$B"
# The platform's audit key: root's alone.
openssl genpkey -algorithm ed25519 -out "$T/audit.key" 2>/dev/null
openssl pkey -in "$T/audit.key" -pubout -out "$T/audit.pub" 2>/dev/null
chmod 600 "$T/audit.key"
printf 'audit-key %s\n' "$T/audit.key" >"$T/key.conf"
printf '# no keys\n' >"$T/nokey.conf"
chmod 644 "$T/key.conf" "$T/nokey.conf"

# forge W ID: as the unprivileged user, a finished run ID in W whose
# ledger is cut after its third line (the skill's later events gone) and
# linked into W/.active as a dead run's marker.
forge() {
  local w=$1 id=$2
  as_user "$SKILLRUN" --conf "$T/nokey.conf" --workspace-root "$w" --execution-id "$id" \
    "$B" -- /bin/sh -c 'echo evidence' >/dev/null 2>&1
  is "$id: the forger's own run exits 0" "$?" 0
  as_user sh -c 'l=$1/default/$2/audit.jsonl
    head -n 3 "$l" >"$l.cut" && cat "$l.cut" >"$l" && rm -f "$l.cut" "$1/default/$2/metadata.json" &&
    ln "$l" "$1/.active/default:$2"' sh "$w" "$id"
  is "$id: ... its ledger cut to 3 lines and planted as a marker" \
    "$(wc -l <"$w/default/$id/audit.jsonl")" 3
}

# not_anchored ID LEDGER: the ledger does not verify with the audit key.
not_anchored() {
  local rc
  "$SKILLRUN" --verify-audit "$2" --audit-key "$T/audit.pub" >"$T/v.$1" 2>&1
  rc=$?
  check "$1: the forged ledger does not verify with the audit key ($(head -n 1 "$T/v.$1"))" \
    [ "$rc" -ne 0 ]
  check "$1: ... and carries no anchor" not grep -q '"anchor"' "$2"
}

# 1. The forger's own workspace root; root runs --gc over it.
W=$(user_workspace)
forge "$W" own
"$SKILLRUN" --gc --conf "$T/key.conf" --workspace-root "$W" >"$T/gc.own" 2>&1
rc=$?
is "own: root's --gc exits 0 ($(tail -n 1 "$T/gc.own"))" "$rc" 0
not_anchored own "$W/default/own/audit.jsonl"
check "own: ... gc says so" grep -q '^closed abandoned run default/own (not anchored' "$T/gc.own"
is "own: ... the record is closed all the same" \
  "$(tail -n 1 "$W/default/own/audit.jsonl" | "$JQ" -r .status)" abandoned

# 2. A shared, sticky root of root's, where the forger made .active (and
# the tenant directory) before root ever ran there: root's run refuses to
# start in it, but its clean-up ran before that check.
S=$(tmpdir)
chmod 1777 "$S"
forge "$S" shared
"$SKILLRUN" --conf "$T/key.conf" --workspace-root "$S" --execution-id victim \
  "$B" -- /bin/true >"$T/run.shared" 2>"$T/err.shared"
rc=$?
check "shared: root's run does not start under the forger's .active (exit $rc)" [ "$rc" -ne 0 ]
not_anchored shared "$S/default/shared/audit.jsonl"

# 3. Root's own dead run in its own root: still closed and anchored.
R=$(tmpdir)
"$SKILLRUN" --conf "$T/key.conf" --workspace-root "$R" --execution-id killed \
  "$B" -- /bin/sleep 30 >"$T/killed.out" 2>&1 &
sup=$!
for _ in $(seq 100); do
  grep -q '"state":"running"' "$R/default/killed/audit.jsonl" 2>/dev/null && break
  sleep 0.1
done
kill -KILL "$sup"
wait "$sup" 2>/dev/null
# Its cgroup leaf goes too once it is 2 s old (gc spares younger ones).
sleep 2.1
"$SKILLRUN" --gc --conf "$T/key.conf" --workspace-root "$R" >"$T/gc.root" 2>&1
is "root's own killed run: --gc exits 0" "$?" 0
is "... its record ends abandoned" "$(tail -n 1 "$R/default/killed/audit.jsonl" | "$JQ" -r .status)" abandoned
"$SKILLRUN" --verify-audit "$R/default/killed/audit.jsonl" --audit-key "$T/audit.pub" >"$T/v.root" 2>&1
rc=$?
is "... and verifies with the audit key ($(head -n 1 "$T/v.root"))" "$rc" 0

# 4. A user namespace that maps root and the test user, who is the
# overflow uid there (a container run as nobody): the forger, another
# local user, is not mapped and shows as the caller.  The caller's --gc,
# holding the audit key, took the forger's marker for its own and
# anchored the ledger the forger shaped.
OTHER=$((USER_UID - 1))
if [ "$(cat /proc/sys/kernel/overflowuid 2>/dev/null)" != "$USER_UID" ]; then
  pass "# SKIP the test user (uid $USER_UID) is not the overflow uid"
elif ! command -v unshare >/dev/null || ! "$PYTHON3" -c '' 2>/dev/null; then
  pass "# SKIP no unshare or $PYTHON3 to make the user namespace"
else
  # As root: the forger's root with a real run's ledger, cut, linked in
  # as a marker, all theirs; writable by the caller, whose gc must open it.
  F=$(tmpdir)
  "$SKILLRUN" --conf "$T/nokey.conf" --workspace-root "$F" --execution-id unmapped \
    "$B" -- /bin/sh -c 'echo evidence' >/dev/null 2>&1
  is "unmapped: the forger's run exits 0" "$?" 0
  l=$F/default/unmapped/audit.jsonl
  head -n 3 "$l" >"$T/cut" && cat "$T/cut" >"$l" && rm -f "$F/default/unmapped/metadata.json"
  mkdir -p "$F/.active" && ln "$l" "$F/.active/default:unmapped"
  chown -R "$OTHER:$OTHER" "$F"
  chmod 755 "$F" "$F/.active" "$F/default" "$F/default/unmapped"
  chmod 666 "$l"
  chmod 644 "$T/audit.key" # the caller's gc reads the key (root's alone)
  in_userns "0 0 1\n$USER_UID $USER_UID 1" setpriv --reuid="$USER_UID" \
    --regid="$USER_UID" --clear-groups "$SKILLRUN" --gc --conf "$T/key.conf" \
    --workspace-root "$F" >"$T/gc.unmapped" 2>&1
  chmod 600 "$T/audit.key"
  is "unmapped: the caller's --gc closed the record" \
    "$(tail -n 1 "$l" | "$JQ" -r .status)" abandoned
  not_anchored unmapped "$l"
fi

finish
