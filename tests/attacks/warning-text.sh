#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a warning a bundle's author shapes into bytes
# that are not UTF-8.  A warning quotes what the bundle holds: the name of
# its directory (when it differs from the manifest's name), or an
# allowed-tools entry cut at 80 bytes, which can split a character in
# two.  The audit event was packed with jansson's "s", which refuses such
# text: the run stopped with exit 125 (error audit_field), no
# bundle_verified and no refusal, as if skillrun had failed, also where a
# strict profile should have refused the bundle (123, manifest_strict);
# and --explain dropped those warnings, its "a run would be refused" line
# included, without a word.  The text is now written with each bad byte
# as U+FFFD, as a bundle_rejected message already was.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
# A directory named "x" and byte 0xff, whose SKILL.md says "x".
D="$T/$(printf 'x\377')"
mkdir "$D"
printf -- '---\nname: x\ndescription: d\n---\n# x\n' >"$D/SKILL.md"
# 63 a's and ten e-acutes: the 80-byte cut of the tool falls inside one.
W=$T/wf
mkdir "$W"
tool=WebFetch\(domain:$(printf 'a%.0s' $(seq 63))$(printf '\303\251%.0s' $(seq 10))\)
printf -- '---\nname: wf\ndescription: d\nallowed-tools: %s\n---\n' "$tool" >"$W/SKILL.md"
printf 'include default\nstrict yes\n' >"$T/strict.profile"
printf 'include default\nrequire-signature yes\n' >"$T/sig.profile"
chmod -R a+rX "$T"

replacement=$(printf '\357\277\275')
for mode in $MODES; do
  w=$(mode_workspace "$mode")
  n=0
  for b in "$D" "$W"; do
    n=$((n + 1))
    what="the bundle directory's name"
    [ "$b" = "$W" ] && what="an allowed-tools entry cut at 80 bytes"
    in_mode "$mode" "$SKILLRUN" --workspace-root "$w" --execution-id "r$n" "$b" \
      -- /bin/true >"$w/r$n.audit" 2>"$w/r$n.err"
    is "$mode: a warning quoting $what not in UTF-8: the run succeeds" "$?" 0
    check "$mode: ... the warning is in the record, with U+FFFD for the bad bytes" \
      grep -q "\"event\":\"warning\".*$replacement" "$w/r$n.audit"
    check "$mode: ... and the record verifies" audit_ok "$w/r$n.audit"
    in_mode "$mode" "$SKILLRUN" --workspace-root "$w" --execution-id "s$n" \
      -p "$T/strict.profile" "$b" -- /bin/true >"$w/s$n.audit" 2>"$w/s$n.err"
    is "$mode: ... a strict profile refuses the bundle (123)" "$?" 123
    is "$mode: ... as manifest_strict" \
      "$(field "$w/s$n.audit" bundle_rejected .reason)" manifest_strict
    warnings=$(in_mode "$mode" "$SKILLRUN" --workspace-root "$w" --explain "$b" |
      "$JQ" -r '.warnings | length')
    check "$mode: ... --explain lists the warning ($warnings)" [ "${warnings:-0}" -ge 1 ]
  done
  refusal=$(in_mode "$mode" "$SKILLRUN" --workspace-root "$w" --explain -p "$T/sig.profile" "$D" |
    "$JQ" -r '.warnings[]' | grep -c 'run would be refused')
  is "$mode: --explain of an unsigned bundle whose path is not UTF-8 says a run would be refused" \
    "$refusal" 1
done

finish
