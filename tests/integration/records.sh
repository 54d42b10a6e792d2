#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every run ends in a record, whatever happens to it (issue 15): refused
# and failed runs get metadata.json; a broken stdout stops the run but not
# its run directory's record, at once when the reader goes while the
# skill runs; a closed stdout is refused up front, a closed
# stdin or stderr is harmless; SIGTERM, SIGINT and SIGHUP before the
# launch (between stages, during the copy of a 200 MiB bundle or input)
# cancel the run with its record and 128 + N; a supervisor stopped across
# its deadline still reports the skill's own exit; a timeout's SIGTERM
# reaches the skill's trap; a stdout reader that stops reading holds a run
# at most 5 s; a SIGKILLed supervisor's run is closed by --gc (as root
# whatever the run's owner, without the run's XDG_RUNTIME_DIR) with an
# "abandoned" record, its staging removed wherever it was, and its
# execution id stays refused; among 40 other runs, a start looks at no
# more than 16 of them, and always closes a dead run of its own id first.
# As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3 to start a run with a signal pending"
skip_modes
STRACE=$(command -v strace || true) # counts what a start looks at, when there

T=$(tmpdir)
B=$T/rec-skill
mkbundle "$B"
# A 200 MiB bundle and input, made once: their staging copies take long
# enough to be interrupted.
BIG=$T/big-skill
mkbundle "$BIG"
head -c 200M /dev/zero >"$BIG/blob"
head -c 200M /dev/zero >"$T/big-input"
chmod -R a+rX "$T"


