#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a log flood as a CPU lever: past the log cap
# the supervisor used to drain the skill's pipes itself (splice to
# /dev/null), outside the run's cgroup and CPU budget, and a skill writing
# as fast as it could made it spend 0.4x - 0.9x the CPU the skill did.
# Now the pipes go to the sandbox's init past the cap (src/init.c), which
# drains them inside the run: the supervisor's CPU stays a small fraction
# of the run's, the counts stay exact when the skill ends by itself, a
# timeout, a CPU limit and SIGTERM still end a flooding run with its
# terminal record, and the skill cannot reach init's copies of the pipes.
# As root and as uid 65534.
set -u
# shellcheck source=../integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"

T=$(tmpdir)
B="$T/flood-skill"
mkbundle "$B" "A skill that floods its logs."
MiB=$((1024 * 1024))
# The line a log that reached the default 10 MiB cap ends with (logpump.c).
CAP_MARKER=$'\n[skillrun: log cap of 10485760 bytes reached; further output dropped]\n'
skip_modes

# logs AUDIT: "stdout.kept stdout.dropped stderr.kept stderr.dropped".
logs() {
  field "$1" execution_completed \
    '.logs | "\(.stdout.kept) \(.stdout.dropped) \(.stderr.kept) \(.stderr.dropped)"'
}

