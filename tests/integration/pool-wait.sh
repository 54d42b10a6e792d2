#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A root run waits up to 10 s for a uid-pool slot when every one is taken
# (skillrun(1) SECURITY).  A scheduler that cancels such a run meanwhile
# (SIGTERM, SIGINT) gets what EXIT STATUS promises of a signal at any
# stage: the run ends at once, cancelled, with 128 + N, in the stream, the
# run directory's audit.jsonl and metadata.json.  Before, the signal was
# noticed only once a slot was free: the run went on waiting to the end of
# its 10 s and ended as an error (125, layer_failed uid-pool), or took a
# slot another waiting run needed before it ended.  The pool's one slot is
# held by this script's own lock on it, as a live run's supervisor holds
# it.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the uid pool is root's (the tests run as uid $(id -u))"
sandbox_possible || skip_all "user namespaces are not available"
command -v flock >/dev/null || skip_all "flock (util-linux) is not installed"

T=$(tmpdir)
B=$T/pool-skill
mkbundle "$B"
W=$(tmpdir)
# A pool of one id nobody else's runs use (uid-pool.sh takes 912340-3).
ID=912360
printf 'uid-pool %s 1\n' "$ID" >"$T/pool1.conf"
# Made by the first root run after each boot, as skillrun makes them.
for d in /run/skillrun /run/skillrun/uid-pool; do
  [ -d "$d" ] || mkdir -m 700 "$d" || skip_all "cannot make $d"
done
exec 8>"/run/skillrun/uid-pool/$ID"
flock -n 8 || skip_all "slot $ID is held by someone else's run"


for sig in TERM INT; do
  id=wait-$sig
  n=$(kill -l $sig)
  env --default-signal "$SKILLRUN" --conf "$T/pool1.conf" --workspace-root "$W" \
    --execution-id "$id" "$B" -- /bin/true >"$W/a.$id" 2>"$W/e.$id" 8>&- &
  pid=$!
  # The run has verified its bundle and is on its way to the slot.
  wait_for "$W/a.$id" '"event":"bundle_verified"'
  # Well into the wait for the slot.
  sleep 0.5
  t0=$(date +%s%N)
  kill -$sig $pid
  wait $pid
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  is "SIG$sig while the run waits for a uid-pool slot: exit $((128 + n))" "$rc" "$((128 + n))"
  check "... at once ($ms ms), not at the end of the wait" test "$ms" -lt 2000
  is "... the stream ends cancelled" "$(last "$W/a.$id")" "execution_completed	cancelled"
  check "... and verifies" audit_ok "$W/a.$id"
  is "... no layer_failed" "$(event "$W/a.$id" layer_failed)" ""
  closed_ok "SIG$sig" "$W/default/$id" cancelled
  check "... saying so on stderr" grep -q "cancelled by signal $n" "$W/e.$id"
done

# The control: the slot free again, a run takes it.
flock -u 8
exec 8>&-
"$SKILLRUN" --conf "$T/pool1.conf" --workspace-root "$W" --execution-id free \
  "$B" -- /bin/true >"$W/a.free" 2>"$W/e.free"
is "the slot free: the run succeeds" "$?" 0
is "... with the pool's one id" "$(field "$W/a.free" policy_resolved .sandbox_ids.uid)" "$ID"
rm -f "/run/skillrun/uid-pool/$ID"
finish
