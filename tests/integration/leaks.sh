#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs after every other test (Makefile.am orders it): nothing the suite
# created may remain: no sandbox process, no mount of a test directory, no
# skillrun cgroup leaf, no test directory, no staging on tmpfs, no
# live-run marker.
. "$(dirname "$0")/lib.sh"

leftover_procs=$(pgrep -a -f '^[^ ]*skillrun .*skillrun-(test|sandbox|cli|audit|digest)|^sleep 987[0-9][0-9]' || true)
is "no test process is left" "$leftover_procs" ""

leftover_mounts=$(grep -E 'skillrun-|/workspace' /proc/self/mountinfo || true)
is "no mount of a test directory is left on the host" "$leftover_mounts" ""

# Every test's temp dir starts with "skillrun-"; CI's own build dirs with
# "skillrun-ci-".  This script's own root is the one exception.  Only dirs
# newer than the binary under test count: those are this suite's.
leftover_dirs=$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'skillrun-*' \
  ! -name 'skillrun-ci-*' ! -path "$_test_root" -newer "$SKILLRUN" 2>/dev/null)
is "no test directory is left" "$leftover_dirs" ""

# Staging on tmpfs (workspace.h): the bases of root and of the test user.
leftover_staging=""
for d in /dev/shm/skillrun-0 "/dev/shm/skillrun-$NOBODY" /run/skillrun-staging; do
  [ -d "$d" ] || continue
  leftover_staging="$leftover_staging$(find "$d" -mindepth 1 -maxdepth 1 -type d \
    -newer "$SKILLRUN" 2>/dev/null)"
done
is "no staging directory is left on tmpfs" "$leftover_staging" ""
# The bases themselves are skillrun's to recreate on demand; rmdir leaves
# one that is in use (not empty) alone.
rmdir /dev/shm/skillrun-0 "/dev/shm/skillrun-$NOBODY" /run/skillrun-staging 2>/dev/null

leaves=""
for d in /sys/fs/cgroup/skillrun /sys/fs/cgroup/unified/skillrun; do
  [ -d "$d" ] && leaves="$leaves$(find "$d" -mindepth 1 -type d -name 'run-*' 2>/dev/null)"
done
is "no skillrun cgroup leaf is left" "$leaves" ""

held=""
for f in /run/skillrun/uid-pool/*; do
  [ -f "$f" ] || continue
  flock -n "$f" true || held="$held $f"
done
is "no uid-pool slot is still locked" "$held" ""
finish
