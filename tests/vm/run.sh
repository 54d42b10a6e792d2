#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The VM tier, host side (`make check-vm`): builds the initramfs, boots
# Debian's kernel under qemu (software emulation, no KVM), collects the
# "VMTAP: " lines the guest prints on its serial console, and prints them
# as one numbered TAP stream followed by "N passed, M failed".  Exit status
# 0 only when every test passed.  A kernel that cannot be fetched, a VM
# that does not finish, or no test at all is a failure, never a skip.
#
# Environment (set by Makefile.am): SKILLRUN, PROBE, CGROUP_TEST, HOG,
# TOP_BUILDDIR.  Optional: VM_CACHE (kernel cache), VM_TIMEOUT (seconds,
# default 600), VM_TESTS (all|cgroup|skillrun), QEMU, VM_IMAGE: busybox
# (default: the busybox initramfs, tests/vm/init) or systemd (a Debian
# root with systemd as init and a user manager, build-systemd-image.sh,
# tests/vm/systemd-tests.sh; VM_IMAGE_CACHE keeps its root).
set -u

here=$(cd "$(dirname "$0")" && pwd)
builddir=${TOP_BUILDDIR:-$(pwd)}
export VM_SRCDIR=$here
export VM_CACHE=${VM_CACHE:-$builddir/tests/vm/cache}
export VM_WORK=${VM_WORK:-$builddir/tests/vm/work}
export SKILLRUN=${SKILLRUN:-$builddir/src/skillrun}
export PROBE=${PROBE:-$builddir/tests/probe}
export CGROUP_TEST=${CGROUP_TEST:-$builddir/tests/vm/cgroup-test}
export HOG=${HOG:-$builddir/tests/hog}
timeout_s=${VM_TIMEOUT:-600}
vmtests=${VM_TESTS:-all}
qemu=${QEMU:-qemu-system-x86_64}
image=${VM_IMAGE:-busybox}

fail_early() {
  echo "not ok 1 - vm: $1"
  echo "1..1"
  echo "0 passed, 1 failed"
  exit 1
}

mkdir -p "$VM_WORK" || fail_early "mkdir $VM_WORK"
command -v "$qemu" >/dev/null || fail_early "$qemu not found (install qemu-system-x86)"
command -v cpio >/dev/null || fail_early "cpio not found"

t0=$(date +%s)
# The kernel comes with the busybox initramfs, which the systemd image
# does not use.
if ! sh "$here/build-initramfs.sh" >"$VM_WORK/build.log" 2>&1; then
  sed 's/^/# /' "$VM_WORK/build.log"
  fail_early "build the initramfs and fetch the kernel (see above)"
fi
initrd=$VM_WORK/initramfs.cpio.gz
mem=1024
append="console=ttyS0 panic=-1 loglevel=3 rdinit=/init vmtests=$vmtests"
if [ "$image" = systemd ]; then
  command -v mmdebstrap >/dev/null || fail_early "mmdebstrap not found"
  if ! sh "$here/build-systemd-image.sh" >"$VM_WORK/build-systemd.log" 2>&1; then
    sed 's/^/# /' "$VM_WORK/build-systemd.log"
    fail_early "build the systemd image (see above)"
  fi
  sed 's/^/# /' "$VM_WORK/build-systemd.log"
  initrd=$VM_WORK/initramfs-systemd.cpio.gz
  # The root is in RAM twice while /init copies it to a tmpfs.
  mem=1536
  append="console=ttyS0 panic=-1 loglevel=3 rdinit=/init quiet systemd.show_status=0 systemd.mask=serial-getty@ttyS0.service systemd.mask=getty@tty1.service"
fi
t1=$(date +%s)

console=$VM_WORK/console.log
rm -f "$console"
# TCG on purpose: the tier must not depend on /dev/kvm being usable.
timeout "$timeout_s" "$qemu" -accel tcg -cpu max -smp 2 -m "$mem" \
  -nodefaults -no-reboot -display none -monitor none \
  -serial "file:$console" -nic none \
  -kernel "$VM_CACHE/vmlinuz" -initrd "$initrd" \
  -append "$append" \
  </dev/null >"$VM_WORK/qemu.log" 2>&1
qrc=$?
t2=$(date +%s)

n=0
failed=0
emit() { # emit ok|not-ok DESCRIPTION
  n=$((n + 1))
  if [ "$1" = ok ]; then
    echo "ok $n - $2"
  else
    failed=$((failed + 1))
    echo "not ok $n - $2"
  fi
}

echo "# kernel: $(cat "$VM_CACHE/kernel-package" 2>/dev/null || echo '?')"
echo "# image: $image, initramfs build: $((t1 - t0)) s, VM run (boot + tests + poweroff): $((t2 - t1)) s"
tmp=$VM_WORK/tap.txt
tr -d '\r' <"$console" 2>/dev/null | sed -n 's/^VMTAP: //p' >"$tmp"
while IFS= read -r line; do
  case "$line" in
  "ok - "*) emit ok "${line#ok - }" ;;
  "ok "*) emit ok "${line#ok }" ;;
  "not ok - "*) emit not-ok "${line#not ok - }" ;;
  "not ok "*) emit not-ok "${line#not ok }" ;;
  "#"*) echo "$line" ;;
  *) echo "# $line" ;;
  esac
done <"$tmp"

if ! tr -d '\r' <"$console" 2>/dev/null | grep -qx 'VMTAP-DONE'; then
  if [ "$qrc" = 124 ]; then
    emit not-ok "vm: finished within ${timeout_s} s (timed out)"
  else
    emit not-ok "vm: ran to the end (qemu exit $qrc)"
  fi
  echo "# last console lines:"
  tr -d '\r' <"$console" 2>/dev/null | tail -n 30 | sed 's/^/#   /'
  sed 's/^/#   qemu: /' "$VM_WORK/qemu.log"
fi
if [ "$n" = 0 ]; then
  emit not-ok "vm: printed at least one test result"
fi

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
