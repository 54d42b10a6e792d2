#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the systemd VM's boot files (tests/vm/run.sh with VM_IMAGE=systemd):
#   $VM_IMAGE_CACHE/vm-systemd-KEY.cpio.gz  a small Debian 12 root made by
#       mmdebstrap (essential + systemd, dbus, logind's PAM module and the
#       libraries skillrun links), with user "tester" (uid 1000) lingering
#       so that logind starts its user manager at boot.  Cached, KEY being
#       a hash of the package list and the hooks, so a job builds it once.
#   $VM_WORK/initramfs-systemd.cpio.gz  that root followed by a second
#       archive with the built skillrun, the hog skill, the test script,
#       the unit that runs it and the /init shim (the kernel unpacks
#       concatenated archives in order).
# The kernel is build-initramfs.sh's ($VM_CACHE/vmlinuz).
#
# Environment: VM_CACHE, VM_WORK, VM_SRCDIR, SKILLRUN, HOG; optional
# VM_IMAGE_CACHE (default /var/cache/skillrun-ci as root, else VM_CACHE).
# Needs mmdebstrap, cpio and the Debian archive.  Any failure is fatal.
set -eu

die() {
  echo "build-systemd-image: $*" >&2
  exit 1
}

: "${VM_CACHE:?}" "${VM_WORK:?}" "${VM_SRCDIR:?}" "${SKILLRUN:?}" "${HOG:?}"
if [ -z "${VM_IMAGE_CACHE:-}" ]; then
  if [ "$(id -u)" = 0 ]; then VM_IMAGE_CACHE=/var/cache/skillrun-ci; else VM_IMAGE_CACHE=$VM_CACHE; fi
fi
mkdir -p "$VM_IMAGE_CACHE" "$VM_WORK"

# Nothing here for skillrun's optional libraries (libcrypto, libseccomp's
# full API, libmagic): the tests use none of them; libsystemd0 comes with
# systemd.  jq reads the audit.  Half of what the packages bring is never
# used at boot or by the tests (perl's modules, iconv's converters): a hook
# removes it.  nodejs is there for issue 16's `node -e 1` (V8 reserves
# address space that an RLIMIT_AS would refuse): it and its libraries
# (libnode, ICU) are most of the root.
pkgs="systemd,systemd-sysv,dbus,libpam-systemd,libcap2,libmnl0,libyaml-0-2,libjansson4,libseccomp2,jq,nodejs"
hooks_version=2 # bump when the hooks below change
key=$(printf 'bookworm essential %s hooks %s\n' "$pkgs" "$hooks_version" |
  sha256sum | cut -c1-16)
base=$VM_IMAGE_CACHE/vm-systemd-$key.cpio.gz

if [ ! -s "$base" ]; then
  command -v mmdebstrap >/dev/null || die "mmdebstrap not found"
  set --
  [ -f /etc/apt/sources.list.d/debian.sources ] &&
    set -- /etc/apt/sources.list.d/debian.sources
  rm -f "$base.tmp"
  # A directory, then one cpio: mmdebstrap's own cpio output would do, but
  # the hooks are simpler on a directory.
  tree=$VM_WORK/systemd-tree
  rm -rf "$tree"
  # Check-Valid-Until off: a snapshot mirror's Release may have expired.
  mmdebstrap --quiet --variant=essential --include="$pkgs" \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='chroot "$1" useradd -m -u 1000 -s /bin/sh tester' \
    --customize-hook='mkdir -p "$1/var/lib/systemd/linger" && touch "$1/var/lib/systemd/linger/tester"' \
    --customize-hook='echo skillrun-vm >"$1/etc/hostname"; printf "127.0.0.1 localhost skillrun-vm\n" >"$1/etc/hosts"' \
    --customize-hook='chroot "$1" passwd -d root >/dev/null' \
    --customize-hook='rm -rf "$1/var/cache/apt" "$1/var/lib/apt/lists" "$1/usr/share/zoneinfo"' \
    --customize-hook='rm -rf "$1/usr/share/perl" "$1/usr/lib/x86_64-linux-gnu/perl" "$1/usr/lib/x86_64-linux-gnu/gconv" "$1/usr/share/i18n"' \
    bookworm "$tree" "$@" >"$VM_WORK/mmdebstrap.log" 2>&1 ||
    {
      tail -n 30 "$VM_WORK/mmdebstrap.log" >&2
      die "mmdebstrap failed"
    }
  (cd "$tree" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
    gzip -1 >"$base.tmp" || die "cpio of the root"
  rm -rf "$tree"
  mv "$base.tmp" "$base"
  # Roots made for another package list are not needed again.
  find "$VM_IMAGE_CACHE" -maxdepth 1 -name 'vm-systemd-*.cpio.gz' \
    ! -name "${base##*/}" -delete
  echo "built $base"
else
  echo "cached $base"
fi

# ------------------------------------------------------------ the overlay
ov=$VM_WORK/systemd-overlay
rm -rf "$ov"
mkdir -p "$ov/newroot" "$ov/usr/bin" "$ov/usr/libexec/skillrun-vm" \
  "$ov/etc/systemd/system/multi-user.target.wants"
# The binaries run against the root's own libraries (the same Debian 12):
# a library the root lacks is a missing package above, not copied in.
cp -L "$SKILLRUN" "$ov/usr/bin/skillrun"
cp -L "$HOG" "$ov/usr/libexec/skillrun-vm/hog"
cp "$VM_SRCDIR/systemd-tests.sh" "$ov/usr/libexec/skillrun-vm/systemd-tests.sh"
cp "$VM_SRCDIR/systemd-init" "$ov/init"
chmod 0755 "$ov/init" "$ov/usr/bin/skillrun" \
  "$ov/usr/libexec/skillrun-vm/hog" "$ov/usr/libexec/skillrun-vm/systemd-tests.sh"
cat >"$ov/etc/systemd/system/skillrun-vmtest.service" <<'EOF'
[Unit]
Description=skillrun VM tier: tests under a systemd user manager
Wants=user@1000.service systemd-logind.service dbus.service
After=user@1000.service systemd-logind.service dbus.service multi-user.target

[Service]
Type=oneshot
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no
ExecStart=/usr/libexec/skillrun-vm/systemd-tests.sh root
EOF
ln -s ../skillrun-vmtest.service \
  "$ov/etc/systemd/system/multi-user.target.wants/skillrun-vmtest.service"
(cd "$ov" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
  gzip -1 >"$VM_WORK/overlay-systemd.cpio.gz"
cat "$base" "$VM_WORK/overlay-systemd.cpio.gz" \
  >"$VM_WORK/initramfs-systemd.cpio.gz.tmp"
mv "$VM_WORK/initramfs-systemd.cpio.gz.tmp" "$VM_WORK/initramfs-systemd.cpio.gz"
rm -rf "$ov"
