#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Debian package (debian/), in two steps that CI runs as two stages:
#
#   deb.sh build OUTDIR
#     builds the package from a clean clone of HEAD with
#     `dpkg-buildpackage -us -uc -b`, runs lintian on it (an error fails;
#     warnings are printed), and checks what it holds: every soname of the
#     binary's .note.dlopen is covered by Depends, /etc/skillrun/skillrun.conf
#     is a conffile root:root 0644, the man pages name the packaged paths,
#     profiles, completions, examples (scripts executable), the tmpfiles.d
#     entry, the AppArmor profile (built for Ubuntu only) and whatever
#     `make install` puts under /usr/share/skillrun.
#     Leaves the .deb in OUTDIR.
#
#   deb.sh install OUTDIR
#     installs that .deb with dpkg into a clean Debian root made by
#     mmdebstrap (--variant=essential plus the package's Depends: nothing
#     else, so a missing dependency shows), lets systemd-tmpfiles create its
#     directories there, enters the root with a new mount namespace and
#     pivot_root (the kernel refuses a user namespace to a process whose
#     root is not its mount namespace's root, so chroot would not do), and
#     runs the installed hello example from the installed paths as an
#     ordinary user, then as root; then removes the package (the conffile
#     and root's runs stay), purges it (nothing is left in /etc/skillrun or
#     /var/lib/skillrun) and installs it again.  The base root is cached as a tarball in
#     $SKILLRUN_DEB_CACHE (default /var/cache/skillrun-ci), keyed by the
#     package list, so that CI builds it once per job.  Needs root, network
#     to the Debian archive (the host's /etc/apt/sources.list.d/debian.sources
#     when present), mmdebstrap, unshare and pivot_root (util-linux).
#
# Not part of `make check`: it needs root, the network and minutes.  The
# build honours DEB_BUILD_OPTIONS (CI passes nocheck: it ran `make check`
# on the same tree just before).
set -u
cmd=${1:-}
out=${2:-}
[ -n "$cmd" ] && [ -n "$out" ] || { echo "usage: $0 build|install OUTDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /tmp/skillrun-deb.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
rc=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; rc=1; }

# The sonames a binary's .note.dlopen names, one a line (read with grep,
# independently of debian/dlopen-depends).
dlopen_sonames() {
  objcopy -O binary --only-section=.note.dlopen "$1" "$W/note" &&
    tr '\0' '\n' <"$W/note" | grep -o '"soname":\[[^]]*\]' |
    sed 's/^"soname":\[//; s/\]$//' | tr ',' '\n' | tr -d '"' | sort -u
}

