#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --stdin (skillrun(1)): an orchestrator pipes a JSON request in, the skill
# reads it and answers in its outputs; without the option the skill reads
# /dev/null; a skill that never reads, or stops reading, blocks nothing;
# execution_completed records what was forwarded.  As root and as an
# unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"

T=$(tmpdir)
B=$T/json-skill
mkbundle "$B"
mkdir "$B/scripts"
# Answers a JSON request from its standard input.
cat >"$B/scripts/answer.py" <<'EOF'
import json, os, sys
request = json.load(sys.stdin)
answer = {"echo": request, "words": len(request.get("text", "").split())}
with open(os.path.join(os.environ["SKILLRUN_OUTPUTS"], "answer.json"), "w") as f:
    json.dump(answer, f, sort_keys=True)
print("answered")
EOF
chmod -R a+rX "$T"
REQ='{"task": "count", "text": "one two three"}'

sums() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  n=0
  # r ARGS: a run with execution id i$n (n counted by the caller: r may run
  # in a pipeline's subshell); audit to $W/a.$n; stdin as given.
  r() {
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "i$n" \
      --audit-file "$W/a.$n" "$@" 2>"$W/err.$n"
  }

  n=$((n + 1))
  printf '%s' "$REQ" | r --stdin "$B" -- python3 scripts/answer.py
  is "$mode: a JSON request piped in: exit 0" "$?" 0
  is "$mode: ... the skill's answer" "$(cat "$W/default/i$n/outputs/answer.json" 2>/dev/null)" \
    '{"echo": {"task": "count", "text": "one two three"}, "words": 3}'
  is "$mode: ... execution_completed records the bytes, their sha256, complete" \
    "$(field "$W/a.$n" execution_completed '.stdin | [.bytes, .sha256, .complete] | @tsv')" \
    "${#REQ}	$(sums "$REQ")	true"

  # Without --stdin the skill reads /dev/null, whatever the caller's is.
  n=$((n + 1))
  printf '%s' "$REQ" | r "$B" -- /bin/sh -c 'wc -c'
  is "$mode: without --stdin the skill reads nothing" \
    "$(tr -d ' ' <"$W/default/i$n/logs/stdout.log")" 0
  is "$mode: ... and execution_completed has no stdin" \
    "$(field "$W/a.$n" execution_completed 'has("stdin")')" false

  # EOF reaches the skill: cat ends on its own.
  n=$((n + 1))
  printf 'abc' | r --stdin "$B" -- /bin/cat
  is "$mode: EOF of the input ends the skill's (cat exits 0)" "$?" 0
  is "$mode: ... what it read" "$(cat "$W/default/i$n/logs/stdout.log")" abc

  # An empty input: EOF at once.
  n=$((n + 1))
  r --stdin "$B" -- /bin/sh -c 'wc -c' </dev/null
  is "$mode: an empty input is forwarded as EOF" \
    "$(field "$W/a.$n" execution_completed '.stdin | [.bytes, .complete] | @tsv')" "0	true"

  # More than the pipe and the buffer hold.
  head -c 3000000 /dev/urandom >"$W/big"
  n=$((n + 1))
  r --stdin "$B" -- /bin/sh -c 'sha256sum' <"$W/big"
  is "$mode: 3 MB arrive whole" "$(cut -d' ' -f1 "$W/default/i$n/logs/stdout.log")" \
    "$(sha256sum <"$W/big" | cut -d' ' -f1)"
  is "$mode: ... and are recorded" \
    "$(field "$W/a.$n" execution_completed '.stdin | [.bytes, .complete] | @tsv')" "3000000	true"

  # A skill that never reads, fed without end: the run ends when the skill
  # does, and the record says the input was not forwarded to its end.
  t0=$(date +%s%N)
  n=$((n + 1))
  yes | r --stdin "$B" -- /bin/sleep 1
  rc=$?
  t1=$(date +%s%N)
  is "$mode: a skill that never reads an endless input exits 0" "$rc" 0
  check "$mode: ... in less than 5 s" test $(((t1 - t0) / 1000000)) -lt 5000
  is "$mode: ... complete false, at most the pipe and one buffer forwarded" \
    "$(field "$W/a.$n" execution_completed '.stdin | [.complete, (.bytes <= 1048576 + 65536)] | @tsv')" \
    "false	true"
  # ... nor does the wall clock wait for it.
  n=$((n + 1))
  yes | r --stdin --timeout 1s "$B" -- /bin/sleep 60
  is "$mode: ... and a timeout still fires (124)" "$?" 124

  # A skill that reads part and exits: the rest stays unread.
  n=$((n + 1))
  yes | r --stdin "$B" -- /usr/bin/head -c 10
  is "$mode: a skill that stops reading exits 0" "$?" 0
  is "$mode: ... it got its 10 bytes" "$(wc -c <"$W/default/i$n/logs/stdout.log")" 10
  is "$mode: ... complete false" "$(field "$W/a.$n" execution_completed .stdin.complete)" false

  # --stdin with a closed standard input is a usage error.
  n=$((n + 1))
  r --stdin "$B" -- /bin/true <&-
  is "$mode: --stdin with stdin closed: 125" "$?" 125
  check "$mode: ... saying so" grep -q "standard input is not open" "$W/err.$n"

  check_run_audits "$mode" "$W" i
done

# Not a run: --stdin only goes with one (and --explain, which shows it).
"$SKILLRUN" --stdin --digest "$B" >/dev/null 2>"$T/err"
is "--stdin with --digest: usage error 125" "$?" 125
is "--explain shows stdin forwarded" \
  "$("$SKILLRUN" --stdin --explain "$B" 2>/dev/null | "$JQ" -r .run.stdin)" forwarded
finish
