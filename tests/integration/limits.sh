#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Limits on a host without a usable cgroup v2 memory controller (the
# development and CI machines: hybrid layout).  `cgroup prefer` falls back to
# rlimits and says so; `cgroup require` refuses; the fallbacks really stop a
# memory hog and a CPU burner; logs are capped.  The cgroup v2 side is the
# VM tier's (make check-vm).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  skip_all "this host has a cgroup v2 memory controller: the fallback is not used here (the VM tier covers cgroup v2)"
fi
skip_modes

T=$(tmpdir)
B=$T/limits-skill
mkbundle "$B"
chmod -R a+rX "$T"
printf 'include default\ncgroup require\n' >"$T/require.profile"
chmod 644 "$T/require.profile"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  n=0
  r() { n=$((n + 1)); "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "l$n" --audit-file "$W/a.$n" "$B" "$@" 2>"$W/err.$n"; }

  r --memory 64M -- /usr/bin/python3 -c 'b = bytearray(256 * 1024 * 1024); print("allocated", len(b))'
  rc=$?
  check "$mode: a 256 MiB allocation under --memory 64M fails (exit $rc)" [ "$rc" -ne 0 ]
  check "$mode: ... it never got the memory" not grep -q 'allocated 268435456' "$W/default/l$n/logs/stdout.log"
  is "$mode: prefer reports memory enforced_by rlimit" \
    "$(field "$W/a.$n" policy_resolved '.policy.limits.memory.enforced_by')" rlimit
  is "$mode: ... and cpu-seconds enforced_by rlimit" \
    "$(field "$W/a.$n" policy_resolved '.policy.limits["cpu-seconds"].enforced_by')" rlimit
  check "$mode: ... with a warning saying so" grep -q "RLIMIT_AS" <(field "$W/a.$n" warning .message)

  r --cpu-seconds 1 -- /bin/sh -c 'while :; do :; done'
  is "$mode: a CPU burner is stopped at --cpu-seconds 1 with 137" "$?" 137
  is "$mode: ... status cpu_exceeded" "$(field "$W/a.$n" execution_completed .status)" cpu_exceeded
  is "$mode: ... limit_exceeded cpu" "$(field "$W/a.$n" limit_exceeded .limit)" cpu

  r -p "$T/require.profile" -- /bin/true
  is "$mode: cgroup require without cgroup v2 exits 125" "$?" 125
  is "$mode: ... layer_failed names the cgroup layer" "$(field "$W/a.$n" layer_failed .layer)" cgroup
  check "$mode: ... and nothing ran" [ ! -s "$W/default/l$n/logs/stdout.log" ]

  r --log-cap 1K -- /bin/sh -c 'i=0; while [ $i -lt 2000 ]; do echo "line $i of output"; i=$((i+1)); done; echo done >&2'
  is "$mode: a chatty skill still exits 0" "$?" 0
  kept=$(field "$W/a.$n" execution_completed '.logs.stdout.kept + .logs.stderr.kept')
  is "$mode: exactly the 1 KiB cap is kept" "$kept" 1024
  check "$mode: the rest is counted as dropped" [ "$(field "$W/a.$n" execution_completed .logs.stdout.dropped)" -gt 30000 ]
  is "$mode: log_truncated emitted" "$(field "$W/a.$n" log_truncated .stream)" stdout
  check "$mode: the truncation marker is in the log" grep -q "log cap of 1024 bytes reached" "$W/default/l$n/logs/stdout.log"

  check_run_audits "$mode" "$W" l
done
finish
