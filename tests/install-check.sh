#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make install DESTDIR=...` puts every file where distributions expect it.
# Run from a configured build directory (CI does).
set -u
D=$(mktemp -d /tmp/skillrun-ci-install.XXXXXX)
trap 'rm -rf "$D"' EXIT
make -s install DESTDIR="$D" >/dev/null || { echo "make install failed"; exit 1; }
prefix=$(sed -n 's/^prefix = //p' Makefile)
sysconfdir=$(sed -n 's/^sysconfdir = //p' Makefile | sed "s|\${prefix}|$prefix|")
bashdir=$(sed -n 's/^BASH_COMPLETIONS_DIR = //p' Makefile | sed "s|\${prefix}|$prefix|; s|\${datadir}|$prefix/share|")
zshdir=$(sed -n 's/^ZSH_COMPLETIONS_DIR = //p' Makefile | sed "s|\${prefix}|$prefix|; s|\${datadir}|$prefix/share|")
rc=0
for f in "$prefix/bin/skillrun" "$prefix/share/man/man1/skillrun.1" \
  "$prefix/share/man/man5/skillrun.profile.5" "$prefix/share/man/man5/skillrun-skill.5" \
  "$prefix/share/man/man5/skillrun-bundle.5" "$prefix/share/skillrun/profiles/default.profile" \
  "$prefix/share/skillrun/profiles/strict.profile" "$prefix/share/skillrun/profiles/python.profile" \
  "$prefix/share/skillrun/schema/audit.schema.json" "$prefix/share/skillrun/schema/metadata.schema.json" \
  "$bashdir/skillrun" "$zshdir/_skillrun"; do
  if [ -f "$D$f" ]; then echo "ok: $f"; else echo "MISSING: $f"; rc=1; fi
done
if [ -d "$D$sysconfdir/skillrun/profiles" ]; then echo "ok: $sysconfdir/skillrun/profiles/"; else
  echo "MISSING: $sysconfdir/skillrun/profiles/"; rc=1; fi
# The installed binary finds an installed profile by name.
"$D$prefix/bin/skillrun" --version >/dev/null || rc=1
exit $rc
