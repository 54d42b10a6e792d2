#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# skillrun as a container's entrypoint, pid 1 of its pid namespace
# (docker, a pod, unshare --pid --fork).  Every orphan of the namespace
# is handed to it: what docker exec left behind, a process the caller's
# wrapper forked (or double-forked) before it exec'd skillrun.  Those
# used to stay zombies until the run ended, the supervisor waiting only
# for its own children by pid; now they are reaped while the run runs,
# and the run still ends with the skill's own status and its record.
# SIGTERM to pid 1, from inside the namespace (kill -TERM 1, which the
# kernel drops for a pid 1 that neither blocks nor handles it) and from
# outside (docker stop), cancels the run with its record and 143.  A
# namespace without a procfs of its own is refused before anything reads
# or writes /proc/PID there.  As root and as an unprivileged user (in a
# user namespace of its own).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
unshare --help 2>/dev/null | grep -q -- --map-current-user ||
  skip_all "unshare(1) has no --map-current-user (util-linux 2.38)"
skip_modes

T=$(tmpdir)
B=$T/entry-skill
mkbundle "$B"
chmod -R a+rX "$T"

# pid1 MODE ID WRAPPER-COMMANDS SKILL-COMMAND: skillrun exec'd by sh as
# pid 1 of a new pid namespace (and, for the user, a user namespace too),
# after WRAPPER-COMMANDS; in the background, $u the unshare process, its
# stream in $W/ID.audit.  With a procfs of its own, unless proc is set
# (and empty).
pid1() {
  local mode=$1 id=$2 wrap=$3 cmd=$4 pre
  if [ "$mode" = user ]; then
    pre=("${AS_USER[@]}" unshare --user --map-current-user)
  else
    pre=(unshare)
  fi
  "${pre[@]}" --pid --fork ${proc-"--mount-proc"} sh -c "$wrap"'
    exec "$@"' - "$SKILLRUN" --workspace-root "$W" --execution-id "$id" \
    "$B" -- sh -c "$cmd" >"$W/$id.audit" 2>"$W/$id.err" &
  u=$!
}
# skillrun's own pid, as seen from here: the child of unshare --fork.
host_pid() { ps --ppid "$1" -o pid= | tr -d ' '; }
zombies_of() { ps --ppid "$1" -o stat= | grep -c '^Z'; }

for mode in $MODES; do
  W=$(mode_workspace $mode)

  # A child the wrapper forked and a grandchild it double-forked (an
  # orphan reparented to pid 1): both end half a second in, while the
  # skill sleeps 4 s.
  pid1 $mode orphans '(sleep 0.5; exit 7) & ( (sleep 0.5) & )' 'sleep 4; exit 3'
  wait_running "$W/orphans.audit" || diag "$mode: the run never said running"
  sleep 1.5
  sr=$(host_pid $u)
  check "$mode: orphans: skillrun runs as pid 1 of the namespace" \
    grep -qx 'NSpid:.*[[:space:]]1' "/proc/$sr/status"
  check "$mode: orphans: ... and the run still runs" kill -0 "$sr"
  is "$mode: orphans: the strangers' zombies are reaped while it runs" \
    "$(zombies_of "$sr")" 0
  wait $u
  is "$mode: orphans: exit status is the skill's own" "$?" 3
  is "$mode: orphans: the stream ends with execution_completed failed" \
    "$(last "$W/orphans.audit")" "execution_completed	failed"
  is "$mode: orphans: ... exit_code 3" \
    "$(field "$W/orphans.audit" execution_completed .exit_code)" 3
  closed_ok "$mode: orphans" "$W/default/orphans" failed

  # kill -TERM 1 from inside the namespace, as a process of the container
  # would (here one the wrapper left behind).
  pid1 $mode term-inside '(sleep 1.5; kill -TERM 1) &' 'sleep 30'
  wait $u
  is "$mode: kill -TERM 1 inside: exit 143" "$?" 143
  is "$mode: kill -TERM 1 inside: execution_completed cancelled" \
    "$(last "$W/term-inside.audit")" "execution_completed	cancelled"
  closed_ok "$mode: kill -TERM 1 inside" "$W/default/term-inside" cancelled

  # SIGTERM from the parent namespace, as docker stop sends it.
  pid1 $mode term-outside ':' 'sleep 30'
  wait_running "$W/term-outside.audit" || diag "$mode: the run never said running"
  kill -TERM "$(host_pid $u)"
  wait $u
  is "$mode: SIGTERM from outside: exit 143" "$?" 143
  closed_ok "$mode: SIGTERM from outside" "$W/default/term-outside" cancelled

  # Without a procfs of its own (no --mount-proc), /proc is the parent
  # namespace's, where the pids skillrun knows name other processes: it
  # used to write the uid and gid maps of whatever process had its
  # sandbox's pid there ("cannot write /proc/2/setgroups", or worse, a
  # map of someone else's fresh user namespace).  It stops first, saying
  # why.
  proc='' pid1 $mode no-proc ':' 'echo ran'
  wait $u
  is "$mode: no procfs of its own: exit 125" "$?" 125
  check "$mode: ... one line saying /proc is not its pid namespace's" \
    grep -qx "skillrun: /proc is not the procfs of skillrun's pid namespace .*--mount-proc)" \
    "$W/no-proc.err"
  is "$mode: ... and nothing else on standard error" "$(wc -l <"$W/no-proc.err")" 1
  is "$mode: ... the stream ends with execution_completed error" \
    "$(last "$W/no-proc.audit")" "execution_completed	error"
  check "$mode: ... after layer_failed" grep -q '"event":"layer_failed"' "$W/no-proc.audit"
  check "$mode: ... and the skill never ran" not grep -qx ran "$W/default/no-proc/logs/stdout.log"
done
finish
