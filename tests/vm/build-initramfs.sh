#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the VM tier's boot files:
#   $VM_CACHE/vmlinuz          Debian's packaged kernel (fetched once, cached)
#   $VM_WORK/initramfs.cpio.gz busybox, the built skillrun, its shared
#                              libraries, the probe and the VM tests
#
# Environment: VM_CACHE, VM_WORK, VM_SRCDIR (this directory), SKILLRUN,
# PROBE, CGROUP_TEST, HOG (built binaries).  The kernel package is downloaded
# with apt-get and unpacked with dpkg -x, never installed.  Any failure is
# fatal: the tier must fail loudly, not skip.
set -eu

die() {
  echo "build-initramfs: $*" >&2
  exit 1
}

: "${VM_CACHE:?}" "${VM_WORK:?}" "${VM_SRCDIR:?}" "${SKILLRUN:?}" "${PROBE:?}"
: "${CGROUP_TEST:?}" "${HOG:?}"

# ------------------------------------------------------------ the kernel
mkdir -p "$VM_CACHE"
if [ ! -s "$VM_CACHE/vmlinuz" ]; then
  command -v apt-cache >/dev/null && command -v apt-get >/dev/null &&
    command -v dpkg >/dev/null ||
    die "apt-get/apt-cache/dpkg are needed to fetch Debian's kernel"
  pkg=$(apt-cache depends linux-image-amd64 |
    awk '/Depends: linux-image-/{print $2; exit}')
  [ -n "$pkg" ] || die "apt-cache: linux-image-amd64 has no linux-image-* dependency (apt-get update?)"
  rm -rf "$VM_CACHE/dl"
  mkdir -p "$VM_CACHE/dl"
  (cd "$VM_CACHE/dl" && apt-get download "$pkg") ||
    die "apt-get download $pkg failed"
  deb=$(ls "$VM_CACHE"/dl/*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || die "apt-get download $pkg produced no .deb"
  dpkg -x "$deb" "$VM_CACHE/dl/x" || die "dpkg -x $deb failed"
  vmlinuz=$(ls "$VM_CACHE"/dl/x/boot/vmlinuz-* 2>/dev/null | head -n 1)
  [ -n "$vmlinuz" ] || die "$deb contains no boot/vmlinuz-*"
  cp "$vmlinuz" "$VM_CACHE/vmlinuz.tmp"
  cp "$VM_CACHE"/dl/x/boot/config-* "$VM_CACHE/config" 2>/dev/null || :
  basename "$deb" >"$VM_CACHE/kernel-package"
  mv "$VM_CACHE/vmlinuz.tmp" "$VM_CACHE/vmlinuz"
  rm -rf "$VM_CACHE/dl"
fi
# No modules go into the initramfs: Debian builds cgroup2, memcg, pids,
# cpu, tmpfs, devtmpfs, proc and every namespace into the kernel.
if [ -s "$VM_CACHE/config" ]; then
  for opt in CONFIG_CGROUPS CONFIG_MEMCG CONFIG_CGROUP_PIDS CONFIG_CGROUP_SCHED \
    CONFIG_USER_NS CONFIG_PID_NS CONFIG_NET_NS CONFIG_TMPFS CONFIG_DEVTMPFS \
    CONFIG_BLK_DEV_INITRD CONFIG_RD_GZIP CONFIG_SERIAL_8250_CONSOLE; do
    grep -qx "$opt=y" "$VM_CACHE/config" || die "kernel config lacks $opt=y"
  done
fi

# ------------------------------------------------------------ the root
root=$VM_WORK/root
rm -rf "$root"
mkdir -p "$root"
for d in usr/bin usr/sbin usr/lib usr/lib64 usr/libexec/skillrun-vm proc sys \
  dev tmp run etc root var/tmp newroot; do
  mkdir -p "$root/$d"
done
# Merged /usr, as on Debian: the sandbox binds /usr and links the rest.
ln -s usr/bin "$root/bin"
ln -s usr/sbin "$root/sbin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"

busybox=$(command -v busybox) || die "busybox not found (busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
  ldd "$busybox" 2>&1 | grep -q 'not a dynamic executable' ||
  die "$busybox is not statically linked (install busybox-static)"
cp -L "$busybox" "$root/usr/bin/busybox"
for applet in $("$busybox" --list); do
  [ "$applet" = busybox ] || ln -s busybox "$root/usr/bin/$applet"
done

# Copies a dynamically linked program and every library ldd names,
# keeping their paths (so the loader finds them without ld.so.cache).
copy_with_libs() {
  src=$1
  dst=$2
  [ -x "$src" ] || die "$src: not an executable"
  mkdir -p "$root$(dirname "$dst")"
  rm -f "$root$dst"
  cp -L "$src" "$root$dst"
  ldd "$src" 2>/dev/null | awk '
    $2 == "=>" && $3 ~ /^\// { print $3 }
    $1 ~ /^\// { print $1 }' | while read -r lib; do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib" || die "copy $lib"
  done
}

copy_with_libs "$SKILLRUN" /usr/bin/skillrun
copy_with_libs "$PROBE" /usr/libexec/skillrun-vm/probe
copy_with_libs "$CGROUP_TEST" /usr/libexec/skillrun-vm/cgroup-test
copy_with_libs "$HOG" /usr/libexec/skillrun-vm/hog
# util-linux setpriv: busybox's has no --reuid/--regid.  Scripts call it by
# its path: busybox sh runs its own applet for a bare `setpriv`.
copy_with_libs "$(command -v setpriv || echo /usr/bin/setpriv)" /usr/bin/setpriv
# jq is optional: the audit checks fall back to grep without it.
if command -v jq >/dev/null; then
  copy_with_libs "$(command -v jq)" /usr/bin/jq
fi

cp "$VM_SRCDIR/init" "$root/init"
cp "$VM_SRCDIR/skillrun-tests.sh" "$root/usr/libexec/skillrun-vm/skillrun-tests.sh"
chmod 0755 "$root/init" "$root/usr/libexec/skillrun-vm/skillrun-tests.sh"

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
printf '127.0.0.1 localhost\n' >"$root/etc/hosts"
printf 'skillrun-vm\n' >"$root/etc/hostname"

# ------------------------------------------------------------ the archive
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
  gzip -1 >"$VM_WORK/initramfs.cpio.gz.tmp"
mv "$VM_WORK/initramfs.cpio.gz.tmp" "$VM_WORK/initramfs.cpio.gz"