for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  # An array, not a function: in the background, $! is skillrun itself.
  SR=("${pre[@]}" "$SKILLRUN" --workspace-root "$W")
  sr() { "${SR[@]}" "$@"; }

  # ---------------------------------------------- refused and failed runs
  sr --execution-id ref --expect-sha256 "$(printf '%064d' 0)" "$B" -- /bin/true >"$W/a.ref" 2>/dev/null
  is "$mode: a refused run exits 123" "$?" 123
  closed_ok "$mode: refused" "$W/default/ref" refused
  is "$mode: ... its metadata.json: what it did not get to know is null" \
    "$("$JQ" -c '[.skill.name, .limits, .network, .trust, .result.exit_code, .result.duration_ms]' "$W/default/ref/metadata.json")" \
    "[null,null,null,null,123,null]"
  is "$mode: ... but the digest it computed is there" \
    "$("$JQ" -r .skill.digest "$W/default/ref/metadata.json")" \
    "$(field "$W/a.ref" bundle_rejected .message | grep -o 'sha256:[0-9a-f]*' | head -n 1)"
  sr --execution-id err "$B" >"$W/a.err" 2>/dev/null
  is "$mode: a failed run (nothing to run) exits 125" "$?" 125
  closed_ok "$mode: failed" "$W/default/err" error
  is "$mode: ... its metadata.json knows the skill and the policy" \
    "$("$JQ" -r '[.skill.name, .network, .trust.tier, (.limits | has("nofile"))] | @tsv' "$W/default/err/metadata.json")" \
    "rec-skill	deny	unsigned	true"
  sr --execution-id err "$B" -- /bin/true >"$W/a.replay" 2>/dev/null
  is "$mode: a replayed id is refused" "$(field "$W/a.replay" bundle_rejected .reason)" \
    execution_replayed
  is "$mode: ... without a metadata.json of its own over the first run's" \
    "$(meta_status "$W/default/err")" error

  # ------------------------------------------------ broken and closed stdio
  # A reader that takes one line and goes away: the stream breaks at the
  # next event, the run stops (125), and the run directory's record says
  # why and ends whole.
  { sr --execution-id pipe "$B" -- /bin/sleep 1 2>"$W/err.pipe"; echo $? >"$W/rc.pipe"; } |
    head -n 1 >/dev/null
  is "$mode: a broken stdout stops the run with 125" "$(cat "$W/rc.pipe")" 125
  closed_ok "$mode: broken stdout" "$W/default/pipe" error
  is "$mode: ... recording the failure (error audit_write)" \
    "$(field "$W/default/pipe/audit.jsonl" error .reason)" audit_write
  check "$mode: ... and saying so on stderr" grep -q "audit stream: Broken pipe" "$W/err.pipe"
  # A reader that goes away while the skill runs (an orchestrator's worker
  # that died): the run used to go on to the skill's end, or its timeout,
  # with nobody reading, and stop only at its next event.  Now the stream's
  # breaking stops it within a second (the time a cancellation is given
  # to arrive, below).  The skill would sleep 37 s.
  t0=$SECONDS
  { sr --execution-id gone "$B" -- /bin/sleep 37 2>"$W/err.gone"; echo $? >"$W/rc.gone"; } |
    sed -n '/"state":"running"/q'
  took=$((SECONDS - t0))
  is "$mode: the stream's reader gone while the skill runs: 125" "$(cat "$W/rc.gone")" 125
  check "$mode: ... at once, not at the skill's end ($took s)" test "$took" -lt 20
  closed_ok "$mode: reader gone" "$W/default/gone" error
  is "$mode: ... recording the failure (error audit_write)" \
    "$(field "$W/default/gone/audit.jsonl" error .reason)" audit_write
  check "$mode: ... and saying so on stderr" grep -q "audit stream's reader is gone" "$W/err.gone"
  is "$mode: ... the skill is not left running" "$(test_pids 'sleep 37' | wc -l)" 0
  # One that closes its end and then sends SIGTERM, as an orchestrator
  # shutting down does: the caller's cancellation (143), not the stream's
  # error, if the signal comes within a second (it came 0.3 s later).
  rc=$("$PYTHON3" - "${SR[@]}" --execution-id gone-term "$B" -- /bin/sleep 37 \
    2>"$W/err.gone-term" <<'PY'
import os, signal, subprocess, sys, time
r, w = os.pipe()
p = subprocess.Popen(sys.argv[1:], stdout=w, stdin=subprocess.DEVNULL)
os.close(w)
got = b""
while b'"state":"running"' not in got:
    b = os.read(r, 65536)
    if not b:
        break
    got += b
os.close(r)
time.sleep(0.3)
p.send_signal(signal.SIGTERM)
print(p.wait())
PY
  )
  is "$mode: the reader closes, SIGTERM 0.3 s later: 143" "$rc" 143
  closed_ok "$mode: reader gone, then SIGTERM" "$W/default/gone-term" cancelled
  is "$mode: ... the skill is not left running" "$(test_pids 'sleep 37' | wc -l)" 0
  sr --execution-id closed "$B" -- /bin/true >&- 2>"$W/err.closed"
  is "$mode: a closed stdout: 125" "$?" 125
  check "$mode: ... with a message" grep -q "standard output is closed" "$W/err.closed"
  check "$mode: ... before anything is made" [ ! -e "$W/default/closed" ]
  sr --execution-id closed2 --audit-file "$W/a.closed2" "$B" -- /bin/true >&-
  is "$mode: a closed stdout with --audit-file: the run goes on" "$?" 0
  check "$mode: ... and its stream is whole" audit_ok "$W/a.closed2"
  sr --execution-id noerr "$B" -- /bin/sh -c 'cat; echo to-stderr >&2' 2>&- <&- >"$W/a.noerr"
  is "$mode: closed stdin and stderr: the run goes on" "$?" 0
  is "$mode: ... and succeeds" "$(last "$W/a.noerr")" "execution_completed	succeeded"
  is "$mode: ... and nothing else took the closed descriptors" \
    "$(cat "$W/default/noerr/logs/stderr.log")" to-stderr

  # ------------------------------------------------------- cancellation
  # A signal already pending when skillrun starts (blocked, then execve'd
  # with it): seen at the first check between stages, before the run
  # directory exists.  The stream is whole.
  # The system's python3: $PYTHON3 may live where the test user cannot go.
  "${pre[@]}" /usr/bin/python3 -c '
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
os.kill(os.getpid(), signal.SIGTERM)
os.execv(sys.argv[1], sys.argv[1:])' "$SKILLRUN" --workspace-root "$W" \
    --execution-id pending "$B" -- /bin/true >"$W/a.pending" 2>/dev/null
  is "$mode: SIGTERM pending at the start: 143" "$?" 143
  is "$mode: ... recorded as cancelling, then cancelled" \
    "$("$JQ" -r '[.event, .state // .status] | @tsv' "$W/a.pending" | tail -n 2 | tr '\n' ' ')" \
    "state_changed	cancelling execution_completed	cancelled "
  check "$mode: ... the stream is whole" audit_ok "$W/a.pending"
  check "$mode: ... and no run directory was made" [ ! -e "$W/default/pending" ]

  # During the staging copy of a 200 MiB bundle, by each signal.  With
  # SIGHUP at its default: under nohup(1) it stays ignored (signals.sh).
  for sig in TERM INT HUP; do
    id=big-$sig
    "${pre[@]}" env --default-signal=HUP "$SKILLRUN" --workspace-root "$W" \
      --execution-id "$id" "$BIG" -- /bin/true >"$W/a.$id" 2>/dev/null &
    pid=$!
    # The copy begins just after the run directory exists.
    for _ in $(seq 500); do [ -e "$W/default/$id/audit.jsonl" ] && break; sleep 0.01; done
    t0=$(date +%s%N)
    kill -$sig $pid
    wait $pid
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    case $sig in TERM) want=143 ;; INT) want=130 ;; HUP) want=129 ;; esac
    is "$mode: SIG$sig during the staging copy: exit $want" "$rc" "$want"
    check "$mode: ... promptly (${ms} ms)" [ "$ms" -lt 3000 ]
    check "$mode: ... before the bundle was verified" not grep -q bundle_verified "$W/a.$id"
    closed_ok "$mode: SIG$sig during staging" "$W/default/$id" cancelled
    is "$mode: ... state_changed cancelling names the signal" \
      "$(field "$W/default/$id/audit.jsonl" state_changed .signal)" "$((want - 128))"
    check "$mode: ... its staging is removed" [ ! -e "$W/default/$id/staging" ]
  done
  # During the inputs' copy.
  "${SR[@]}" --execution-id inp -i "$T/big-input" "$B" -- /bin/true >"$W/a.inp" 2>/dev/null &
  pid=$!
  for _ in $(seq 500); do [ -d "$W/default/inp/staging/inputs" ] && break; sleep 0.01; done
  kill -TERM $pid
  wait $pid
  is "$mode: SIGTERM while the inputs are copied: 143" "$?" 143
  closed_ok "$mode: SIGTERM during inputs" "$W/default/inp" cancelled
  check "$mode: ... no input was staged" not grep -q input_staged "$W/a.inp"

  # ------------------------------------------------------------ time
  # A supervisor stopped across the deadline: the skill exited after 1 s,
  # before the 5 s deadline, and that is what counts.
  # (A 5 s deadline: room for a slow start, as under the sanitizers.)
  "${SR[@]}" --execution-id stop --timeout 5s "$B" -- /bin/sh -c 'sleep 1; exit 0' >"$W/a.stop" 2>/dev/null &
  pid=$!
  for _ in $(seq 200); do grep -q '"state":"running"' "$W/a.stop" 2>/dev/null && break; sleep 0.02; done
  kill -STOP $pid
  sleep 6.5
  kill -CONT $pid
  wait $pid
  is "$mode: SIGSTOP across the deadline: the skill's exit 0 stands" "$?" 0
  is "$mode: ... status succeeded, no limit_exceeded" \
    "$(last "$W/a.stop") $(grep -c limit_exceeded "$W/a.stop")" "execution_completed	succeeded 0"

  # A TERM trap at the deadline: the handler runs (within kill-grace), the
  # status is still the timeout's.
  t0=$(date +%s%N)
  sr --execution-id trap --timeout 1s "$B" -- /bin/sh -c \
    'trap "echo trapped; exit 7" TERM; sleep 60 & wait' >"$W/a.trap" 2>/dev/null
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  is "$mode: a TERM trap at the timeout: 124" "$rc" 124
  is "$mode: ... the handler ran" "$(cat "$W/default/trap/logs/stdout.log")" trapped
  is "$mode: ... its exit is on the record" \
    "$(field "$W/a.trap" execution_completed '[.status, .skill_exit_code] | @tsv')" "timeout	7"
  check "$mode: ... well within kill-grace (${ms} ms)" [ "$ms" -lt 4000 ]

  # A cancel before the deadline, whose kill-grace outlasts it (the skill
  # ignores SIGTERM): the cancel stopped the run first, so the run is
  # cancelled, and its grace is not begun again at the deadline (the run
  # used to end "timeout", kill-grace after the deadline).
  "${SR[@]}" --execution-id late --timeout 4s "$B" -- /bin/sh -c \
    'trap "" TERM; sleep 60' >"$W/a.late" 2>/dev/null &
  pid=$!
  wait_running "$W/a.late"
  sleep 1
  t0=$(date +%s%N)
  kill -TERM $pid
  wait $pid
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  is "$mode: cancelled 3 s before the deadline, TERM ignored: 143" "$rc" 143
  is "$mode: ... status cancelled, no limit_exceeded" \
    "$(last "$W/a.late") $(grep -c limit_exceeded "$W/a.late")" "execution_completed	cancelled 0"
  check "$mode: ... SIGKILL at the cancel's kill-grace, not the deadline's (${ms} ms)" \
    [ "$ms" -lt 7000 ]

  # A stdout reader that stops reading: 3,000 artifacts (more events than
  # a pipe holds) with a 3 s timeout; the run ends within the audit
  # stream's stall budget (5 s in all), however long the reader sleeps.
  rm -f "$W/end.slow"
  {
    t0=$(date +%s%N)
    sr --execution-id slow --timeout 3s "$B" -- /bin/sh -c \
      'i=0; while [ $i -lt 3000 ]; do : >/workspace/outputs/f$i; i=$((i + 1)); done' 2>/dev/null
    echo "$? $((($(date +%s%N) - t0) / 1000000))" >"$W/end.slow"
  } | sleep 30 &
  reader=$!
  for _ in $(seq 300); do [ -s "$W/end.slow" ] && break; sleep 0.1; done
  read -r rc ms <"$W/end.slow"
  kill $reader 2>/dev/null
  wait $reader 2>/dev/null
  is "$mode: a reader that stops reading: the run stops (125)" "$rc" 125
  check "$mode: ... within its time and the 5 s budget (${ms} ms)" [ "${ms:-99999}" -lt 12000 ]
  closed_ok "$mode: stalled reader" "$W/default/slow" error
  check "$mode: ... which says why" grep -q "untaken for 5 s" "$W/default/slow/audit.jsonl"

  # A supervisor stopped (Ctrl-Z, a scheduler's suspend) for 6 s while its
  # stream's reader (half a MB/s, so that the 2,000 outputs' events keep
  # the pipe full, and about 1.5 s of the 5 s budget waited for it in all)
  # is behind: the reader reads on, and the
  # stop is no stall of the reader's.  It was charged to the stream's 5 s
  # budget, and the next full pipe failed the run (125, audit_write).
  mkfifo "$W/susp.fifo"
  "$PYTHON3" -c 'import os, sys, time
