#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a ledger --verify-audit cannot read:
# - One line longer than the 1 MiB --verify-audit reads of a line: a
#   profile whose setenv values (six included files, well under their
#   256 KiB each) made policy_resolved a line of 1.4 MB.  The run went on
#   and succeeded, and its untouched ledger, the run directory's and the
#   stream alike, was "tampered" (exit 1) for --verify-audit, with the
#   audit key or without: an orchestrator that trusts the verdict reports
#   an intrusion, and cannot tell it from one.  Now an event whose line
#   would be longer is written to neither sink and the run stops
#   (audit_write) before the skill runs; its record verifies.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# ------------------------------------------------ a line past 1 MiB
# Six files of 60 values of 3,900 bytes: some 234 KB each.
v=$(head -c 3900 /dev/zero | tr '\0' v)
P=$T/long-env.profile
printf 'include default\n' >"$P"
for f in 1 2 3 4 5 6; do
  for i in $(seq 60); do printf 'setenv V%d_%d %s\n' "$f" "$i" "$v"; done >"$T/long-env$f.inc"
  printf 'include %s\n' "$T/long-env$f.inc" >>"$P"
done
chmod -R a+rX "$T"

for mode in $MODES; do
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  skill "$mode" -p "$P" -- /bin/sh -c 'echo ran >/workspace/outputs/ran'
  L=$w/default/$RUN_ID/audit.jsonl
  longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$L")
  check "$mode: a profile of long setenv values: no ledger line is longer than 1 MiB ($longest bytes)" \
    [ "$longest" -le $((1 << 20)) ]
  out=$("$SKILLRUN" --verify-audit "$L" 2>&1)
  is "$mode: ... the run's ledger verifies (exit $?)" "${out%%:*}" ok
  out=$("$SKILLRUN" --verify-audit "$AUDIT" 2>&1)
  is "$mode: ... and so does the stream (exit $?)" "${out%%:*}" ok
  is "$mode: ... the stream is the run's ledger" "$(cmp "$AUDIT" "$L" && echo same)" same
  is "$mode: ... the run stops before the skill runs (exit 125, audit_write)" \
    "$rc $("$JQ" -r 'select(.event == "error") | .reason' "$L")" "125 audit_write"
  is "$mode: ... execution_completed and metadata.json say error" \
    "$(tail -n 1 "$L" | "$JQ" -r .status) $("$JQ" -r .result.status "$w/default/$RUN_ID/metadata.json")" \
    "error error"
  check "$mode: ... and say why on stderr" grep -q "policy_resolved.*longer than" "$ERR"
  check "$mode: ... the skill never ran" not test -e "$w/default/$RUN_ID/outputs/ran"
done

finish
