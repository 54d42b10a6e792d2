#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The signals an orchestrator, a scheduler or a terminal sends skillrun
# beside SIGTERM, SIGINT and SIGHUP (skillrun(1) EXIT STATUS): SIGQUIT
# (Ctrl-\, to skillrun alone or to its process group), SIGUSR1, SIGUSR2
# and SIGALRM (a scheduler's warning, an alarm) cancel the run with its
# record and 128 + N, as SIGTERM does, instead of killing skillrun with
# the run left abandoned; a second signal during kill-grace kills the
# skill at once only when it repeats the first (a second Ctrl-C), not
# SIGHUP right behind SIGTERM (systemd's SendSIGHUP=); a SIGHUP the
# caller left ignored (nohup(1)) stays ignored: skillrun neither cancels
# the run nor passes it on to the skill; a file-size limit (ulimit -f)
# stops the run with status error and audit_write instead of killing
# skillrun with SIGXFSZ halfway through a line of its record, and where
# it leaves no room for metadata.json, says so rather than blame a full
# file system.  As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
# A background job of a script starts with SIGINT and SIGQUIT ignored;
# env --default-signal gives skillrun the defaults a terminal's would have.
env --default-signal=QUIT true 2>/dev/null || skip_all "env(1) has no --default-signal"
skip_modes

T=$(tmpdir)
B=$T/sig-skill
mkbundle "$B"
chmod -R a+rX "$T"

