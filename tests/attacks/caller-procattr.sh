#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, process attributes the caller leaves skillrun
# that the skill must not keep.
#
# Personality flags (setarch -R: ADDR_NO_RANDOMIZE; -L: the legacy
# layout): the skill ran without address space randomization, which its
# seccomp filter refuses it (personality(2) with 0 or the query only).
# Now they are cleared; the execution domain (setarch linux32) is kept.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

command -v setarch >/dev/null || skip_all "setarch (util-linux) is needed"
arch=$(uname -m)

for mode in $MODES; do
  CALLER=(setarch "$arch" -R -L)
  skill "$mode" -- /bin/cat /proc/self/personality
  run_ok "$mode" "under setarch -R -L"
  is "$mode: ... the skill runs with no personality flag" "$(cat "$OUT" 2>/dev/null)" 00000000

  if setarch linux32 true 2>/dev/null; then
    CALLER=(setarch linux32 -R)
    skill "$mode" -- /bin/cat /proc/self/personality
    run_ok "$mode" "under setarch linux32 -R"
    is "$mode: ... the skill keeps linux32's execution domain, not -R" \
      "$(cat "$OUT" 2>/dev/null)" 00000008
  else
    pass "# SKIP $mode: setarch linux32 is not available on $arch"
    pass "# SKIP $mode: setarch linux32 is not available on $arch"
  fi
done
CALLER=()
host_unchanged caller-procattr
finish
