#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `make install` puts every file where distributions expect it, under the
# configured directories, and an ordinary user's
# `./configure --prefix=$HOME/.local && make install` works and runs the
# installed example.  Run from a configured build directory (CI does).
#
# 1. `make install DESTDIR=...` of this build: the binary, man pages (with
#    this build's paths), profiles, completions below the prefix, the
#    tmpfiles.d entry, the AppArmor profile where configure installs one,
#    the examples with their modes, the sample skillrun.conf; then `make uninstall` leaves no file behind.
# 2. An ordinary user builds the `make dist` tarball as the README's quick
#    start does (the default prefix; only the objects that compile in the
#    directories, src/paths.h's users, to keep the check short), then
#    configures it again with
#    --prefix=$HOME/.local and installs it: the installed binary names the
#    new directories, runs the installed hello example and finds a shipped
#    profile by name.  As root, a user is created for
#    this (useradd) and removed afterwards; otherwise it is the caller.
#    SKILLRUN_INSTALL_USER_CHECK=no skips this part.
set -u
top_srcdir=$(sed -n 's/^abs_top_srcdir = //p' Makefile)
[ -n "$top_srcdir" ] || { echo "not a configured build directory"; exit 1; }
D=$(mktemp -d /tmp/skillrun-ci-install.XXXXXX)
chmod 755 "$D"
user=
cleanup() {
  # The user's staging base on /dev/shm, which skillrun keeps between
  # runs, goes with the user (rmdir: a run left in it is a leak).
  if [ -n "$user" ]; then
    rmdir "/dev/shm/skillrun-$(id -u "$user")" 2>/dev/null
    userdel "$user" 2>/dev/null
  fi
  rm -rf "$D"
}
trap cleanup EXIT
rc=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; rc=1; }

# The configured directories, expanded as make expands them.
mkvar() { make -s --no-print-directory -f Makefile -f - print-var VAR="$1" <<'EOF'
print-var:
	@echo '$($(VAR))'
EOF
}
prefix=$(mkvar prefix)
bindir=$(mkvar bindir)
sysconfdir=$(mkvar sysconfdir)
datadir=$(mkvar datadir)
mandir=$(mkvar mandir)
docdir=$(mkvar docdir)
bashdir=$(mkvar bashcompletiondir)
zshdir=$(mkvar zshcompletiondir)
tmpfilesdir=$(mkvar TMPFILESDIR)
apparmordir=$(mkvar APPARMORDIR)

make -s install DESTDIR="$D/root" >/dev/null || { echo "make install failed"; exit 1; }
R=$D/root
for f in "$bindir/skillrun" "$mandir/man1/skillrun.1" \
  "$mandir/man5/skillrun.profile.5" "$mandir/man5/skillrun-skill.5" \
  "$mandir/man5/skillrun-bundle.5" "$mandir/man7/skillrun-integration.7" \
  "$datadir/skillrun/profiles/default.profile" \
  "$datadir/skillrun/profiles/strict.profile" "$datadir/skillrun/profiles/python.profile" \
  "$datadir/skillrun/schema/audit.schema.json" "$datadir/skillrun/schema/metadata.schema.json" \
  "$bashdir/skillrun" "$zshdir/_skillrun" "$docdir/README.md" "$docdir/skillrun.conf"; do
  if [ -f "$R$f" ]; then ok "$f"; else bad "missing $f"; fi
done
if [ -d "$R$sysconfdir/skillrun/profiles" ]; then ok "$sysconfdir/skillrun/profiles/"; else
  bad "missing $sysconfdir/skillrun/profiles/"; fi
