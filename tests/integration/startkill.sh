#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A run killed while it makes its run directory (skillrun(1) HOW A RUN
# ENDS): strace(1) delivers SIGKILL on entry to the one system call that
# makes the directory, or to the one that links its record into it, the
# only moments at which the run has a directory or a marker and nothing on
# its record.  Afterwards --gc (or the next run's own gc) leaves nothing
# behind, and the execution id, which never ran, may run; a run of an id
# that did run keeps its record whatever is killed beside it.  And a run
# stopped while its init builds the sandbox (strace stops init at its
# pivot_root(2)), by its deadline or by a cancellation: its record ends
# with the status and exit status of what stopped it and says that
# nothing ended the skill, which never started (signal and
# skill_exit_code null; they said 9 before).  As root and as an
# unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
STRACE=$(command -v strace) || skip_all "strace(1) is not installed (Debian: strace)"
# strace must be able to trace its own child (ptrace, Yama scope <= 1).
"$STRACE" -qq -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here (ptrace refused)"
skip_modes

T=$(tmpdir)
B=$T/startkill
mkbundle "$B"
printf 'include default\nkill-grace 200ms\n' >"$T/grace.profile"
chmod -R a+rX "$T"

# kill_at MODE W ID SYSCALL PATH: a run of ID killed on entry to SYSCALL
# on PATH (strace -P matches a dirfd-relative call by its directory).
kill_at() {
  in_mode "$1" "$STRACE" -f -qq -o /dev/null -e trace="$4" -P "$5" \
    -e inject="$4":signal=KILL \
    "$SKILLRUN" --workspace-root "$2" --execution-id "$3" "$B" -- /bin/true \
    >"$2/s.$3" 2>"$2/e.$3"
}
markers() { ls -A "$1/.active" 2>/dev/null | tr '\n' ' '; }
# held_at_pivot MODE W ID ARGS...: a run of ID whose init is stopped
# (SIGSTOP) on entry to pivot_root(2), its one call of it, so that the
# sandbox is still being built when the deadline or the cancellation
# comes; only the SIGKILL at the end of kill-grace ends it (strace's
# delay_enter would hold it for a time a loaded machine could outlast).
# LeakSanitizer cannot stop the world under ptrace and would abort a
# sanitizer build's skillrun at its exit (134): the runs that strace
# does not trace check for leaks.
held_at_pivot() {
  local mode=$1 w=$2 id=$3
  shift 3
  in_mode "$mode" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$STRACE" -f -qq -o /dev/null -e trace=pivot_root \
    -e inject=pivot_root:signal=STOP \
    "$SKILLRUN" --workspace-root "$w" --execution-id "$id" -p "$T/grace.profile" \
    "$@" "$B" -- /bin/true >"$w/s.$id" 2>"$w/e.$id"
}
# not_started W ID STATUS: the record of a run stopped before its skill.
not_started() {
  local a=$1/default/$2/audit.jsonl
  check "$mode: ... the record verifies" audit_ok "$a"
  check "$mode: ... the skill never ran (no running state)" not grep -q '"state":"running"' "$a"
  is "$mode: ... execution_completed: status, skill_exit_code, signal" \
    "$(field "$a" execution_completed '[.status, (.skill_exit_code, .signal | tojson), (has("skill_exit_code") and has("signal"))] | @tsv')" \
    "$3	null	null	true"
  is "$mode: ... metadata.json's result" "$(meta_status "$1/default/$2")" "$3"
}

