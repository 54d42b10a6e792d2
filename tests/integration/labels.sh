#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Labels (skillrun(1) --label): the pairs reach execution_started and both
# copies of metadata.json as given, the skill sees them, and a label that
# breaks the rules is a usage error that starts no run.
set -u
# shellcheck source=lib.sh
. "$TOP_SRCDIR/tests/integration/lib.sh"

sandbox_possible || skip_all "no user namespaces here"

T=$(tmpdir)
B="$T/label-skill"
mkbundle "$B" "Reads its labels."
chmod -R a+rX "$B"

# run ROOT ID [OPTION...] -- COMMAND...: leaves $rc, $audit, $err.
run() { run_in "$T" "$@"; }

W=$(tmpdir)
run "$W" lab --label trace_id=4bf92f3577b34da6a3ce929d0e0e4736 \
  --label principal=alice@example.com --label parent.execution=run-0 \
  --label 'note=caf'$'\xc3\xa9'' = ok' "$B" -- \
  sh -c 'cat /workspace/metadata.json'
is "a labelled run exits 0" "$rc" 0
is "execution_started carries the labels as given" \
  "$(field "$audit" execution_started '.labels | tojson')" \
  '{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","principal":"alice@example.com","parent.execution":"run-0","note":"café = ok"}'
is "the run directory's metadata.json carries them" \
  "$("$JQ" -c .labels "$W/default/lab/metadata.json")" \
  '{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","principal":"alice@example.com","parent.execution":"run-0","note":"café = ok"}'
is "the skill sees them in /workspace/metadata.json" \
  "$("$JQ" -c .labels.trace_id "$W/default/lab/logs/stdout.log")" \
  '"4bf92f3577b34da6a3ce929d0e0e4736"'
run "$W" nolab "$B" -- true
is "without --label: an empty object" \
  "$(field "$audit" execution_started '.labels | tojson')" '{}'
for bad in 'Trace=1' 'k' 'k=a'$'\n''b' 'k=a'$'\x1b''[2J' 'k='$'\xff'; do
  run "$W" badlab --label "$bad" "$B" -- true
  is "--label '${bad//[[:cntrl:]]/?}': a usage error (125)" "$rc" 125
  check "... with one line naming --label" \
    sh -c 'grep -q -- "--label" "$1" && [ "$(wc -l <"$1")" -eq 2 ]' - "$err"
done
check "... and no run directory for it" test ! -e "$W/default/badlab"
# What reorders or splits the line that shows it, as in an input's name:
# a RIGHT-TO-LEFT OVERRIDE (an audit line in a terminal would read
# "exe.pdf"), a LINE SEPARATOR.
for bad in RLO:'k=abc'$'\u202e''fdp.exe' LS:'k=a'$'\u2028''b'; do
  run "$W" badlab --label "${bad#*:}" "$B" -- true
  is "--label with a ${bad%%:*}: a usage error (125)" "$rc" 125
  check "... saying what it may not hold" grep -q "bidirectional formatting" "$err"
done
check "... and no run directory for it" test ! -e "$W/default/badlab"

finish
