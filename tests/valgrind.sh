#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The supervisor under valgrind memcheck: any error or definite leak fails.
# Run from the build directory (CI runs it after `make check`).
#
# Covered: a refused run (digest pin), a manifest refusal, a profile error,
# --digest, --explain and --verify-audit.  Not covered: runs that build the
# sandbox.  Its pid 1 is a clone of the supervisor that never execs, so it
# runs under valgrind too, and valgrind 3.19 does not implement openat2,
# clone3 or pidfd_open, which the sandbox needs.  Those paths run under
# ASan+UBSan instead (the sanitizer build runs every integration test).
set -u
SKILLRUN=${SKILLRUN:-src/skillrun}
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 1; }
T=$(mktemp -d /tmp/skillrun-vg.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
mkdir "$T/vg-skill" "$T/bad-skill"
printf -- '---\nname: vg-skill\ndescription: valgrind run.\n---\n' >"$T/vg-skill/SKILL.md"
printf -- '---\nname: Bad\ndescription: x\n---\n' >"$T/bad-skill/SKILL.md"
printf 'include default\nmemroy 1G\n' >"$T/typo.profile"
vg() { # EXPECTED-EXIT NAME ARGS...
  local want=$1 name=$2 r
  shift 2
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    "$SKILLRUN" "$@" >"$T/out" 2>"$T/vg.log"
  r=$?
  if [ $r -ne "$want" ]; then
    echo "not ok: $name: exit $r, expected $want"
    cat "$T/vg.log"
    rc=1
  else
    echo "ok: $name"
  fi
}
rc=0
zeros=$(printf '0%.0s' $(seq 64))
vg 123 "refused run (digest pin)" --workspace-root "$T/ws" --audit-file "$T/a1" \
  --expect-sha256 "$zeros" "$T/vg-skill" -- /bin/true
vg 123 "manifest refusal" --workspace-root "$T/ws" "$T/bad-skill" -- /bin/true
vg 125 "profile error" --workspace-root "$T/ws" -p "$T/typo.profile" "$T/vg-skill" -- /bin/true
vg 0 "--digest --verbose" --digest --verbose "$T/vg-skill"
vg 0 "--explain" --explain "$T/vg-skill"
vg 0 "--verify-audit" --verify-audit "$T/a1"
exit $rc
