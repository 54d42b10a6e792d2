#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, text a bundle's author or a caller's input
# puts into skillrun's diagnostics on standard error.  A message quotes
# what it is about: a SKILL.md key, a path.  Controls were shown as '?',
# but a bidirectional override (U+202E) in a manifest's key reached the
# caller's terminal as it was, reversing the rest of the line (where the
# message names the key skillrun expected), and so did a line separator
# (U+2028) in a bundle's path, and a byte 0x9b that is not UTF-8, which
# a terminal of 8-bit characters takes for ESC [.  Each is now one '?',
# as the audit stream and --log-passthrough already escape them.  The
# refusals are the same; what the caller sees of them is not.  As root
# and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
rlo=$(printf '\342\200\256') ls=$(printf '\342\200\250') csi=$(printf '\233')
# A sandbox key (refused: not ASCII) that reads as sandbox.memory.
mkdir "$T/rlo"
printf -- '---\nname: rlo\ndescription: d\nmetadata:\n  version: "1.0.0"\n  "sandbox.me%smory": 64M\n---\n# rlo\n' \
  "$rlo" >"$T/rlo/SKILL.md"
# Bundles whose paths hold the characters (they have no SKILL.md).
mkdir "$T/x${ls}y" "$T/x${csi}31m"
chmod -R a+rX "$T"

# lacks FILE BYTES: FILE does not hold BYTES (and exists).
lacks() { [ -f "$1" ] && ! LC_ALL=C grep -qF -- "$2" "$1"; }

for mode in $MODES; do
  w=$(mode_workspace "$mode")
  in_mode "$mode" "$SKILLRUN" --workspace-root "$w" "$T/rlo" -- /bin/true \
    >/dev/null 2>"$w/rlo.err"
  is "$mode: a sandbox key not in ASCII is refused (123)" "$?" 123
  check "$mode: ... the message quotes the key, a '?' for U+202E" \
    grep -q "metadata key 'sandbox\.me?mory'" "$w/rlo.err"
  check "$mode: ... and not the character" lacks "$w/rlo.err" "$rlo"
  n=0
  for c in "$ls" "$csi"; do
    n=$((n + 1))
    what="U+2028" seen="x?y"
    [ $n = 2 ] && what="the byte 0x9b" seen="x?31m"
    in_mode "$mode" "$SKILLRUN" --workspace-root "$w" "$T/x${c}${seen#x?}" \
      -- /bin/true >/dev/null 2>"$w/p$n.err"
    is "$mode: a bundle path with $what and no SKILL.md is refused (123)" "$?" 123
    check "$mode: ... the message quotes the path, a '?' for $what" grep -qF "$seen" "$w/p$n.err"
    check "$mode: ... and not $what" lacks "$w/p$n.err" "$c"
  done
done
finish
