#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The systemd user manager's delegated scope (skillrun(1) LIMITS) where
# there is none to have: policy_resolved's systemd_scope says why the
# manager was not asked (root uses the hierarchy itself; `cgroup off`; a
# cgroup v2 without the memory controller, as on this hybrid host class),
# or, on a cgroup v2 host whose manager does not answer, why asking
# failed; the run falls back as before (`cgroup prefer`, the default: it
# runs, the warning says why) and `cgroup require` fails closed (125,
# layer cgroup) when no kernel cgroup is left.  The scope itself is the VM
# tier's (tests/vm/systemd-tests.sh); the protocol is test-cgroup-systemd's.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/scope-skill
mkbundle "$B"
chmod -R a+rX "$T"
printf 'include default\ncgroup require\n' >"$T/require.profile"
printf 'include default\ncgroup off\n' >"$T/off.profile"
chmod 644 "$T/require.profile" "$T/off.profile"
# No user manager answers here, whoever runs the test: an empty runtime
# directory and no session bus.
RT=$(tmpdir)
chmod 755 "$RT"

# What the cgroup v2 hierarchy offers: the manager is asked only where it
# has memory and pids (else a scope could not hold the limits).
v2=/sys/fs/cgroup
[ "$(stat -f -c %T $v2 2>/dev/null)" = cgroup2fs ] || v2=/sys/fs/cgroup/unified
v2_usable=no
if [ "$(stat -f -c %T $v2 2>/dev/null)" = cgroup2fs ] &&
  grep -qw memory $v2/cgroup.controllers && grep -qw pids $v2/cgroup.controllers; then
  v2_usable=yes
fi
diag "cgroup v2 at $v2 with memory and pids: $v2_usable"

for mode in $MODES; do
  W=$(mode_workspace "$mode")
  n=0
  r() {
    n=$((n + 1))
    in_mode "$mode" env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR="$RT" \
      "$SKILLRUN" --workspace-root "$W" --execution-id "s$n" \
      --audit-file "$W/a.$n" "$@" 2>"$W/err.$n"
  }

  r "$B" -- /bin/true
  is "$mode: cgroup prefer (the default) runs" "$?" 0
  is "$mode: ... policy_resolved has no scope unit" \
    "$(field "$W/a.$n" policy_resolved .systemd_scope.unit)" null
  is "$mode: ... nor a scope path" \
    "$(field "$W/a.$n" policy_resolved .systemd_scope.path)" null
  why=$(field "$W/a.$n" policy_resolved .systemd_scope.reason)
  diag "$mode: systemd_scope.reason: $why"
  if [ "$mode" = root ]; then
    is "$mode: ... root never asks the manager" "$why" \
      "not asked: root uses the hierarchy's skillrun subtree itself"
  elif [ $v2_usable = no ]; then
    check "$mode: ... not asked, and why: no memory controller in cgroup v2" \
      grep -q "^not asked: cgroup v2 has no memory controller at $v2" <<<"$why"
  elif grep -q '^not asked: the caller' <<<"$why"; then
    pass "$mode: ... not asked: this caller's cgroup v2 is delegated already"
  else
    check "$mode: ... the manager was asked, and the reason says none answered" \
      grep -q "no systemd user manager reachable ($RT/systemd/private: " <<<"$why"
    check "$mode: ... the fallback's warning carries the reason" \
      grep -q "no systemd scope: no systemd user manager reachable" \
      <(field "$W/a.$n" warning .reason)
  fi
  enf=$(field "$W/a.$n" policy_resolved '.policy.limits.memory.enforced_by')
  diag "$mode: memory enforced_by $enf"
  if [ "$enf" = supervisor ]; then
    check "$mode: ... the fallback is named in a warning with its reason" \
      test -n "$(field "$W/a.$n" warning .reason)"
  fi

  r -p "$T/off.profile" "$B" -- /bin/true
  is "$mode: cgroup off runs" "$?" 0
  is "$mode: ... and says it did not ask" \
    "$(field "$W/a.$n" policy_resolved .systemd_scope.reason)" \
    "not asked: cgroup off in the policy"

  r -p "$T/require.profile" "$B" -- /bin/true
  rc=$?
  if [ "$enf" = supervisor ]; then
    is "$mode: cgroup require without a kernel cgroup exits 125" "$rc" 125
    is "$mode: ... layer_failed names the cgroup layer" \
      "$(field "$W/a.$n" layer_failed .layer)" cgroup
    is "$mode: ... the run ends in error" \
      "$(field "$W/a.$n" execution_completed .status)" error
  else
    is "$mode: cgroup require is met by $enf" "$rc" 0
  fi

  check_run_audits "$mode" "$W" s
done
finish