out = open(sys.argv[1], "wb")
while True:
    b = os.read(0, 1024)
    if not b:
        break
    out.write(b)
    out.flush()
    time.sleep(0.002)' "$W/a.susp" <"$W/susp.fifo" &
  reader=$!
  "${SR[@]}" --execution-id susp "$B" -- /bin/sh -c \
    'i=0; while [ $i -lt 2000 ]; do echo $i >/workspace/outputs/f$i; i=$((i + 1)); done' \
    >"$W/susp.fifo" 2>/dev/null &
  pid=$!
  wait_for "$W/a.susp" '"state":"collecting"'
  # Stopped while it waits for the reader (a stop elsewhere was charged
  # nothing before either).
  for _ in $(seq 200); do
    case $(cat "/proc/$pid/wchan" 2>/dev/null) in *poll*) break ;; esac
    sleep 0.01
  done
  kill -STOP $pid
  sleep 6
  kill -CONT $pid
  wait $pid
  rc=$?
  wait $reader
  is "$mode: stopped for 6 s while its stream's reader is behind: exit 0" "$rc" 0
  closed_ok "$mode: stopped with a slow reader" "$W/default/susp" succeeded
  is "$mode: ... every output harvested" \
    "$(grep -c '"event":"artifact_committed"' "$W/a.susp")" 2000

  # ------------------------------------------------ a killed supervisor
  # Killed while running, its staging on a tmpfs: gc as root, whatever the
  # run's owner and without the run's XDG_RUNTIME_DIR, finds the staging
  # where the marker says it is.
  rt=
  if [ $mode = user ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
    rt=$(mktemp -d /dev/shm/skillrun-test-rt.XXXXXX)
    [ "$(id -u)" -eq "$USER_UID" ] || chown "$USER_UID:$USER_UID" "$rt"
    chmod 700 "$rt"
  fi
  XDG_RUNTIME_DIR=$rt "${SR[@]}" --execution-id kill "$B" \
    -- /bin/sh -c 'sleep 60' >"$W/k.kill" 2>/dev/null &
  pid=$!
  for _ in $(seq 200); do grep -q '"state":"running"' "$W/k.kill" 2>/dev/null && break; sleep 0.05; done
  staging=$(field "$W/k.kill" bundle_verified .staging)
  kill -KILL $pid
  wait $pid 2>/dev/null
  check "$mode: the killed run left its staging (${staging})" [ -d "$staging" ]
  [ -z "$rt" ] || check "$mode: ... under its XDG_RUNTIME_DIR" [ "${staging#"$rt"/}" != "$staging" ]
  check "$mode: ... and its ledger stops short (incomplete)" \
    sh -c '"$1" --verify-audit "$2" >/dev/null 2>&1; [ $? -eq 2 ]' sh "$SKILLRUN" "$W/default/kill/audit.jsonl"
  env -u XDG_RUNTIME_DIR "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.out" 2>&1
  rc=$?
  is "$mode: gc as uid $(id -u), without XDG_RUNTIME_DIR: exit 0" "$rc" 0
  check "$mode: ... says it closed the run" grep -q "closed abandoned run default/kill" "$W/gc.out"
  check "$mode: ... removes the staging" [ ! -e "$staging" ]
  is "$mode: ... and the marker" "$(ls -A "$W/.active")" ""
  closed_ok "$mode: SIGKILLed" "$W/default/kill" abandoned
  is "$mode: ... the chain goes on under the same execution id" \
    "$("$JQ" -r .execution_id "$W/default/kill/audit.jsonl" | sort -u)" kill
  is "$mode: ... the final line says where the run was" \
    "$(tail -n 1 "$W/default/kill/audit.jsonl" | "$JQ" -c '[.exit_code, .last_event, .discarded_bytes]')" \
    '[null,"state_changed",0]'
  is "$mode: ... metadata.json knows the skill from the ledger" \
    "$("$JQ" -r '[.skill.name, .network, .started_at == ([inputs] | .[0].ts)] | @tsv' \
      "$W/default/kill/metadata.json" <(head -n 1 "$W/default/kill/audit.jsonl"))" \
    "rec-skill	deny	true"
  if [ $mode = user ]; then
    is "$mode: ... the record stays the caller's" \
      "$(stat -c %u "$W/default/kill/audit.jsonl" "$W/default/kill/metadata.json" | sort -u)" "$USER_UID"
  fi
  "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc2.out" 2>&1
  is "$mode: a second gc finds nothing to do" "$(tail -n 1 "$W/gc2.out")" \
    "gc: 0 dead run(s) cleaned under $(realpath "$W")"
  sr --execution-id kill "$B" -- /bin/true >"$W/a.again" 2>"$W/err.again"
  is "$mode: the abandoned id is refused (123)" "$?" 123
  is "$mode: ... saying it was abandoned" "$(field "$W/a.again" bundle_rejected .reason)" \
    execution_abandoned
  [ -z "$rt" ] || rm -rf "$rt"

  # A torn last line (a write the kill cut short): gc removes it and
  # continues the chain from the last complete line.  The next run, not
  # only --gc, closes a dead run.
  "${SR[@]}" --execution-id torn "$B" -- /bin/sh -c 'sleep 60' >"$W/k.torn" 2>/dev/null &
  pid=$!
  for _ in $(seq 200); do grep -q '"state":"running"' "$W/k.torn" 2>/dev/null && break; sleep 0.05; done
  kill -KILL $pid
  wait $pid 2>/dev/null
  printf '{"schema":"skillrun.audit/1","ts":"cut' >>"$W/default/torn/audit.jsonl"
  sr --execution-id after-torn "$B" -- /bin/true >/dev/null 2>&1
  is "$mode: the next run closes a dead one" "$(meta_status "$W/default/torn")" abandoned
  closed_ok "$mode: a torn last line" "$W/default/torn" abandoned
  is "$mode: ... counting the bytes it removed" \
    "$(tail -n 1 "$W/default/torn/audit.jsonl" | "$JQ" -r .discarded_bytes)" 38

  # Among many runs, a start looks at no more than 16 of the others'
  # markers (its cost must not grow with the runs beside it), and always at
  # its own id's: a dead run of that id is closed first, and the refusal
  # says it was abandoned.  40 live runs' markers (locked) stand in for
  # the others.
  "${SR[@]}" --execution-id dead-own "$B" -- /bin/sh -c 'sleep 60' >"$W/k.own" 2>/dev/null &
  pid=$!
  for _ in $(seq 200); do grep -q '"state":"running"' "$W/k.own" 2>/dev/null && break; sleep 0.05; done
  kill -KILL $pid
  wait $pid 2>/dev/null
  live=()
  for i in $(seq 40); do
    f=$W/.active/default:live-$i
    : >"$f"
    [ $mode = root ] || chown "$USER_UID:$USER_UID" "$f"
    exec {fd}<"$f"
    flock -n "$fd" && live+=("$fd")
  done
  is "$mode: 40 live runs' markers stand beside the dead one" "${#live[@]}" 40
  if [ -n "$STRACE" ]; then
    # LeakSanitizer cannot stop the world under ptrace and aborts a
    # sanitizer build's skillrun at exit (as uid-pool.sh says).
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
      "$STRACE" -f -qq -e trace=openat -o "$W/st.own" "${SR[@]}" --execution-id dead-own \
      "$B" -- /bin/true >"$W/a.own" 2>/dev/null
  else
    sr --execution-id dead-own "$B" -- /bin/true >"$W/a.own" 2>/dev/null
  fi
  is "$mode: ... a start with the dead run's id is refused as abandoned" \
    "$(field "$W/a.own" bundle_rejected .reason)" execution_abandoned
  closed_ok "$mode: ... having closed it first" "$W/default/dead-own" abandoned
  if [ -n "$STRACE" ]; then
    n=$(grep -c 'default:live-' "$W/st.own")
    is "$mode: ... looking at 16 of the 40 others" "$n" 16
    # Its own id's marker while it lists them, the others it picked
    # after (were its own only picked like them, it would come first with
    # a chance of 16/41 x 1/16).
    first=$(grep -n -m 1 'default:live-' "$W/st.own" | cut -d: -f1)
    own=$(grep -n -m 1 'default:dead-own' "$W/st.own" | cut -d: -f1)
    check "$mode: ... its own id's marker first (line ${own:-none}, the others from ${first:-none})" \
      test "${own:-999999}" -lt "${first:-0}"
  else
    diag "SKIP $mode: how many markers a start looks at: strace(1) is not installed"
  fi
  for fd in "${live[@]}"; do exec {fd}<&-; done
  rm -f "$W"/.active/default:live-*

  check_run_audits "$mode" "$W" ""
  # The killed runs' cgroup leaves: gc takes a leaf once it is 2 s old and
  # empty (a young one may be a run between mkdir and flock).
  sleep 2.1
  "${SR[@]}" --gc >/dev/null 2>&1
done

# ------------------------------------------ tmpfs without room or inodes
# In a mount namespace of its own, /dev/shm and /run/skillrun-staging are
# tiny tmpfs mounts: too few inodes for the bundle, or room for its bytes
# but not for its pages; either way the copy fails there and the bundle is
# staged again in the run directory, with a warning.
if needs_root "tmpfs staging bases of a mount namespace's own"; then
  if unshare -m true 2>/dev/null; then
    TW=$(tmpdir)
    TU=$(user_workspace)
    S=$T/small-files
    mkbundle "$S"
    for i in $(seq 40); do echo "file $i" >"$S/f$i.txt"; done
    chmod -R a+rX "$S"
    cat >"$T/tiny.sh" <<'EOS'
set -u
mkdir -p /run/skillrun-staging
mount -t tmpfs -o "$1" tiny /dev/shm
mount -t tmpfs -o "$1" tiny /run/skillrun-staging
"$SKILLRUN" --workspace-root "$2" --execution-id "$4-root" "$5" -- /bin/true >"$2/a.$4-root" 2>/dev/null
echo "root $?"
setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- \
  env -u XDG_RUNTIME_DIR "$SKILLRUN" --workspace-root "$3" --execution-id "$4-user" "$5" -- /bin/true >"$3/a.$4-user" 2>/dev/null
echo "user $?"
EOS
    for case in "inodes nr_inodes=8" "pages size=64k"; do
      set -- $case
      out=$(SKILLRUN=$SKILLRUN NOBODY=$USER_UID unshare -m --propagation private \
        bash "$T/tiny.sh" "$2" "$TW" "$TU" "$1" "$S")
      is "a tmpfs without $1: both runs succeed" "$out" "root 0
user 0"
      is "... root's staged in its run directory" \
        "$(field "$TW/a.$1-root" bundle_verified .staging)" "$(realpath "$TW")/default/$1-root/staging"
      is "... the user's too" \
        "$(field "$TU/a.$1-user" bundle_verified .staging)" "$(realpath "$TU")/default/$1-user/staging"
      is "... after the copy had begun there: a staging warning" \
        "$("$JQ" -r 'select(.event == "warning") | .reason // empty' "$TW/a.$1-root" | grep -c '^staging$')" 1
      check "... and their streams verify" audit_ok "$TW/a.$1-root"
    done
  else
    pass "# SKIP tmpfs staging bases of a mount namespace's own: no mount namespace (unshare -m)"
  fi
fi

# ------------------------------------------------------ descriptors
W=$(mode_workspace "$ANY_MODE")
out=$(ulimit -n 24 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fd24 "$B" -- /bin/true 2>&1 >"$W/a.fd24")
is "ulimit -n 24: 125" "$?" 125
check "... saying how many descriptors a run needs ($out)" grep -Eq "a run needs 1[0-9]{2} file descriptors( \(128 for the run, [0-9]+ already open\))?; the open-file limit is 24" <<<"$out"
is "... on the record too" "$(field "$W/a.fd24" error .reason)" resources
(ulimit -n 200 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fd200 "$B" -- \
  /bin/sh -c 'ulimit -n') >"$W/a.fd200" 2>/dev/null
is "a hard limit of 200: the run succeeds" "$?" 0
is "... with the sandbox's nofile lowered to it" "$(cat "$W/default/fd200/logs/stdout.log")" 200
check "... and a warning that says so" grep -q "nofile 1024 lowered to 200" "$W/a.fd200"
(ulimit -Sn 50 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fd50 "$B" -- /bin/true) >/dev/null 2>&1
is "a soft limit of 50 under a higher hard one: raised, the run succeeds" "$?" 0
# Descriptors the caller left open keep their slots for the whole run: a
# run needs its 128 besides them, said up front (it failed on whichever
# layer ran out first, 35 descriptors in), and a soft limit is raised to
# make room when the hard one allows.
open170() { for _ in $(seq 170); do exec {_fd}</dev/null; done; }
out=$(ulimit -n 200 && open170 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fdo "$B" -- /bin/true 2>&1 >"$W/a.fdo")
is "170 descriptors open under ulimit -n 200: 125" "$?" 125
check "... saying how many the run needs besides them ($out)" \
  grep -Eq "a run needs (29[89]|30[0-9]) file descriptors \(128 for the run, 17[0-9] already open\); the open-file limit is 200" <<<"$out"
is "... reason resources" "$(field "$W/a.fdo" error .reason)" resources
(ulimit -Sn 200 && open170 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fdos "$B" -- /bin/true) >/dev/null 2>&1
is "... under a soft limit of 200 and a higher hard one: raised, the run succeeds" "$?" 0
# A descriptor numbered at or above the limit takes none of the slots the
# run opens its own in (the lowest free): at the limit a run needs without
# it, the run succeeds with it open too (it was counted, and refused).
need=$(ulimit -n 24 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fdn "$B" -- /bin/true 2>&1 >/dev/null |
  sed -n 's/.*a run needs \([0-9]*\) file descriptors.*/\1/p')
if [ -n "$need" ]; then
  out=$(exec 400</dev/null && ulimit -n "$need" && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id fdh "$B" -- /bin/true 2>&1 >"$W/a.fdh")
  is "ulimit -n $need with descriptor 400 open: the run succeeds ($out)" "$?" 0
else
  fail "ulimit -n 24 did not say how many descriptors a run needs"
fi

# ------------------------------------------------------ stack
# Below some 60 KiB of stack init's mount build (or the supervisor) died
# of SIGSEGV; a run says what it needs before anything is built.
out=$(ulimit -s 100 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id st100 "$B" -- /bin/true 2>&1 >"$W/a.st100")
is "ulimit -s 100: 125" "$?" 125
check "... saying how much stack a run needs ($out)" grep -q "a run needs 256 KiB of stack; the stack limit is 100 KiB" <<<"$out"
is "... on the record too" "$(field "$W/a.st100" error .reason)" resources
check "... and its stream verifies" audit_ok "$W/a.st100"
(ulimit -Ss 100 && in_mode "$ANY_MODE" "$SKILLRUN" --workspace-root "$W" --execution-id st100s "$B" -- \
  /bin/sh -c 'ulimit -s') >"$W/a.st100s" 2>/dev/null
is "a soft limit of 100 KiB under a higher hard one: raised, the run succeeds" "$?" 0
is "... and the skill inherits the raised one" "$(cat "$W/default/st100s/logs/stdout.log")" 256

# ------------------------------------------------------ a full workspace
# A workspace that fills up during the run (a 2 MiB tmpfs, in a mount
# namespace of its own): the outputs do not fit, the record does, in the
# room audit.jsonl kept reserved, and metadata.json in what it gave back.
if needs_root "a workspace on a tmpfs of its own"; then
  if unshare -m true 2>/dev/null; then
    F=$(tmpdir)
    cat >"$T/full.sh" <<'EOS'
set -u
mount -t tmpfs -o size=2m,mode=0755 full "$1"
"$SKILLRUN" --workspace-root "$1" --execution-id full "$2" -- /bin/sh -c \
  'head -c 3M /dev/zero >/workspace/outputs/big' >/dev/null 2>&1
echo "rc $?"
tail -n 1 "$1/default/full/audit.jsonl" | "$JQ" -r '[.event, .status] | @tsv'
"$JQ" -r .result.status "$1/default/full/metadata.json"
"$SKILLRUN" --verify-audit "$1/default/full/audit.jsonl" >/dev/null 2>&1
echo "verify $?"
EOS
    out=$(SKILLRUN=$SKILLRUN JQ=$JQ unshare -m --propagation private bash "$T/full.sh" "$F" "$B" 2>&1)
    is "a workspace that fills up: 125, and the record is whole" "$out" "rc 125
execution_completed	error
error
verify 0"
  else
    pass "# SKIP a workspace on a tmpfs of its own: no mount namespace (unshare -m)"
  fi
fi

finish
