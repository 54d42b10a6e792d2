#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, filesystem classes: host filesystem reach, writes
# to read-only areas, /proc and /dev sensitive paths.  Each case is a
# technique in tests/attacks/attacker.c (the comment there names the CVE);
# each must be BLOCKED, as root and as an unprivileged user, and the host
# must be unchanged afterwards.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

echo "input bait" >"$T/in.txt"
chmod 644 "$T/in.txt"
bundle_digest_before=$("$SKILLRUN" --digest "$B" 2>&1)
in_before=$(stat -c '%s %Y %i' "$T/in.txt")
passwd_before=$(stat -c '%s %Y' /etc/passwd)

reach_cases=(
  "host_path:$MARKER" "host_path:$T" host_path:/etc/shadow host_path:/root
  host_path:/home host_path:/boot host_path:/var/lib host_path:/run
  host_path:/sys/fs/cgroup "dotdot:$MARKER" "proc_root:$MARKER" proc_fds
  mountinfo mount_flags shocker chroot mount
)
ro_cases=(
  ro_file:/workspace/inputs/bundle/SKILL.md ro_file:/workspace/inputs/bundle/attacker
  ro_file:/workspace/inputs/bundle/scripts/run.sh ro_dir:/workspace/inputs/bundle
  ro_dir:/workspace/inputs/bundle/scripts ro_file:/workspace/inputs/in.txt
  ro_dir:/workspace/inputs ro_file:/workspace/metadata.json ro_dir:/workspace
  ro_dir:/usr/bin ro_file:/usr/bin/env ro_dir:/usr/lib ro_dir:/ ro_file:/etc/passwd
  ro_dir:/etc ro_dir:/dev proc_exe
)
proc_dev_cases=(
  nowrite:/proc/sysrq-trigger nowrite:/proc/sys/kernel/core_pattern
  nowrite:/proc/sys/kernel/modprobe nowrite:/proc/sys/fs/binfmt_misc/register
  nowrite:/proc/sys/vm/drop_caches nowrite:/proc/sys/kernel/hostname
  nowrite:/sys/kernel/uevent_helper nowrite:/sys/fs/cgroup/release_agent
  nowrite:/proc/pressure/cpu nowrite:/proc/pressure/memory nowrite:/proc/pressure/io
  nowrite:/proc/1/mem oom_adj
  noread:/proc/kcore noread:/proc/kallsyms noread:/proc/kmsg noread:/proc/timer_list
  noread:/proc/keys noread:/proc/interrupts noread:/proc/1/environ noread:/proc/1/mem noread:/proc/1/maps
  noread:/proc/1/stack noread:/proc/1/syscall
  masked_dir:/proc/acpi masked_dir:/proc/driver masked_dir:/proc/scsi
  masked_dir:/proc/asound
  nodev:/dev/mem nodev:/dev/kmem nodev:/dev/port nodev:/dev/sda nodev:/dev/vda
  nodev:/dev/nvme0n1 nodev:/dev/kmsg nodev:/dev/console nodev:/dev/tty0
  nodev:/dev/tty1 nodev:/dev/net/tun nodev:/dev/fuse nodev:/dev/kvm
  nodev:/dev/mapper/control nodev:/dev/loop-control nodev:/dev/cpu/0/msr
  nodev:/dev/pts/0 mknod devpts plant
)

for mode in $MODES; do
  attack $mode -i "$T/in.txt" -- "${reach_cases[@]}" "${ro_cases[@]}" "${proc_dev_cases[@]}"
  run_ok $mode "filesystem attacks"
  blocked $mode "${reach_cases[@]}" "${ro_cases[@]}" "${proc_dev_cases[@]}"
  host_unchanged $mode
  is "$mode: the source bundle is unchanged" "$("$SKILLRUN" --digest "$B" 2>&1)" "$bundle_digest_before"
  is "$mode: the input file is unchanged" "$(stat -c '%s %Y %i' "$T/in.txt")" "$in_before"
  is "$mode: the host /etc/passwd is unchanged" "$(stat -c '%s %Y' /etc/passwd)" "$passwd_before"
done
finish