signum() { kill -l "$1"; }

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  SR=("${pre[@]}" env --default-signal "$SKILLRUN" --workspace-root "$W")

  # To skillrun alone, while the skill runs.
  for sig in QUIT USR1 USR2 ALRM; do
    id=one-$sig
    n=$(signum $sig)
    "${SR[@]}" --execution-id "$id" "$B" -- /bin/sleep 30 >"$W/a.$id" 2>"$W/e.$id" &
    pid=$!
    wait_running "$W/a.$id"
    kill -$sig $pid
    wait $pid
    is "$mode: SIG$sig while the skill runs: exit $((128 + n))" "$?" "$((128 + n))"
    is "$mode: ... the stream ends cancelled" "$(last "$W/a.$id")" "execution_completed	cancelled"
    check "$mode: ... and verifies" audit_ok "$W/a.$id"
    is "$mode: ... state_changed cancelling names SIG$sig" \
      "$("$JQ" -r 'select(.state == "cancelling") | .signal' "$W/a.$id")" "$n"
    # One line on stderr, as for a cancellation at any other stage.
    is "$mode: ... stderr says so, once" "$(cat "$W/e.$id")" \
      "skillrun: cancelled by signal $n ($sig)"
    closed_ok "$mode: SIG$sig" "$W/default/$id" cancelled
  done

  # A second signal while the skill has its kill-grace after SIGTERM: the
  # same one again (a second Ctrl-C) stops waiting, SIGKILL at once;
  # another one (systemd's SendSIGHUP=, a login session's scope: SIGHUP
  # right behind SIGTERM) used to do so too, and cut the skill's cleanup
  # short.  Now it leaves the skill its grace.
  # The skill says "ready" once its trap is set: "running" comes before
  # bash has read its command line, and a SIGTERM then (a loaded host, a
  # sanitizer build) found no trap and no cleanup to cut or keep.
  cleanup='trap "sleep 2; echo cleaned; exit 7" TERM; echo ready; sleep 30 & wait'
  for pair in TERM:HUP TERM:TERM; do
    first=${pair%:*} second=${pair#*:}
    id=twice-$first-$second
    "${SR[@]}" --execution-id "$id" "$B" -- /bin/bash -c "$cleanup" \
      >"$W/a.$id" 2>"$W/e.$id" &
    pid=$!
    wait_running "$W/a.$id"
    for _ in $(seq 100); do
      grep -qx ready "$W/default/$id/logs/stdout.log" 2>/dev/null && break
      sleep 0.1
    done
    kill -$first $pid
    sleep 0.5
    kill -$second $pid
    wait $pid
    is "$mode: SIG$first, then SIG$second: exit 143" "$?" 143
    closed_ok "$mode: SIG$first, then SIG$second" "$W/default/$id" cancelled
    if [ "$second" = "$first" ]; then
      is "$mode: ... the skill was killed before its cleanup" \
        "$(field "$W/default/$id/audit.jsonl" execution_completed .signal)" 9
    else
      is "$mode: ... the skill's cleanup ran to its end (exit 7)" \
        "$(field "$W/default/$id/audit.jsonl" execution_completed .skill_exit_code)" 7
      is "$mode: ... and wrote what it wrote" \
        "$(tail -n 1 "$W/default/$id/logs/stdout.log")" cleaned
    fi
  done

  # Ctrl-\ at a terminal: SIGQUIT to the whole process group.
  id=group-QUIT
  "${pre[@]}" setsid -w env --default-signal "$SKILLRUN" --workspace-root "$W" \
    --execution-id "$id" "$B" -- /bin/sleep 30 >"$W/a.$id" 2>"$W/e.$id" &
  pid=$!
  wait_running "$W/a.$id"
  sr_pid=$(test_pids "execution-id $id" | head -n 1)
  pg=$(ps -o pgid= -p "$sr_pid" | tr -d ' ')
  kill -QUIT -- "-$pg"
  wait $pid
  is "$mode: SIGQUIT to the process group: exit 131" "$?" 131
  closed_ok "$mode: SIGQUIT to the process group" "$W/default/$id" cancelled

  # nohup: SIGHUP ignored by the caller is ignored by the run, to skillrun
  # alone and to its process group; the skill runs to its end.
  id=nohup
  "${pre[@]}" setsid -w nohup "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
    -- /bin/sh -c 'sleep 2; echo done' >"$W/a.$id" 2>"$W/e.$id" </dev/null &
  pid=$!
  wait_running "$W/a.$id"
  sr_pid=$(test_pids "execution-id $id" | head -n 1)
  pg=$(ps -o pgid= -p "$sr_pid" | tr -d ' ')
  kill -HUP "$sr_pid"
  kill -HUP -- "-$pg"
  wait $pid
  is "$mode: SIGHUP under nohup: the skill's own exit 0" "$?" 0
  closed_ok "$mode: SIGHUP under nohup" "$W/default/$id" succeeded
  is "$mode: ... the skill ran to its end" "$(cat "$W/default/$id/logs/stdout.log")" done

  # ulimit -f: the record's file cannot grow; the run stops with its
  # stream whole (a pipe knows no file-size limit).
  id=fsize
  "${pre[@]}" sh -c 'ulimit -f 2 && exec "$@"' sh "$SKILLRUN" --workspace-root "$W" \
    --execution-id "$id" "$B" -- /bin/true 2>"$W/e.$id" | cat >"$W/a.$id"
  is "$mode: ulimit -f 2: exit 125" "${PIPESTATUS[0]}" 125
  is "$mode: ... the stream ends with status error" "$(last "$W/a.$id")" "execution_completed	error"
  check "$mode: ... and verifies" audit_ok "$W/a.$id"
  is "$mode: ... an error event says audit_write" \
    "$(field "$W/a.$id" error .reason)" audit_write
  check "$mode: ... which stderr says first" grep -q \
    "^skillrun: audit: no room left in the run's audit.jsonl for its final events (the file-size limit, ulimit -f): File too large\$" \
    <(head -n 1 "$W/e.$id")
  # Nothing went on its record: no run directory, nor a marker for gc.
  check "$mode: ... and leaves no run directory" test ! -e "$W/default/$id"
  check "$mode: ... nor a marker" test ! -e "$W/.active/default:$id"

  # ulimit -f with room for the final events but not for metadata.json
  # beside them (reason metadata): stderr and the error event blamed a
  # full file system (ENOSPC).  Every limit from 16 to 40 KiB: whichever
  # falls there says the file-size limit.
  meta=0 blamed=
  for k in $(seq 16 40); do
    id=fsize-$k
    "${pre[@]}" sh -c 'ulimit -f "$0" && exec "$@"' "$k" "$SKILLRUN" \
      --workspace-root "$W" --execution-id "$id" "$B" -- /bin/true \
      2>"$W/e.$id" | cat >"$W/a.$id"
    [ "$(field "$W/a.$id" error .reason)" = metadata ] || continue
    meta=$((meta + 1))
    grep -q "^skillrun: no room left for the run's metadata.json (the file-size limit, ulimit -f): File too large\$" \
      <(head -n 1 "$W/e.$id") || blamed="$blamed $k"
  done
  check "$mode: ulimit -f 16..40 KiB: one stops the run for metadata.json's room ($meta)" \
    test "$meta" -gt 0
  is "$mode: ... and stderr names the file-size limit, not a full file system" \
    "$blamed" ""

  is "$mode: no process of the runs is left" "$(test_pids 'sleep 30' | wc -l)" 0

  # A cancellation while the audit stream's reader takes nothing (an
  # orchestrator shutting down stops reading, then sends SIGTERM): the
  # run used to wait out the stream's 5 s, then end as an error (125,
  # audit_write) instead of cancelled.  Now a signal that arrives during
  # the stall ends the wait, and a stream that stalls once the run is
  # cancelled is given up; the run ends cancelled (143), its record whole
  # in audit.jsonl.  stalled_term WHEN ID SKILL...: the stream on a pipe
  # of one page; WHEN "start": never read, SIGTERM 1.5 s in (the stall
  # falls before the skill starts); "running": read until the skill runs,
  # then no more, SIGTERM 0.5 s later.  Sets $rc.
  stalled_term() {
    local when=$1 id=$2
    shift 2
    rc=$("$PYTHON3" - "$when" "${SR[@]}" --execution-id "$id" "$B" -- "$@" \
      2>"$W/e.$id" <<'PY'
import fcntl, os, signal, subprocess, sys, time
when, cmd = sys.argv[1], sys.argv[2:]
r, w = os.pipe()
if when == "start":
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
p = subprocess.Popen(cmd, stdout=w, stdin=subprocess.DEVNULL)
os.close(w)
if when == "start":
    time.sleep(1.5)
else:
    got = b""
    while b'"state":"running"' not in got:
        b = os.read(r, 65536)
        if not b:
            break
        got += b
    fcntl.fcntl(r, 1031, 4096)
    time.sleep(0.5)
p.send_signal(signal.SIGTERM)
print(p.wait())
PY
    )
  }
  stalled_term start stall-start /bin/sleep 30
  is "$mode: SIGTERM while the stream's reader takes nothing: exit 143" "$rc" 143
  closed_ok "$mode: ... the run" "$W/default/stall-start" cancelled
  stalled_term running stall-run /bin/sh -c 'trap "echo cleaned; exit 7" TERM; sleep 30 & wait'
  is "$mode: SIGTERM, then the stream stalls: exit 143" "$rc" 143
  closed_ok "$mode: ... the run" "$W/default/stall-run" cancelled
  is "$mode: ... the skill had its SIGTERM and its cleanup" \
    "$(field "$W/default/stall-run/audit.jsonl" execution_completed .skill_exit_code)" 7

  # A SIGTERM once the skill has ended, while the stream's reader is a
  # little behind (busy 0.3 s, still reading): the run used to give the
  # stream up for it and then end as if nothing had come, exit 0 and
  # succeeded, its stream cut (the final record torn halfway, or missing
  # after an artifact's line).  Now the final record of a run whose
  # outcome is decided waits for its reader, and a signal taken before it
  # cancels the run, as at any stage.  late_term WHEN ID PIPE SKILL...:
  # SIGTERM once the run's audit.jsonl has WHEN (the stream's copy of that
  # line is then being written), its pipe PIPE bytes; writes the stream
  # to $W/a.ID and sets $rc.
  late_term() {
    local when=$1 id=$2 size=$3
    shift 3
    rc=$("$PYTHON3" - "$when" "$W/default/$id/audit.jsonl" "$size" "$W/a.$id" \
      "${SR[@]}" --execution-id "$id" "$B" -- "$@" 2>"$W/e.$id" <<'PY'
import fcntl, os, signal, subprocess, sys, time
when, copy, size, out, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
r, w = os.pipe()
fcntl.fcntl(w, 1031, size)  # F_SETPIPE_SZ
p = subprocess.Popen(cmd, stdout=w, stdin=subprocess.DEVNULL)
os.close(w)
got = b""
while b'"state":"running"' not in got:
    b = os.read(r, 65536)
    if not b:
        break
    got += b
for _ in range(300):
    try:
        if when.encode() in open(copy, "rb").read():
            break
    except OSError:
        pass
    time.sleep(0.05)
time.sleep(0.3)
p.send_signal(signal.SIGTERM)
time.sleep(0.3)
while True:
    b = os.read(r, 65536)
    if not b:
        break
    got += b
open(out, "wb").write(got)
print(p.wait())
PY
    )
  }
  # 120 artifacts' lines fit the pipe, the final record with their list
  # does not.
  late_term '"execution_completed"' late-final 65536 /bin/sh -c \
    'for i in $(seq 120); do echo x >/workspace/outputs/an-artifact-named-at-some-length-$i.txt; done'
  is "$mode: SIGTERM while the final record waits for a slow reader: the stream ends with it whole" \
    "$rc:$(last "$W/a.late-final")" "0:execution_completed	succeeded"
  closed_ok "$mode: ... the run" "$W/default/late-final" succeeded
  # One artifact whose line is longer than the pipe: a 2.8 KB path (within
  # the 3,072 bytes harvested) not in UTF-8, some 15 KB once escaped.
  late_term '"artifact_committed"' late-artifact 4096 /bin/sh -c \
    'p=/workspace/outputs; for i in $(seq 14); do p=$p/$(printf "\377%.0s" $(seq 200)); done; mkdir -p $p && echo x >$p/f'
  is "$mode: SIGTERM while an artifact's line waits, the harvest over: exit 143" "$rc" 143
  closed_ok "$mode: ... the run" "$W/default/late-artifact" cancelled
done

finish