for who in $MODES; do
  w=$(mode_workspace "$who")
  if [ "$who" = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi

  # 1. Two writers as fast as they can for 3 s, far past a 64 KiB cap.
  # The supervisor is skillrun's own process (init is its clone, counted
  # in the run): its CPU is sampled until it exits.
  id=flood-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 64K "$B" -- sh -c 'timeout 3 yes & timeout 3 yes >&2 & wait' \
    >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  sup_ms=$(cpu_ms_until_exit "$pid")
  wait "$pid"
  rc=$?
  run_ms=$(($(field "$T/$id.audit" execution_completed .cpu_usec) / 1000))
  read -r ok od ek ed <<<"$(logs "$T/$id.audit")"
  diag "$who: supervisor CPU ${sup_ms} ms, the run's ${run_ms} ms, dropped $((od / MiB)) + $((ed / MiB)) MiB"
  is "$who: the flood succeeds (exit 0)" "$rc" 0
  # Before, the supervisor spent 40% - 90% of the run's CPU here.
  check "$who: the supervisor's CPU is under 10% of the run's (${sup_ms} ms of ${run_ms} ms)" \
    test $((sup_ms * 10)) -lt "$run_ms"
  is "$who: the cap is kept exactly" "$((ok + ek))" 65536
  check "$who: both floods are counted as dropped (more than 64 MiB each)" \
    test "$od" -gt $((64 * MiB)) -a "$ed" -gt $((64 * MiB))
  check "$who: the audit verifies" audit_ok "$T/$id.audit"

  # 1b. Below the cap, one byte per write(2), as plain writes (the pipe
  # merges them) and as O_DIRECT packets (each read returns one alone):
  # the supervisor used to wake for every write, as much CPU as the
  # skill's (2.2 - 2.5 s of 3 s).  Its wakeups are rationed now.
  for how in plain packets; do
    if [ "$how" = packets ]; then
      mode='fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_DIRECT)'
    else
      mode='pass'
    fi
    id=bytes-$how-$who
    start=$(date +%s%N)
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
      --log-cap 64M "$B" -- timeout 3 python3 -c "import os, fcntl
$mode
while True: os.write(1, b'x')" >"$T/$id.audit" 2>"$T/$id.err" &
    pid=$!
    sup_ms=$(cpu_ms_until_exit "$pid")
    wait "$pid"
    rc=$?
    wall_ms=$((($(date +%s%N) - start) / 1000000))
    kept=$(field "$T/$id.audit" execution_completed .logs.stdout.kept)
    diag "$who, $how: supervisor CPU ${sup_ms} ms over ${wall_ms} ms, ${kept} bytes kept"
    is "$who, $how: the writer ran until timeout(1) ended it (124)" "$rc" 124
    check "$who, $how: the supervisor's CPU is under 15% of the wall clock (${sup_ms} ms of ${wall_ms} ms)" \
      test $((sup_ms * 100)) -lt $((wall_ms * 15))
    check "$who, $how: ... and the bytes were still captured ($kept)" test "$kept" -gt 10000
    # A fast writer reaches the 10 MiB cap within the 3 s: the log then
    # ends with the cap's marker line, which kept does not count.
    dropped=$(field "$T/$id.audit" execution_completed .logs.stdout.dropped)
    want=$kept
    [ "$dropped" -gt 0 ] && want=$((kept + ${#CAP_MARKER}))
    is "$who, $how: stdout.log holds exactly what was kept (dropped $dropped)" \
      "$("${pre[@]}" stat -c %s "$w/default/$id/logs/stdout.log")" "$want"
  done

  # 2. Exact counts when the skill ends by itself: 48 MiB on stdout and
  # 40 MiB on stderr at once, a 1 MiB cap.
  id=exact-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 1M "$B" -- sh -c \
    'head -c 48M /dev/zero & head -c 40M /dev/zero >&2; wait' \
    >"$T/$id.audit" 2>"$T/$id.err"
  is "$who: exact: exit 0" "$?" 0
  read -r ok od ek ed <<<"$(logs "$T/$id.audit")"
  is "$who: exact: kept is the cap" "$((ok + ek))" "$MiB"
  is "$who: exact: stdout's kept + dropped is all it wrote" "$((ok + od))" $((48 * MiB))
  is "$who: exact: stderr's kept + dropped is all it wrote" "$((ek + ed))" $((40 * MiB))

  # 3. A writer that outlives the skill: init kills it when the skill
  # exits; what it wrote before is counted, the run ends at once.
  id=daemon-$who
  start=$(date +%s%N)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 64K "$B" -- sh -c \
    '(head -c 16M /dev/zero; exec yes) & sleep 1; exit 7' \
    >"$T/$id.audit" 2>"$T/$id.err"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  is "$who: daemon: the skill's status (7)" "$rc" 7
  check "$who: daemon: ... within seconds (${wall_ms} ms)" test "$wall_ms" -lt 15000
  read -r ok od ek ed <<<"$(logs "$T/$id.audit")"
  check "$who: daemon: at least its first 16 MiB are counted" \
    test $((ok + od)) -ge $((16 * MiB))

  # 4. A flood ended by its wall clock, by SIGTERM, and by its CPU budget
  # (the draining is the run's CPU now, so a single writer reaches it).
  id=timeout-$who
  start=$(date +%s%N)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 64K --timeout 2s "$B" -- sh -c 'yes & yes >&2' \
    >"$T/$id.audit" 2>"$T/$id.err"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  is "$who: timeout: exit 124" "$rc" 124
  ended_promptly "$who: timeout" "$wall_ms" "$T/$id.audit" timeout
  read -r ok od ek ed <<<"$(logs "$T/$id.audit")"
  check "$who: timeout: the cap is kept and the rest counted" \
    test $((ok + ek)) -eq 65536 -a $((od + ed)) -gt $((64 * MiB))

  id=term-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 64K --timeout 60s "$B" -- yes \
    >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  sleep 1.5
  start=$(date +%s%N)
  kill -TERM "$pid"
  wait "$pid"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  is "$who: SIGTERM cancels a flooding run (128+15)" "$rc" 143
  ended_promptly "$who" "$wall_ms" "$T/$id.audit" cancelled

  id=cpu-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 64K --timeout 60s --cpu-seconds 2 "$B" -- yes \
    >"$T/$id.audit" 2>"$T/$id.err"
  rc=$?
  is "$who: the CPU limit ends a flooding run (137)" "$rc" 137
  is "$who: ... its terminal record says cpu_exceeded" \
    "$(field "$T/$id.audit" execution_completed .status)" cpu_exceeded
  check "$who: ... the audit verifies" audit_ok "$T/$id.audit"

  # 5. init's copies of the pipes are out of the skill's reach: none of
  # /proc/1/fd/0 - 63 (init holds its stdio, the sync socket and the
  # handed pipes there) can be opened.  Past the cap stderr is dropped
  # too, so the count is the exit status.
  id=reach-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --log-cap 4K "$B" -- sh -c '
      head -c 64K /dev/zero; sleep 0.5
      n=0 i=0
      while [ $i -lt 64 ]; do
        if (exec 3</proc/1/fd/$i) 2>/dev/null; then n=$((n + 1)); fi
        i=$((i + 1))
      done
      exit $n' \
    >"$T/$id.audit" 2>"$T/$id.err"
  is "$who: reach: none of init's descriptors can be opened (exit = how many)" "$?" 0
  is "$who: reach: the hand-over happened (64 KiB - 4 KiB dropped)" \
    "$(field "$T/$id.audit" execution_completed .logs.stdout.dropped)" $((60 * 1024))

  is "$who: no process of the runs is left" "$(test_pids '^yes$')" ""
done
finish