case $bashdir in
"$prefix"/*) ok "the bash completion is below the prefix ($bashdir)" ;;
*) bad "the bash completion directory $bashdir is outside the prefix $prefix" ;;
esac
# The default prefix's zsh completion is where zsh looks: every zsh built
# with its defaults (Debian's, Fedora's, Arch's) has
# /usr/local/share/zsh/site-functions in its fpath; none has
# /usr/local/share/zsh/vendor-completions (Debian's zsh reads
# vendor-completions below /usr only).  Another prefix: the zsh here, if any.
if [ "$prefix" = /usr/local ]; then
  if [ "$zshdir" = /usr/local/share/zsh/site-functions ] ||
    { command -v zsh >/dev/null && zsh -fc 'print -l -- $fpath' | grep -qxF -- "$zshdir"; }; then
    ok "the zsh completion is in a directory zsh searches ($zshdir)"
  else bad "the zsh completion directory $zshdir is not in zsh's fpath (/usr/local/share/zsh/site-functions is)"; fi
elif command -v zsh >/dev/null; then
  zsh -fc 'print -l -- $fpath' | grep -qxF -- "$zshdir" &&
    ok "the zsh completion is in this zsh's fpath ($zshdir)" ||
    echo "note: $zshdir is not in this zsh's fpath (prefix $prefix)"
fi
if [ "$tmpfilesdir" != no ]; then
  t=$R$tmpfilesdir/skillrun.conf
  if [ -f "$t" ] && grep -q "^d $(mkvar localstatedir)/lib/skillrun/runs 0711 root root " "$t"; then
    ok "$tmpfilesdir/skillrun.conf creates this build's runs directory"
  else bad "$tmpfilesdir/skillrun.conf missing or without the runs directory"; fi
fi
# The AppArmor profile, where configure installs one, allows the user
# namespace to this build's binary; none is installed otherwise.
if [ "$apparmordir" != no ]; then
  a=$R$apparmordir/skillrun
  if [ -f "$a" ] && grep -q "^profile skillrun $bindir/skillrun flags=(unconfined) {$" "$a" &&
    grep -q '^  userns,$' "$a"; then
    ok "the AppArmor profile allows $bindir/skillrun its user namespace"
  else bad "the AppArmor profile $a missing or not for $bindir/skillrun"; fi
elif [ -n "$(find "$R" -path '*/apparmor.d/*' -print -quit)" ]; then
  bad "an AppArmor profile is installed although configure said no"
else ok "no AppArmor profile (configure: no)"; fi
# Installed pages and completions name this build's directories.
for f in "$R$mandir/man1/skillrun.1" "$R$mandir/man5/skillrun.profile.5" \
  "$R$mandir/man7/skillrun-integration.7" "$R$bashdir/skillrun" "$R$zshdir/_skillrun"; do
  [ -f "$f" ] || continue
  if grep -Eq '@[a-z_]+@' "$f"; then bad "${f#"$R"} has a placeholder left"; fi
done
grep -qF "$(printf '%s' "$sysconfdir" | sed 's/-/\\-/g')/skillrun/skillrun.conf" \
  "$R$mandir/man1/skillrun.1" && ok "skillrun(1) names $sysconfdir/skillrun/skillrun.conf" ||
  bad "skillrun(1) does not name $sysconfdir/skillrun/skillrun.conf"

# Every file of examples/ is installed, scripts still executable, and the
# installed hello bundle has the digest of the source one.
n=0
while IFS= read -r f; do
  n=$((n + 1))
  g=$R$docdir/$f
  if [ ! -f "$g" ]; then bad "examples: $f is not installed"; continue; fi
  if [ -x "$top_srcdir/$f" ] && [ ! -x "$g" ]; then bad "examples: $f lost its execute bit"; fi
done < <(cd "$top_srcdir" && find examples -type f | sort)
[ "$n" -ge 8 ] && ok "$n files of examples/ installed under $docdir" || bad "only $n example files"
want=$(src/skillrun --digest "$top_srcdir/examples/hello" | cut -d" " -f1)
got=$("$R$bindir/skillrun" --digest "$R$docdir/examples/hello" | cut -d" " -f1)
if [ -n "$want" ] && [ "$want" = "$got" ]; then ok "installed examples/hello has the source digest"
else bad "installed examples/hello digest $got, source $want"; fi
"$R$bindir/skillrun" --version >/dev/null && ok "installed skillrun --version" || bad "installed skillrun --version"

make -s uninstall DESTDIR="$R" >/dev/null || bad "make uninstall failed"
left=$(find "$R" -type f | sed "s|^$R||")
if [ -z "$left" ]; then ok "make uninstall removes every file"; else
  bad "make uninstall leaves:"; printf '  %s\n' $left; fi

# ---- 2. an ordinary user's install below $HOME/.local
if [ "${SKILLRUN_INSTALL_USER_CHECK:-yes}" = no ]; then
  echo "skipped: the ordinary user's --prefix=\$HOME/.local install (SKILLRUN_INSTALL_USER_CHECK=no)"
  exit $rc
fi
tarball=$(mkvar PACKAGE)-$(mkvar VERSION).tar.gz
make -s dist-gzip >/dev/null 2>&1 && [ -f "$tarball" ] || { bad "make dist failed"; exit 1; }
mv "$tarball" "$D/skillrun-dist.tar.gz"
home=$D/home
mkdir -p "$home"
if [ "$(id -u)" -eq 0 ]; then
  command -v useradd >/dev/null || { bad "useradd is missing (passwd package)"; exit 1; }
  user=srinst$$
  useradd -M -N -g nogroup -d "$home" -s /bin/sh "$user" || { user=; bad "useradd failed"; exit 1; }
  chown "$user:" "$home"
  run_as() { setpriv --reuid="$user" --regid=nogroup --init-groups -- "$@"; }
else
  run_as() { "$@"; }
fi
cp "$D/skillrun-dist.tar.gz" "$home/"
[ -z "$user" ] || chown "$user:" "$home/skillrun-dist.tar.gz"
# What a user types, in a clean environment; -j2 keeps it within CI's time.
run_as env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 sh -ec '
  cd "$HOME"
  mkdir src
  tar xzf skillrun-dist.tar.gz -C src --strip-components=1
  cd src
  ./configure -q
  make -s src/paths.h src/default-profile.c >/dev/null
  make -s -j2 src/cli.o src/conf.o src/run.o src/workspace.o src/cmd-platform.o >/dev/null
  ./configure -q --prefix="$HOME/.local"
  make -s -j2 >/dev/null
  make -s install >/dev/null
' >"$D/user-build.err" 2>&1
urc=$?
if [ $urc -ne 0 ]; then
  bad "./configure --prefix=\$HOME/.local && make install as $(run_as id -un 2>/dev/null): exit $urc"
  tail -20 "$D/user-build.err"
  exit 1
fi
ok "./configure --prefix=\$HOME/.local && make install as $(run_as id -un 2>/dev/null)"
# Built first with the default prefix: what the binary compiled in is the
# second configure's, as the pages made beside it say.
run_as env -i HOME="$home" PATH=/usr/bin:/bin "$home/.local/bin/skillrun" --help >"$D/help" 2>&1
grep -qF "(default $home/.local/etc/skillrun/skillrun.conf)" "$D/help" &&
  ok "user install: --help names ~/.local/etc/skillrun/skillrun.conf" ||
  { bad "user install: --help does not name ~/.local/etc/skillrun/skillrun.conf"; grep -F skillrun.conf "$D/help"; }
L=$home/.local
for f in bin/skillrun share/man/man1/skillrun.1 share/bash-completion/completions/skillrun \
  share/skillrun/profiles/strict.profile share/doc/skillrun/examples/hello/SKILL.md; do
  if [ -f "$L/$f" ]; then ok "user install: ~/.local/$f"; else bad "user install: missing ~/.local/$f"; fi
done
grep -qF "$L/etc/skillrun/profiles" "$L/share/bash-completion/completions/skillrun" &&
  ok "user install: the completion names ~/.local/etc/skillrun/profiles" ||
  bad "user install: the completion does not name ~/.local/etc/skillrun/profiles"
run_as env -i HOME="$home" PATH=/usr/bin:/bin "$L/bin/skillrun" --explain -p strict \
  "$L/share/doc/skillrun/examples/hello" >"$D/explain.json" 2>"$D/explain.err" &&
  grep -qF "$L/share/skillrun/profiles/strict.profile" "$D/explain.json" &&
  ok "user install: -p strict is found in ~/.local/share/skillrun/profiles" ||
  { bad "user install: -p strict not found"; cat "$D/explain.err"; }
run_as env -i HOME="$home" PATH=/usr/bin:/bin "$L/bin/skillrun" --execution-id inst-hello \
  "$L/share/doc/skillrun/examples/hello" >"$D/audit.jsonl" 2>"$D/run.err"
hrc=$?
out=$home/.local/state/skillrun/runs/default/inst-hello
if [ $hrc -eq 0 ] && grep -q "Hello from a verified skill bundle" "$out/logs/stdout.log" 2>/dev/null; then
  ok "user install: the installed hello example runs (its output in ~/.local/state)"
else
  bad "user install: the installed hello example exits $hrc"; cat "$D/run.err"
fi
exit $rc
