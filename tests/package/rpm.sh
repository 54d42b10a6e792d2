#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The RPM spec (rpm/skillrun.spec) builds with `rpmbuild -bb --nodeps`
# (Debian's rpm: the Fedora BuildRequires are not installed, the Debian
# equivalents are) from `make dist`'s tarball, and the package holds the
# same layout as the Debian one: the conffile root:root 0644, the pages,
# profiles, completions, examples, tmpfiles.d entry, the directories it
# creates, and a Requires for every library of .note.dlopen.
# Run from a configured build directory, like tests/install-check.sh.
# Not part of `make check` (rpmbuild, minutes); CI runs it.
set -u
top_srcdir=$(sed -n 's/^abs_top_srcdir = //p' Makefile)
[ -n "$top_srcdir" ] || { echo "not a configured build directory"; exit 1; }
command -v rpmbuild >/dev/null || { echo "rpmbuild is missing (Debian package rpm)"; exit 1; }
command -v cpio >/dev/null || { echo "cpio is missing (Debian package cpio; rpm2cpio needs it)"; exit 1; }
W=$(mktemp -d /tmp/skillrun-rpm.XXXXXX)
trap 'rm -rf "$W"' EXIT
rc=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; rc=1; }
SPEC=$top_srcdir/rpm/skillrun.spec

version=$(sed -n 's/^PACKAGE_VERSION = //p' Makefile)
[ "$(sed -n 's/^Version: *//p' "$SPEC")" = "$version" ] &&
  ok "the spec's Version is configure's ($version)" || bad "the spec's Version is not $version"

tarball=skillrun-$version.tar.gz
make -s dist-gzip >/dev/null 2>&1 && [ -f "$tarball" ] || { bad "make dist failed"; exit 1; }
mkdir -p "$W/SOURCES"
mv "$tarball" "$W/SOURCES/"
# No debuginfo subpackage: Debian's rpm lacks Fedora's find-debuginfo.
if rpmbuild -bb --nodeps --nocheck --define "_topdir $W" \
  --define 'debug_package %{nil}' "$SPEC" >"$W/build.log" 2>&1; then
  ok "rpmbuild -bb --nodeps"
else
  tail -40 "$W/build.log"
  bad "rpmbuild -bb --nodeps failed"
  exit 1
fi
grep '^dlopen: ' "$W/build.log" | sed 's/^/  /'
rpm=$(ls "$W"/RPMS/*/skillrun-"$version"-*.rpm | head -n 1)
[ -f "$rpm" ] || { bad "no rpm built"; exit 1; }

# Requires: each dlopen library's Fedora package, as the spec maps them,
# and one per soname in the binary's note.
rpm -qp --requires "$rpm" >"$W/requires" 2>/dev/null
sed 's/^/  Requires: /' "$W/requires"
rpm2cpio "$rpm" | (mkdir -p "$W/x" && cd "$W/x" && cpio -idm --quiet)
objcopy -O binary --only-section=.note.dlopen "$W/x/usr/bin/skillrun" "$W/note"
sonames=$(tr '\0' '\n' <"$W/note" | grep -o '"soname":\[[^]]*\]' | grep -o 'lib[^"]*' | sort -u)
n=0
for so in $sonames; do
  n=$((n + 1))
  lib=${so%%.so*}
  pkg=$(sed -n 's/^%global dlopen_libs //p' "$SPEC" | tr ' ' '\n' | sed -n "s/^$lib://p")
  if [ -n "$pkg" ] && grep -q "^$pkg(" "$W/requires"; then
    ok "Requires $pkg for $so (dlopen)"
  else bad "no Requires for $so (dlopen)"; fi
done
[ $n -ge 3 ] && ok "$n sonames in .note.dlopen" || bad "only $n sonames in .note.dlopen"

rpm -qp --configfiles "$rpm" 2>/dev/null | grep -qx /etc/skillrun/skillrun.conf &&
  ok "/etc/skillrun/skillrun.conf is a config file" || bad "/etc/skillrun/skillrun.conf is not a config file"
# --dump: path size mtime digest mode owner group ...
rpm -qp --dump "$rpm" 2>/dev/null >"$W/dump"
mode_of() { awk -v p="$1" '$1 == p { print $5, $6, $7 }' "$W/dump"; }
is_mode() { # PATH "MODE OWNER GROUP"
  local got
  got=$(mode_of "$1")
  [ "$got" = "$2" ] && ok "$1: $2" || bad "$1: '$got', want '$2'"
}
is_mode /etc/skillrun/skillrun.conf "0100644 root root"
is_mode /var/lib/skillrun/runs "040711 root root"
is_mode /run/skillrun "040700 root root"
for f in /usr/bin/skillrun /usr/share/man/man1/skillrun.1 /usr/share/man/man7/skillrun-integration.7 \
  /usr/share/skillrun/profiles/strict.profile /usr/share/skillrun/schema/audit.schema.json \
  /usr/share/skillrun/schema/metadata.schema.json /usr/share/bash-completion/completions/skillrun \
  /usr/share/zsh/site-functions/_skillrun /usr/lib/tmpfiles.d/skillrun.conf \
  /usr/share/doc/skillrun/examples/hello/SKILL.md; do
  grep -q "^$f[ .]" "$W/dump" && ok "$f" || bad "missing $f"
done
# Fedora's license directory is unversioned, Debian's rpm's versioned.
grep -Eq '^/usr/share/licenses/skillrun(-[0-9.]+)?/COPYING ' "$W/dump" &&
  ok "COPYING as %license" || bad "COPYING is not a %license file"
[ -x "$W/x/usr/share/doc/skillrun/examples/hello/scripts/hello.sh" ] &&
  ok "examples keep their execute bits" || bad "examples/hello/scripts/hello.sh is not executable"
rpm -qp --scripts "$rpm" 2>/dev/null | sed 's/^/  /'
[ $rc -eq 0 ] && echo "rpm.sh: passed" || echo "rpm.sh: FAILED"
exit $rc
