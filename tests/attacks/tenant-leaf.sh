#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, one tenant's run stopping another's: the cgroup
# leaf was named TENANT.EXECUTION.ROOT and ids may hold dots, so tenant
# "a" running "b.c" and tenant "a.b" running "c" in one workspace root
# shared a leaf name; the second to start failed (125, layer_failed on
# its mkdir).  A tenant who can guess another's execution ids could stop
# its runs.  Now a dotted tenant's leaf is named by a hash of the pair.
# As root and as an unprivileged user (who gets a leaf only where a
# cgroup is delegated to it; without one the pair cannot clash).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

for mode in $MODES; do
  if [ "$mode" = user ]; then
    w=$WS_user
    as=("${AS_USER[@]}")
  else
    w=$WS_root
    as=()
  fi
  A1=$w/first.audit
  "${as[@]}" "$SKILLRUN" --workspace-root "$w" --tenant a --execution-id b.c \
    --audit-file "$A1" "$B" -- /bin/sleep 4 >/dev/null 2>"$w/first.err" &
  first=$!
  wait_running "$A1"
  leaf1=$("$JQ" -r 'select(.event == "policy_resolved") | .cgroup // "none"' "$A1" 2>/dev/null)
  A2=$w/second.audit
  "${as[@]}" "$SKILLRUN" --workspace-root "$w" --tenant a.b --execution-id c \
    --audit-file "$A2" "$B" -- /bin/true >/dev/null 2>"$w/second.err"
  rc2=$?
  wait "$first"
  rc1=$?
  leaf2=$("$JQ" -r 'select(.event == "policy_resolved") | .cgroup // "none"' "$A2" 2>/dev/null)
  diag "$mode: leaves: ${leaf1:-?} and ${leaf2:-?}"
  is "$mode: tenant a.b's run c beside tenant a's run b.c succeeds (stderr: $(head -c 300 "$w/second.err"))" \
    "$rc2" 0
  is "$mode: ... and so does tenant a's run b.c" "$rc1" 0
  if [ "$leaf1" = none ]; then
    pass "$mode: ... no cgroup leaf for this user here, so none to share"
  else
    check "$mode: ... in two leaves" [ "$leaf1" != "$leaf2" ]
  fi
  check "$mode: ... the first's record verifies" audit_ok "$A1"
  check "$mode: ... the second's record verifies" audit_ok "$A2"
done

finish