build() {
  mkdir -p "$out"
  git clone -q "$top" "$W/skillrun" || { bad "git clone $top"; return; }
  (cd "$W/skillrun" && dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1
  local brc=$?
  if [ $brc -ne 0 ]; then
    tail -40 "$W/build.log"
    bad "dpkg-buildpackage -us -uc -b exits $brc"
    return
  fi
  ok "dpkg-buildpackage -us -uc -b"
  local upstream changelog
  upstream=$(sed -n 's/^AC_INIT(\[skillrun\], \[\([^]]*\)\].*/\1/p' "$W/skillrun/configure.ac")
  changelog=$(cd "$W/skillrun" && dpkg-parsechangelog -S Version)
  [ "${changelog%-*}" = "$upstream" ] && ok "debian/changelog's version $changelog is configure's $upstream" ||
    bad "debian/changelog's version $changelog is not configure's $upstream"
  local deb changes
  deb=$(ls "$W"/skillrun_*.deb 2>/dev/null | grep -v dbgsym | head -n 1)
  changes=$(ls "$W"/skillrun_*.changes | head -n 1)
  [ -f "$deb" ] || { bad "no .deb built"; return; }
  grep -E '^(dpkg-gencontrol|dpkg-shlibdeps|dh_[a-z]+|dlopen-depends): (warning|error)' \
    "$W/build.log" && bad "the build warns (above)"

  # lintian: errors fail, everything else is shown.  Its temporary files
  # go below $W: it leaves some (mldbm-elf-*) where TMPDIR says.
  mkdir -p "$W/lintian-tmp"
  TMPDIR=$W/lintian-tmp lintian --fail-on error --display-info "$changes" \
    >"$W/lintian.log" 2>&1
  local lrc=$?
  sed 's/^/  lintian: /' "$W/lintian.log"
  [ $lrc -eq 0 ] && ok "lintian reports no error" || bad "lintian exits $lrc"

  dpkg-deb -x "$deb" "$W/x"
  local depends pkg so
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "  Depends: $depends"
  local n=0
  for so in $(dlopen_sonames "$W/x/usr/bin/skillrun"); do
    n=$((n + 1))
    pkg=$(dpkg-query -S "*/$so" 2>/dev/null | sed -n 's/^\([^:, ]*\)[:,].*/\1/p' | head -n 1)
    if [ -z "$pkg" ]; then bad "no installed package ships $so"; continue; fi
    if printf '%s\n' "$depends" | tr ',|' '\n\n' | sed 's/^ *//; s/[ (].*//' | grep -qxF "$pkg"; then
      ok "Depends names $pkg, which ships $so (dlopen)"
    else bad "Depends lacks $pkg, which ships $so (dlopen)"; fi
  done
  [ $n -ge 3 ] && ok "$n sonames in .note.dlopen" || bad "only $n sonames in .note.dlopen"

  # The conffile: listed, root:root 0644 in the archive.
  dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles >"$W/conffiles" 2>/dev/null
  grep -qx /etc/skillrun/skillrun.conf "$W/conffiles" &&
    ok "/etc/skillrun/skillrun.conf is a conffile" || bad "/etc/skillrun/skillrun.conf is not a conffile"
  dpkg-deb -c "$deb" >"$W/contents"
  grep -Eq '^-rw-r--r-- root/root .* \./etc/skillrun/skillrun\.conf$' "$W/contents" &&
    ok "/etc/skillrun/skillrun.conf is root:root 0644" || bad "/etc/skillrun/skillrun.conf mode or owner"
  grep -Eq '^drwxr-xr-x root/root .* \./etc/skillrun/profiles/$' "$W/contents" &&
    ok "/etc/skillrun/profiles/ is root:root 0755" || bad "/etc/skillrun/profiles/ missing or mode"

  local f
  for f in usr/bin/skillrun usr/share/man/man1/skillrun.1.gz \
    usr/share/man/man5/skillrun.profile.5.gz usr/share/man/man5/skillrun-skill.5.gz \
    usr/share/man/man5/skillrun-bundle.5.gz usr/share/man/man7/skillrun-integration.7.gz \
    usr/share/skillrun/profiles/default.profile usr/share/skillrun/profiles/strict.profile \
    usr/share/skillrun/profiles/python.profile usr/share/skillrun/schema/audit.schema.json \
    usr/share/skillrun/schema/metadata.schema.json usr/share/bash-completion/completions/skillrun \
    usr/share/zsh/vendor-completions/_skillrun usr/lib/tmpfiles.d/skillrun.conf \
    usr/share/doc/skillrun/copyright usr/share/doc/skillrun/examples/hello/SKILL.md; do
    [ -f "$W/x/$f" ] && ok "/$f" || bad "missing /$f"
  done
  [ -x "$W/x/usr/share/doc/skillrun/examples/hello/scripts/hello.sh" ] &&
    ok "examples keep their execute bits" || bad "examples/hello/scripts/hello.sh is not executable"
  # Whatever make install puts under datadir/skillrun (profiles, and the
  # audit schema once it exists) is in the package.
  (cd "$W/skillrun" && make -s install DESTDIR="$W/mi" >/dev/null 2>&1)
  if [ -d "$W/mi/usr/share/skillrun" ]; then
    (cd "$W/mi" && find usr/share/skillrun -type f | sort) >"$W/mi.list"
    (cd "$W/x" && find usr/share/skillrun -type f | sort) >"$W/x.list"
    cmp -s "$W/mi.list" "$W/x.list" && ok "/usr/share/skillrun holds what make install puts there ($(wc -l <"$W/x.list") files)" ||
      { bad "/usr/share/skillrun differs from make install's:"; diff "$W/mi.list" "$W/x.list"; }
  else bad "make install in the package's build tree failed"; fi
  # The pages show the packaged paths.
  zcat "$W/x/usr/share/man/man1/skillrun.1.gz" | sed 's/\\-/-/g' >"$W/man1"
  for f in /etc/skillrun/skillrun.conf /var/lib/skillrun/runs /usr/share/skillrun/profiles; do
    grep -qF "$f" "$W/man1" && ok "skillrun(1) names $f" || bad "skillrun(1) does not name $f"
  done
  grep -q '^d /var/lib/skillrun/runs 0711 root root 30d$' "$W/x/usr/lib/tmpfiles.d/skillrun.conf" &&
    ok "tmpfiles.d ages out /var/lib/skillrun/runs" || bad "tmpfiles.d lacks /var/lib/skillrun/runs"
  # The AppArmor profile that allows the user namespace where Ubuntu
  # restricts them: a conffile for /usr/bin/skillrun built for Ubuntu;
  # nothing in /etc/apparmor.d for Debian, whose AppArmor 3 cannot parse it.
  if dpkg-vendor --derives-from Ubuntu; then
    grep -qx /etc/apparmor.d/skillrun "$W/conffiles" &&
      grep -qx 'profile skillrun /usr/bin/skillrun flags=(unconfined) {' "$W/x/etc/apparmor.d/skillrun" &&
      grep -qx '  userns,' "$W/x/etc/apparmor.d/skillrun" &&
      ok "/etc/apparmor.d/skillrun allows /usr/bin/skillrun its user namespace (a conffile)" ||
      bad "/etc/apparmor.d/skillrun missing, not a conffile, or not for /usr/bin/skillrun"
  else
    grep -q '/etc/apparmor\.d/' "$W/contents" &&
      bad "an AppArmor profile in a package built for $(dpkg-vendor --query Vendor)" ||
      ok "no AppArmor profile (built for $(dpkg-vendor --query Vendor))"
  fi
  grep -q 'systemd-tmpfiles' <(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst 2>/dev/null) &&
    ok "postinst runs systemd-tmpfiles" || bad "postinst does not run systemd-tmpfiles"
  cp "$deb" "$W/build.log" "$out/" && cp "$W/lintian.log" "$out/"
}

# ------------------------------------------------------------ install test
# Runs inside the Debian root, after pivot_root, as root; $1 is the user.
inner_test='
set -u
rc=0
ok() { echo "ok: (in the root) $*"; }
bad() { echo "FAIL: (in the root) $*"; rc=1; }
B=/usr/share/doc/skillrun/examples/hello
v=$(skillrun --version 2>&1)
printf "%s\n" "$v" | sed "s/^/  /"
printf "%s\n" "$v" | grep -q "not loadable" && bad "a dlopen library is missing" || ok "skillrun --version loads every library"
[ "$(stat -c "%U:%G %a" /etc/skillrun/skillrun.conf)" = "root:root 644" ] &&
  ok "/etc/skillrun/skillrun.conf is root:root 0644" || bad "/etc/skillrun/skillrun.conf owner or mode"
as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups -- env -i HOME=/home/tester PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
as_user skillrun --execution-id hello "$B" >/home/tester/audit.jsonl 2>/home/tester/err
r=$?
d=/home/tester/.local/state/skillrun/runs/default/hello
if [ $r -eq 0 ] && grep -q "Hello from a verified skill bundle" $d/logs/stdout.log &&
  grep -q "written by hello" $d/outputs/hello.txt; then
  ok "the hello example runs as an ordinary user"
else bad "hello as an ordinary user exits $r"; cat /home/tester/err; fi
skillrun --verify-audit /home/tester/audit.jsonl >/dev/null && ok "its audit verifies" || bad "its audit does not verify"
grep -q "config_invalid" /home/tester/audit.jsonl /home/tester/err &&
  bad "the packaged skillrun.conf is refused" || ok "the packaged skillrun.conf passes the ownership check"
as_user skillrun --explain -p strict "$B" | grep -q "\"/usr/share/skillrun/profiles/strict.profile\"" &&
  ok "-p strict is found in /usr/share/skillrun/profiles" || bad "-p strict is not found"
skillrun --execution-id root-hello "$B" >/root-audit.jsonl 2>/root-err
r=$?
d=/var/lib/skillrun/runs/default/root-hello
if [ $r -eq 0 ] && grep -q "written by hello" $d/outputs/hello.txt; then
  ok "the hello example runs as root, its run in /var/lib/skillrun/runs"
else bad "hello as root exits $r"; cat /root-err; fi
exit $rc
'

# Enters root ($1) with a new mount namespace: binds it on itself, mounts
# /proc, /sys, /dev and a /run tmpfs, pivot_roots into it and runs the test.
enter_root() {
  unshare -m --propagation private -- /bin/bash -ec '
    r=$1
    mount --rbind "$r" "$r"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=0755 tmpfs "$r/run"
    cd "$r"
    pivot_root . .
    umount -l .
    cd /
    exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 /bin/sh /inner-test.sh
  ' enter "$1"
}

install_test() {
  local deb
  deb=$(ls "$out"/skillrun_*.deb 2>/dev/null | grep -v dbgsym | head -n 1)
  [ -f "$deb" ] || { bad "no .deb in $out (run deb.sh build first)"; return; }
  for t in mmdebstrap unshare; do
    command -v $t >/dev/null || { bad "$t is missing"; return; }
  done
  # The package's Depends, names only: the root holds them and nothing more
  # but mount, whose umount detaches the host's root after pivot_root
  # (mount is not Essential since Debian 12).
  local deps
  deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/ //g' | grep . | sort -u | paste -sd, -)
  local cache=${SKILLRUN_DEB_CACHE:-/var/cache/skillrun-ci}
  local key
  key=$(printf 'bookworm essential %s mount\n' "$deps" | sha256sum | cut -c1-16)
  local base=$cache/debian-bookworm-$key.tar
  mkdir -p "$cache"
  if [ -f "$base" ]; then ok "base root cached: $base"; else
    local sources=()
    [ -f /etc/apt/sources.list.d/debian.sources ] && sources=(/etc/apt/sources.list.d/debian.sources)
    # Check-Valid-Until off: a snapshot mirror's Release may have expired.
    if mmdebstrap --quiet --format=tar --variant=essential --include="$deps,mount" \
      --aptopt='Acquire::Check-Valid-Until "false"' \
      bookworm "$base.tmp" "${sources[@]}" >"$W/mmdebstrap.log" 2>&1; then
      mv "$base.tmp" "$base"
      # Bases made for another package list are not needed again.
      find "$cache" -maxdepth 1 -name 'debian-bookworm-*.tar' ! -name "${base##*/}" -delete
      ok "base root made by mmdebstrap (essential + $deps)"
    else
      rm -f "$base.tmp"
      tail -20 "$W/mmdebstrap.log"
      bad "mmdebstrap failed"
      return
    fi
  fi
  local R=$W/root
  mkdir "$R"
  tar -C "$R" -xf "$base" || { bad "cannot unpack $base"; return; }
  cp "$deb" "$R/tmp/skillrun.deb"
  if chroot "$R" dpkg -i /tmp/skillrun.deb >"$W/dpkg.log" 2>&1; then
    ok "dpkg -i installs the package into the clean root"
  else
    cat "$W/dpkg.log"
    bad "dpkg -i failed"
    return
  fi
  # The root has no systemd: the host's systemd-tmpfiles creates what the
  # package's entry asks for, as boot would.
  if command -v systemd-tmpfiles >/dev/null; then
    systemd-tmpfiles --create --root="$R" "$R/usr/lib/tmpfiles.d/skillrun.conf" &&
      [ "$(stat -c %a "$R/var/lib/skillrun/runs")" = 711 ] &&
      ok "systemd-tmpfiles --create makes /var/lib/skillrun/runs 0711" ||
      bad "systemd-tmpfiles --create with the package's entry"
  else
    bad "systemd-tmpfiles is missing (package systemd)"
  fi
  echo 'tester:x:1000:1000::/home/tester:/bin/sh' >>"$R/etc/passwd"
  echo 'tester:x:1000:' >>"$R/etc/group"
  mkdir -p "$R/home/tester"
  chown 1000:1000 "$R/home/tester"
  printf '%s' "$inner_test" >"$R/inner-test.sh"
  enter_root "$R" || rc=1
  # Removal keeps the conffile and root's run directories; purge takes
  # both (Debian Policy 10.7.3, 10.8): nothing of the package is left in
  # /etc/skillrun or /var/lib/skillrun, which the tmpfiles.d entry that
  # aged out old runs no longer covers.
  local runs=$R/var/lib/skillrun/runs/default/root-hello
  if [ -d "$runs" ] && chroot "$R" dpkg -r skillrun >"$W/dpkg-r.log" 2>&1 &&
    [ -f "$R/etc/skillrun/skillrun.conf" ] && [ -d "$runs" ]; then
    ok "dpkg -r keeps /etc/skillrun/skillrun.conf and root's runs"
  else
    cat "$W/dpkg-r.log" 2>/dev/null
    bad "dpkg -r: conffile or runs gone, or it failed"
  fi
  local left
  if chroot "$R" dpkg --purge skillrun >"$W/dpkg-purge.log" 2>&1; then
    left=$(cd "$R" && find etc/skillrun var/lib/skillrun 2>/dev/null | head -n 5)
    [ -z "$left" ] && ok "dpkg --purge leaves nothing in /etc/skillrun or /var/lib/skillrun" ||
      bad "dpkg --purge leaves: $(printf '%s ' $left)"
  else
    cat "$W/dpkg-purge.log"
    bad "dpkg --purge failed"
  fi
  # Installing again after purge recreates the conffile.
  chroot "$R" dpkg -i /tmp/skillrun.deb >"$W/dpkg-re.log" 2>&1 &&
    [ "$(stat -c '%U:%G %a' "$R/etc/skillrun/skillrun.conf" 2>/dev/null)" = "root:root 644" ] &&
    ok "dpkg -i after purge installs the conffile again" ||
    { cat "$W/dpkg-re.log"; bad "dpkg -i after purge"; }
}

case $cmd in
build) build ;;
install) install_test ;;
*) echo "usage: $0 build|install OUTDIR" >&2; exit 2 ;;
esac
[ $rc -eq 0 ] && echo "deb.sh $cmd: passed" || echo "deb.sh $cmd: FAILED"
exit $rc
