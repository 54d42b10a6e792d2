#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Run by `make check` before the tests (Makefile.am): makes the directory
# this run of the suite keeps its test data in and writes its path to the
# file named by $1, which the tests read (tests/integration/lib.sh, through
# SKILLRUN_SUITE_DIR).  A fresh directory per run, so that leaks.sh can tell
# what this run created from what another checkout's suite, an earlier run
# or someone else's skillrun has on this host.
#
# It lives under ${SKILLRUN_TEST_TMPDIR:-/tmp}: not under $TMPDIR, which is
# often private to the user (pam_tmpdir), nor in the build tree, which may
# sit under a 0700 directory, because as root the tests also run skillrun
# as uid 65534, which must reach the bundles.  It holds test data only:
# 0755, and nothing of the caller's but what the tests put there.
set -eu
rec=$1
base=${SKILLRUN_TEST_TMPDIR:-/tmp}
nobody=${SKILLRUN_TEST_USER:-65534}
me=$(id -u)

# The previous run's directory goes when only its ledger is left (a run of
# some tests without leaks.sh, which removes it otherwise).  Anything else
# in it is a leftover someone may want to look at: left alone.
old=$(cat "$rec" 2>/dev/null || true)
case $old in
*/skillrun-check.*)
  if [ -d "$old" ] && [ ! -L "$old" ] && [ "$(stat -c %u "$old")" = "$me" ] &&
    [ "$(ls -A "$old")" = ledger ]; then
    rm -f "$old/ledger" && rmdir "$old"
  fi
  ;;
esac
rm -f "$rec"

d=$(mktemp -d "$base/skillrun-check.XXXXXX")
chmod 755 "$d"
d=$(cd -P "$d" && pwd)
if [ "$me" -eq 0 ] && command -v setpriv >/dev/null &&
  ! setpriv --reuid="$nobody" --regid="$nobody" --clear-groups -- test -x "$d"; then
  rmdir "$d"
  echo "$0: uid $nobody cannot reach $d: set SKILLRUN_TEST_TMPDIR to a directory every user can traverse" >&2
  exit 1
fi
# The staging bases that exist before the suite are left to their owners;
# leaks.sh removes the ones this run made once they are empty.
for b in /dev/shm/skillrun-[0-9]* /run/skillrun-staging "${XDG_RUNTIME_DIR:-/nonexistent}/skillrun"; do
  if [ -d "$b" ]; then echo "base $b"; fi
done >"$d/ledger"
echo "$d" >"$rec"
