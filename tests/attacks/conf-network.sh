#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the network skillrun.conf bounds.  A host whose
# skillrun.conf names the destinations runs may reach (network-allow) and
# no mode let a profile permit the host network all the same (the
# built-in `network host`): a caller's profile saying `network host` and a
# skill asking for it (sandbox.network: host) shared the host's network
# namespace and reached anything, past the list, without a warning.  Now
# such a conf permits at most an allowlist run: the profile's and the
# skill's host are refused with warnings, the run's network is denied, and
# the sandbox sees only its own lo.  A conf that says `network host`
# itself keeps it (the control).  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
sandbox_possible || skip_all "user namespaces are not available"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to write a skillrun.conf of root's"

T=$(tmpdir)
printf 'network-allow api.example.test\n' >"$T/list.conf"
printf 'network host\nnetwork-allow api.example.test\n' >"$T/host.conf"
printf 'include default\nnetwork host\n' >"$T/host.profile"
B=$T/host-skill
mkbundle "$B"
printf -- '---\nname: host-skill\ndescription: Asks for the host network.\nmetadata:\n  sandbox.network: host\n---\n' >"$B/SKILL.md"
chmod 644 "$T"/*.conf "$T/host.profile"
chmod -R a+rX "$T"
WS_root=$(tmpdir)
WS_user=$(user_workspace)
# The host's interfaces other than lo: a sandbox with its own network
# namespace sees none of them.
HOST_IFS=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); if ($1 != "lo") print $1 }' /proc/net/dev | sort | tr '\n' ' ')
[ -n "$HOST_IFS" ] || skip_all "this host has no network interface but lo to tell its namespace by"

n=0
# try MODE CONF: the skill lists the interfaces it sees; sets $rc, $AUDIT,
# $SEEN (the interfaces but lo) and $MODE_SEEN (policy.network.mode).
try() {
  local mode=$1 w pre=(env)
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=("${AS_USER[@]}"); else w=$WS_root; fi
  AUDIT=$w/n$n.audit
  timeout 60 "${pre[@]}" "$SKILLRUN" --conf "$2" -p "$T/host.profile" --workspace-root "$w" \
    --execution-id "n$n" --audit-file "$AUDIT" "$B" -- /bin/cat /proc/net/dev >/dev/null 2>"$w/n$n.err"
  rc=$?
  SEEN=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); if ($1 != "lo") print $1 }' "$w/default/n$n/logs/stdout.log" 2>/dev/null | sort | tr '\n' ' ')
  MODE_SEEN=$(field "$AUDIT" policy_resolved .policy.network.mode)
}

skip_modes
for mode in $MODES; do
  try "$mode" "$T/list.conf"
  is "$mode: a conf with network-allow and no mode: the run completes" "$rc" 0
  is "$mode: ... its network is denied, not host" "$MODE_SEEN" deny
  is "$mode: ... the sandbox sees none of the host's interfaces" "$SEEN" ""
  check "$mode: ... the profile's host is refused with a warning that names the conf's network-allow" \
    grep -q 'network host is forbidden by skillrun.conf (network-allow without network host); network stays allowlist' "$AUDIT"
  check "$mode: ... and the skill's too" \
    grep -q 'sandbox.network host is not permitted by the profile or skillrun.conf' "$AUDIT"
  try "$mode" "$T/host.conf"
  is "$mode: control: a conf that says network host keeps it" "$rc:$MODE_SEEN" 0:host
  is "$mode: ... and the sandbox sees the host's interfaces" "$SEEN" "$HOST_IFS"
done
finish