for mode in $MODES; do
  W=$(mode_workspace $mode)
  # A run first, so that the tenant directory and .active exist.
  in_mode $mode "$SKILLRUN" --workspace-root "$W" --execution-id warm "$B" -- /bin/true >/dev/null 2>&1
  is "$mode: a first run exits 0" "$?" 0

  # 1. Killed as it makes the run directory: a marker, no directory.
  kill_at $mode "$W" k1 mkdirat "$W/default"
  is "$mode: killed before the run directory was made: 137" "$?" 137
  check "$mode: ... no run directory" test ! -e "$W/default/k1"
  in_mode $mode "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc1.out" 2>&1
  is "$mode: --gc exits 0" "$?" 0
  check "$mode: ... and says it removed the marker ($(head -n 1 "$W/gc1.out"))" \
    grep -q "default:k1: its run was killed before its record began" "$W/gc1.out"
  is "$mode: ... nothing is left in .active" "$(markers "$W")" ""
  in_mode $mode "$SKILLRUN" --workspace-root "$W" --execution-id k1 "$B" -- /bin/true >"$W/a.k1" 2>"$W/err.k1"
  rc=$?
  is "$mode: ... the id, which never ran, runs ($(head -n 1 "$W/err.k1"))" "$rc" 0
  check "$mode: ... and its record verifies" audit_ok "$W/default/k1/audit.jsonl"

  # 2. Killed as it links its record into the new directory: an empty
  #    directory and a marker.  The next run of the id cleans them itself.
  kill_at $mode "$W" k2 linkat "$W/default/k2"
  is "$mode: killed before its record was in the run directory: 137" "$?" 137
  check "$mode: ... the run directory is empty" test -z "$(ls -A "$W/default/k2" 2>/dev/null)"
  in_mode $mode "$SKILLRUN" --workspace-root "$W" --execution-id k2 "$B" -- /bin/true >"$W/a.k2" 2>"$W/err.k2"
  rc=$?
  is "$mode: ... the next run of the id exits 0 ($(head -n 1 "$W/err.k2"))" "$rc" 0
  check "$mode: ... its record verifies" audit_ok "$W/default/k2/audit.jsonl"
  is "$mode: ... and nothing is left in .active" "$(markers "$W")" ""

  # 3. A second run of an id that did run, killed as it would make the
  #    directory (which exists): the first run's record stays whole.
  cp "$W/default/warm/audit.jsonl" "$W/warm.before"
  kill_at $mode "$W" warm mkdirat "$W/default"
  is "$mode: a replay killed at the directory's mkdir: 137" "$?" 137
  in_mode $mode "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc3.out" 2>&1
  is "$mode: --gc exits 0" "$?" 0
  check "$mode: ... the run's record is untouched" cmp -s "$W/warm.before" "$W/default/warm/audit.jsonl"
  is "$mode: ... nothing is left in .active" "$(markers "$W")" ""
  in_mode $mode "$SKILLRUN" --workspace-root "$W" --execution-id warm "$B" -- /bin/true >/dev/null 2>"$W/err.warm"
  is "$mode: ... and the id is still refused as run (123)" "$?" 123

  # 4. The deadline (1 s, kill-grace 200 ms) while init builds the
  #    sandbox.
  held_at_pivot $mode "$W" t4 --timeout 1s
  rc=$?
  is "$mode: a deadline before the skill started: 124 ($(head -n 1 "$W/e.t4"))" "$rc" 124
  not_started "$W" t4 timeout

  # 5. A cancellation (SIGTERM to skillrun) while init builds it (the
  #    deadline only so that a SIGTERM that went astray ends it, as 124).
  held_at_pivot $mode "$W" c5 --timeout 30s &
  job=$!
  check "$mode: ... (the run's sandbox is being built)" wait_for "$W/s.c5" '"event":"policy_resolved"'
  # The background job is a subshell; strace its child, skillrun strace's.
  tracer=$(pgrep -x -P "$job" strace)
  check "$mode: ... SIGTERM to skillrun" pkill -TERM -x -P "${tracer:-0}" skillrun
  wait "$job"
  rc=$?
  is "$mode: a cancellation before the skill started: 143 ($(head -n 1 "$W/e.c5"))" "$rc" 143
  not_started "$W" c5 cancelled
done
finish
