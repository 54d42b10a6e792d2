#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every run ends in a record, whatever happens to it (issue 15): refused
# and failed runs get metadata.json; a broken stdout stops the run but not
# its run directory's record; a closed stdout is refused up front, a closed
# stdin or stderr is harmless; a SIGKILLed supervisor's run is closed by
# --gc (as root whatever the run's owner, without the run's
# XDG_RUNTIME_DIR) with an "abandoned" record, its staging removed wherever
# it was, and its execution id stays refused.  As root and as an
# unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to also test as an unprivileged user"

T=$(tmpdir)
B=$T/rec-skill
mkbundle "$B"
chmod -R a+rX "$T"

# last FILE: the last line's event and status.
last() { tail -n 1 "$1" | "$JQ" -r '[.event, .status] | @tsv'; }
meta_status() { "$JQ" -r .result.status "$1/metadata.json" 2>/dev/null; }
# closed_ok LABEL RUN-DIR STATUS: the run directory's record is whole.
closed_ok() {
  is "$1: audit.jsonl ends with execution_completed $3" "$(last "$2/audit.jsonl")" \
    "execution_completed	$3"
  check "$1: ... and verifies" audit_ok "$2/audit.jsonl"
  is "$1: metadata.json says $3" "$(meta_status "$2")" "$3"
}

for mode in root user; do
  if [ $mode = user ]; then
    W=$(user_workspace)
    pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)
  else
    W=$(tmpdir)
    pre=(env)
  fi
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

  # ------------------------------------------------ a killed supervisor
  # Killed while running, its staging on a tmpfs: gc as root, whatever the
  # run's owner and without the run's XDG_RUNTIME_DIR, finds the staging
  # where the marker says it is.
  rt=
  if [ $mode = user ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
    rt=$(mktemp -d /dev/shm/skillrun-test-rt.XXXXXX)
    chown "$NOBODY:$NOBODY" "$rt"
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
  is "$mode: gc as root, without XDG_RUNTIME_DIR: exit 0" "$?" 0
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
      "$(stat -c %u "$W/default/kill/audit.jsonl" "$W/default/kill/metadata.json" | sort -u)" "$NOBODY"
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

  check_run_audits "$mode" "$W" ""
done

finish
