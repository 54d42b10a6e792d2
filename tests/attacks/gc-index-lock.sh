#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, gc and another user's runs index: root's --gc
# over a user's workspace root counts each dead run it closes in the
# user's index ({root}/.metrics/runs.log), whose lock the user may hold
# for good.  gc waits for that lock only so long, and that wait must be
# one for the whole pass: the user can make any number of dead runs (here
# copies of one run's ledger, each linked in as a marker), and a second's
# wait for each held root's --gc (a timer's, say) up for as many seconds
# as they made copies.
. "$(dirname "$0")/../integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: the holder is another user than root's --gc"
skip_modes
[[ " $MODES " == *" user "* ]] || { finish; exit 0; }
sandbox_possible || skip_all "user namespaces are not available"

T=$(tmpdir)
B=$T/lock-skill
mkbundle "$B"
chmod -R a+rX "$B"
COPIES=12

# The user's root, with an index (a finished run) and COPIES dead runs
# made from that run: its ledger cut to 3 lines, no metadata.json, linked
# into .active.
W=$(user_workspace)
as_user "$SKILLRUN" --workspace-root "$W" --execution-id seed "$B" \
  -- /bin/true >/dev/null 2>&1
is "the user's own run exits 0" "$?" 0
as_user sh -c 'cd "$1" || exit 1
  head -n 3 default/seed/audit.jsonl >default/seed/cut && rm -f default/seed/metadata.json &&
  mv default/seed/cut default/seed/audit.jsonl || exit 1
  i=0
  while [ "$i" -lt "$2" ]; do
    i=$((i + 1))
    cp -a default/seed "default/c$i" && ln "default/c$i/audit.jsonl" ".active/default:c$i" || exit 1
  done' sh "$W" "$COPIES"
is "... and $COPIES dead runs made from it" "$(find "$W/.active" -name 'default:c*' | wc -l)" "$COPIES"
check "... beside its runs index" test -f "$W/.metrics/runs.log"

# The user holds the index's lock: one process, which goes with its pid.
hold_lock "$W/.metrics/runs.log" "${AS_USER[@]}"
check "the user holds the index's lock" not flock -n "$W/.metrics/runs.log" true

t0=$(date +%s%N)
timeout 120 "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc.out" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "root's --gc closes the $COPIES dead runs" "$rc:$(tail -n 1 "$T/gc.out")" \
  "0:gc: $COPIES dead run(s) cleaned under $(realpath "$W")"
check "... without waiting a second for the lock for each (${ms} ms)" [ "$ms" -lt 5000 ]
kill "$holder"
wait "$holder" 2>/dev/null
# $holder is the holder itself (not a subshell around it): it is gone
# with its lock, rather than left holding it for its 120 s.
check "the holder is gone, and its lock with it" flock -n "$W/.metrics/runs.log" true

finish
