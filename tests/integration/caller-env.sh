#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A caller's odd process environment, as an orchestrator or a scheduler may
# hand it (skillrun(1) EXIT STATUS, FILES): a umask that takes the owner's
# own bits (0777, 0177) made the workspace root, a new tenant's directory
# and the run directory ones their owner could not enter: the run failed
# ("cannot open run directory: Permission denied") and left them so, which
# failed every later run under that root with any umask.  Now such a
# umask only keeps hiding the group's and others' bits.  A hard stack
# limit below some 40 KiB (ulimit -s 16..36) killed skillrun with SIGSEGV
# (139) before it said anything, in a run and in --gc, --verify-audit,
# --explain or --metrics: now a run says what it needs (125, reason
# resources, its stream whole), the other modes work.  Under
# SCHED_DEADLINE (chrt -d) skillrun cannot fork: the run failed with
# clone3's "Resource temporarily unavailable"; now its one line names the
# policy and chrt -R.  As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/env-skill
mkbundle "$B"
chmod -R a+rX "$T"

for mode in $MODES; do
  P=$(mode_workspace $mode)
  AS=()
  [ "$mode" = user ] && AS=("${AS_USER[@]}")
  for um in 0777 0177; do
    # A workspace root and a tenant skillrun makes, under that umask.
    W=$P/ws-$um
    in_mode $mode sh -c 'umask "$1" && shift && exec "$@"' sh "$um" "$SKILLRUN" \
      --workspace-root "$W" --tenant fresh --execution-id u1 "$B" -- /bin/true >"$P/a.$um" 2>"$P/err.$um"
    is "$mode: umask $um, a new workspace root and tenant: the run exits 0" "$?" 0
    [ -s "$P/err.$um" ] && diag "$(cat "$P/err.$um")"
    is "$mode: ... and succeeds" "$(field "$P/a.$um" execution_completed .status)" succeeded
    is "$mode: ... its run directory is its owner's to enter (mode)" \
      "$(stat -c %a "$W/fresh/u1" 2>/dev/null)" 700
    is "$mode: ... and its audit.jsonl its owner's to read (mode)" \
      "$(stat -c %a "$W/fresh/u1/audit.jsonl" 2>/dev/null)" 600
    check "$mode: ... which verifies" audit_ok "$W/fresh/u1/audit.jsonl"
    # The next run there, with an ordinary umask.
    in_mode $mode sh -c 'umask 022 && exec "$@"' sh "$SKILLRUN" \
      --workspace-root "$W" --tenant fresh --execution-id u2 "$B" -- /bin/true >/dev/null 2>"$P/err2.$um"
    is "$mode: ... a later run there with umask 022 exits 0" "$?" 0
    [ -s "$P/err2.$um" ] && diag "$(cat "$P/err2.$um")"
  done

  # Not less than 24 KiB: the environment and arguments are on that stack
  # before skillrun's first instruction, and below some 20 KiB the
  # dynamic loader itself dies, now and then, with a test suite's long
  # environment (which the runs below do without: env -i).
  clean_env=(env -i PATH="$PATH" SKILLRUN_TEST_ROOT="$SKILLRUN_TEST_ROOT")
  for st in 24 32; do
    out=$(in_mode $mode "${clean_env[@]}" sh -c 'ulimit -s "$1" && shift && exec "$@"' sh "$st" "$SKILLRUN" \
      --workspace-root "$P" --execution-id "st$st" "$B" -- /bin/true 2>&1 >"$P/a.st$st")
    is "$mode: ulimit -s $st: exit 125" "$?" 125
    is "$mode: ... one line saying what a run needs" "$out" \
      "skillrun: a run needs 256 KiB of stack; the stack limit is $st KiB (ulimit -s; hard limit $st KiB)"
    is "$mode: ... reason resources on the record" "$(field "$P/a.st$st" error .reason)" resources
    check "$mode: ... whose stream is whole" audit_ok "$P/a.st$st"
    in_mode $mode "${clean_env[@]}" sh -c 'ulimit -s "$1" && shift && exec "$@"' sh "$st" "$SKILLRUN" \
      --verify-audit "$P/a.st$st" >/dev/null 2>&1
    is "$mode: ... --verify-audit under ulimit -s $st exits 0" "$?" 0
    in_mode $mode "${clean_env[@]}" sh -c 'ulimit -s "$1" && shift && exec "$@"' sh "$st" "$SKILLRUN" \
      --gc --workspace-root "$P" >/dev/null 2>&1
    is "$mode: ... --gc under ulimit -s $st exits 0" "$?" 0
  done

  # Under SCHED_DEADLINE (chrt -d, which takes CAP_SYS_NICE), which
  # cannot fork: clone3's EAGAIN said "Resource temporarily unavailable",
  # which sent the reader to process limits.  With reset-on-fork, a run.
  dl=(chrt -d --sched-runtime 5000000 --sched-deadline 10000000 --sched-period 10000000 0)
  # A sanitizer build's leak check forks at exit, which a deadline task
  # cannot: such a skillrun cannot even print its version there.
  if ! "${dl[@]}" true 2>/dev/null; then
    for _ in 1 2 3 4 5 6; do
      pass "# SKIP $mode: chrt -d is not allowed here (no CAP_SYS_NICE)"
    done
  elif ! "${dl[@]}" "${AS[@]}" "$SKILLRUN" --version >/dev/null 2>&1; then
    for _ in 1 2 3 4 5 6; do
      pass "# SKIP $mode: this skillrun cannot exit under chrt -d (a sanitizer build's leak check forks)"
    done
  else
    out=$("${dl[@]}" "${AS[@]}" "$SKILLRUN" --workspace-root "$P" --execution-id dl1 \
      --audit-file "$P/a.dl1" "$B" -- /bin/true 2>&1)
    is "$mode: under chrt -d: exit 125" "$?" 125
    check "$mode: ... one line naming SCHED_DEADLINE and chrt -R" \
      sh -c '[ "$(printf "%s\n" "$1" | wc -l)" = 1 ] && printf "%s\n" "$1" | grep -q "SCHED_DEADLINE.*chrt -R -d"' - "$out"
    check "$mode: ... not strerror's EAGAIN" not grep -q "temporarily unavailable" <<<"$out"
    is "$mode: ... layer_failed namespaces, errno EAGAIN" \
      "$(field "$P/a.dl1" layer_failed '[.layer, .errno] | @tsv')" "namespaces	EAGAIN"
    check "$mode: ... whose stream is whole" audit_ok "$P/a.dl1"
    "${dl[@]:0:1}" -R "${dl[@]:1}" "${AS[@]}" "$SKILLRUN" --workspace-root "$P" \
      --execution-id dl2 "$B" -- /bin/true >"$P/a.dl2" 2>&1
    is "$mode: under chrt -R -d: the run exits 0" "$?" 0
  fi
done
finish
