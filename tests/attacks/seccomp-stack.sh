#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, hiding refused calls: skillrun's seccomp filter
# hands its refusals to the supervisor (SECCOMP_RET_USER_NOTIF), which
# reports them (syscall_denied).  A filter the skill stacks on top answers
# first: the kernel takes an errno over a notification, and the newest
# filter's answer among equals, so a skill that installed one could try
# bpf, io_uring and the rest of the refused calls with nothing reported.
# seccomp(2) was refused but prctl(PR_SET_SECCOMP) was allowed with every
# other prctl: a run that did so reported syscalls_denied 0.  Now both are
# refused and reported, and so is every call after them.  As root and as
# an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# denied AUDIT NAME: how many times the audit says NAME was refused.
denied() {
  "$JQ" -r --arg n "$2" 'select(.event == "syscall_denied" and .syscall == $n) | .count' "$1" |
    head -n 1
}

for mode in $MODES; do
  attack "$mode" -- seccomp_stack
  run_ok "$mode" "seccomp_stack"
  blocked "$mode" seccomp_stack
  reports=$(field "$AUDIT" policy_resolved .seccomp.denials_reported)
  if [ "$reports" != true ]; then
    pass "# SKIP $mode: refused calls are not reported on this kernel (denials_reported $reports)"
    continue
  fi
  is "$mode: prctl(PR_SET_SECCOMP) is reported, both spellings (syscall_denied prctl)" \
    "$(denied "$AUDIT" prctl)" 2
  is "$mode: ... seccomp(2) too" "$(denied "$AUDIT" seccomp)" 1
  is "$mode: ... and the bpf tried after them is not hidden" "$(denied "$AUDIT" bpf)" 1
done
host_unchanged "seccomp_stack"
finish
