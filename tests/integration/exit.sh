#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exit statuses (skillrun(1) EXIT STATUS), process-tree cleanup, timeout,
# cancellation and supervisor death, as root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/exit-skill
mkbundle "$B"
printf '#!/bin/sh\nexit 0\n' >"$B/not-exec.sh" # mode 0644: not executable
chmod -R a+rX "$T"

run_as() { # MODE ARGS...: run skillrun as root or as the test user
  local mode=$1
  shift
  in_mode "$mode" "$SKILLRUN" "$@"
}

# Anchored: skillrun's own argv contains the same words.  This test's
# processes only: another suite's may run the same commands.
no_proc() { [ -z "$(test_pids "^$1")" ]; }

for mode in $MODES; do
  W=$(mode_workspace $mode)
  # For background runs: a plain command, so that $! is skillrun itself
  # (a shell function would put a subshell between the test and skillrun).
  if [ $mode = user ]; then
    pre=("${AS_USER[@]}")
  else
    pre=(env)
  fi
  n=0
  r() { # run with a fresh execution id; audit to $W/a.$n
    n=$((n + 1))
    run_as $mode --workspace-root "$W" --execution-id "e$n" --audit-file "$W/a.$n" "$B" "$@" \
      2>"$W/err.$n"
  }

  r -- /bin/sh -c 'exit 0'
  is "$mode: exit 0 passes through" "$?" 0
  is "$mode: status succeeded" "$(field "$W/a.$n" execution_completed .status)" succeeded

  # Many short runs: the skill's status must never be lost in the race
  # between init's report and its exit (a supervisor once left its loop
  # when init had exited, with the status still queued: 1 run in 150-300
  # ended "killed", 137).  A statistical probe: 2 x 150 runs caught that
  # bug about two times in three.  One workspace, left for finish to validate.
  Q=$(mode_workspace $mode)
  bad=
  for i in $(seq 150); do
    run_as $mode --workspace-root "$Q" "$B" -- /bin/true >/dev/null 2>&1 ||
      bad="$bad $i:$?"
  done
  is "$mode: 150 quick runs of /bin/true all exit 0" "$bad" ""
  r -- /bin/sh -c 'exit 42'
  is "$mode: exit 42 passes through" "$?" 42
  is "$mode: status failed" "$(field "$W/a.$n" execution_completed .status)" failed
  r -- /bin/sh -c 'exit 123'
  is "$mode: a skill's own 123 passes through" "$?" 123
  is "$mode: ... and the audit says the skill exited 123" \
    "$(field "$W/a.$n" execution_completed .skill_exit_code)" 123
  r -- /no/such/command
  is "$mode: missing command exits 127" "$?" 127
  is "$mode: ... with exec_error ENOENT" "$(field "$W/a.$n" execution_completed .exec_error)" ENOENT
  r -- ./not-exec.sh
  is "$mode: non-executable command exits 126" "$?" 126
  r -- no-such-command-anywhere
  is "$mode: command not in PATH exits 127" "$?" 127
  r -- /bin/sh -c 'kill -USR1 $$'
  is "$mode: killed by SIGUSR1 exits 128+10" "$?" 138
  is "$mode: status killed" "$(field "$W/a.$n" execution_completed .status)" killed

  # A double-forked daemon that ignores SIGTERM dies with the run.
  r -- /bin/sh -c '(setsid /bin/sh -c "trap \"\" TERM; exec sleep 98761" &); exit 0'
  is "$mode: skill with a daemon exits 0" "$?" 0
  sleep 0.2
  check "$mode: the daemon is gone after skillrun returns" no_proc "sleep 98761"

  # Wall-clock timeout: the whole tree, including a TERM-ignoring daemon.
  t0=$(date +%s)
  r --timeout 1s -- /bin/sh -c '(setsid /bin/sh -c "trap \"\" TERM; exec sleep 98762" &); trap "" TERM; sleep 98763'
  is "$mode: timeout exits 124" "$?" 124
  t1=$(date +%s)
  check "$mode: timeout took less than 10s" [ $((t1 - t0)) -lt 10 ]
  is "$mode: status timeout" "$(field "$W/a.$n" execution_completed .status)" timeout
  is "$mode: limit_exceeded wall" "$(field "$W/a.$n" limit_exceeded .limit)" wall
  check "$mode: nothing of the timed-out tree is left" no_proc "sleep 9876[23]"

  # SIGTERM to skillrun: forwarded, then the tree is killed after the grace.
  n=$((n + 1))
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "e$n" --audit-file "$W/a.$n" "$B" \
    -- /bin/sh -c 'exec sleep 98764' 2>/dev/null &
  sup=$!
  for _ in $(seq 50); do [ -n "$(test_pids "^sleep 98764")" ] && break; sleep 0.1; done
  kill -TERM $sup
  wait $sup
  is "$mode: SIGTERM cancels with 128+15" "$?" 143
  is "$mode: status cancelled" "$(field "$W/a.$n" execution_completed .status)" cancelled
  check "$mode: cancelled run's audit verifies" audit_ok "$W/a.$n"

  # SIGKILL of the supervisor: the sandbox dies with it; gc cleans up.
  n=$((n + 1))
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "e$n" --audit-file "$W/a.$n" "$B" \
    -- /bin/sh -c 'trap "" TERM; sleep 98765' 2>/dev/null &
  sup=$!
  for _ in $(seq 50); do [ -n "$(test_pids "^sleep 98765")" ] && break; sleep 0.1; done
  kill -KILL $sup
  wait $sup 2>/dev/null
  for _ in $(seq 30); do no_proc "sleep 98765" && break; sleep 0.1; done
  check "$mode: kill -9 of skillrun leaves no sandbox process" no_proc "sleep 98765"
  staging=$(field "$W/a.$n" bundle_verified .staging)
  check "$mode: the dead run left its staging behind ($staging)" [ -d "$staging/bundle" ]
  run_as $mode --gc --workspace-root "$W" >/dev/null 2>&1
  check "$mode: --gc removes the dead run's staging" [ ! -e "$staging" ]
  check "$mode: ... and its marker" [ ! -e "$W/.active/default:e$n" ]
  check "$mode: ... but not its audit.jsonl" [ -s "$W/default/e$n/audit.jsonl" ]
  is "$mode: ... which gc closed as abandoned (tests/integration/records.sh)" \
    "$(tail -n 1 "$W/default/e$n/audit.jsonl" | "$JQ" -r .status) $("$JQ" -r .result.status "$W/default/e$n/metadata.json")" \
    "abandoned abandoned"
  # The stream itself stops where the kill came: incomplete, not tampered.
  "$SKILLRUN" --verify-audit "$W/a.$n" >/dev/null 2>&1
  is "$mode: the killed run's own stream is incomplete (exit 2)" "$?" 2
  mv "$W/a.$n" "$W/killed.$n" # not a whole run's: check_run_audits skips it

  check_run_audits "$mode" "$W" e
done
finish
