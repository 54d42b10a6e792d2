#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The supervisor under valgrind memcheck for representative runs: success,
# refusal, timeout.  Any error or definite leak fails.  Run from the build
# directory (CI runs it after `make check`).
set -u
SKILLRUN=${SKILLRUN:-src/skillrun}
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 1; }
T=$(mktemp -d /tmp/skillrun-test.vg.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
mkdir "$T/vg-skill"
printf -- '---\nname: vg-skill\ndescription: valgrind run.\n---\n' >"$T/vg-skill/SKILL.md"
# --trace-children=no: only the supervisor; the sandbox side never returns
# to it (execve or _exit), so its memory is not the supervisor's leak.
vg() {
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --trace-children=no "$SKILLRUN" --workspace-root "$T/ws" "$@" >/dev/null 2>"$T/vg.log"
}
rc=0
vg "$T/vg-skill" -- /bin/true
r=$?; [ $r -eq 0 ] || { echo "success run: exit $r"; cat "$T/vg.log"; rc=1; }
vg --expect-sha256 "$(printf '0%.0s' $(seq 64))" "$T/vg-skill" -- /bin/true
r=$?; [ $r -eq 123 ] || { echo "refused run: exit $r"; cat "$T/vg.log"; rc=1; }
vg --timeout 1s "$T/vg-skill" -- /bin/sleep 30
r=$?; [ $r -eq 124 ] || { echo "timeout run: exit $r"; cat "$T/vg.log"; rc=1; }
[ $rc -eq 0 ] && echo "valgrind: success, refusal and timeout runs clean"
exit $rc
