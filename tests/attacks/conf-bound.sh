#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, what skillrun.conf bounds beyond limits and the
# network.  An administrator's skillrun.conf could cap limits, the network
# and tiers, but not the keys only a profile had: a caller's profile added
# any system call outside the hard-denied groups (seccomp-allow), and no
# line of root's file could stop it.  Now skillrun.conf's
# `seccomp-allow NAME...|none` is the set a profile's seccomp-allow stays
# within: a name outside is dropped with a warning naming the profile's
# line, and the filter is built without it.  Without such a line a
# profile's list is not bounded (the control).
# Likewise a profile's `cgroup off` left the run's memory, CPU and
# processes to the supervisor's sampling, which a hostile skill can hide
# memory from, whatever the administrator wanted: skillrun.conf's `cgroup`
# is now the weakest mode a profile may choose, a weaker one raised to it
# with a warning (under require the run has a cgroup or is refused).
# And a profile's bind-ro and etc-file exposed any host path and any /etc
# file (but the few secrets skillrun names) to the skill: skillrun.conf's
# `bind-ro PATH...|none` and `etc-file NAME...|none` now bound them by path
# components (/usr/share admits /usr/share/zoneinfo, not /usr/sharex), one
# outside dropped with a warning and never seen by the skill.  Likewise
# `env-keep NAME...|none` for the caller's variables a profile keeps.
# The bind-ro bound was checked on the path as the profile wrote it, but
# the bind follows symbolic links: a link below a permitted directory
# (share/out -> ../sharex) bound what it pointed to, outside the bound.
# Now the descriptor that is bound is checked where it resolves, against
# the permitted paths resolved the same way: such a run is refused (125,
# layer_failed naming both paths), a link that stays inside still works.
# Likewise a link to the host's /proc or / (which a profile may not bind
# as written) bound it, bound or not: refused the same way.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
sandbox_possible || skip_all "user namespaces are not available"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to write a skillrun.conf of root's"

T=$(tmpdir)
conf() { # conf NAME LINES...: a root-owned 0644 file in $T; its path
  printf '%s\n' "${@:2}" >"$T/$1"
  chmod 644 "$T/$1"
  echo "$T/$1"
}
C_OPEN=$(conf open.conf "memory 1G")
C_SC_NONE=$(conf sc-none.conf "seccomp-allow none")
C_SC_SOME=$(conf sc-some.conf "seccomp-allow vhangup")
P_SC=$(conf sc.profile "include default" "seccomp-allow sethostname vhangup")
C_CG_REQ=$(conf cg-require.conf "cgroup require")
C_CG_PREFER=$(conf cg-prefer.conf "cgroup prefer")
P_CG=$(conf cg.profile "include default" "cgroup off")
# A host directory of root's a profile binds, next to one the conf
# permits whose name it extends; and an /etc file it copies.
mkdir -p "$T/share" "$T/sharex"
echo "host secret $$" >"$T/sharex/secret"
C_ENV=$(conf env.conf "env-keep LANG")
P_ENV=$(conf env.profile "include default" "env-keep LANG SR_BOUND_SECRET")
C_PATHS=$(conf paths.conf "bind-ro $T/share" "etc-file localtime")
P_PATHS=$(conf paths.profile "include default" "bind-ro $T/sharex /secret" "etc-file timezone")
# Links below the permitted directory: out of it (to sharex), into it
# (to its own subdirectory), and one to the host's /proc.
mkdir -p "$T/share/in"
echo "inside $$" >"$T/share/in/file"
ln -s ../sharex "$T/share/out"
ln -s in "$T/share/inlink"
ln -s /proc "$T/proclink"
P_LINK_OUT=$(conf link-out.profile "include default" "bind-ro $T/share/out /secret")
P_LINK_IN=$(conf link-in.profile "include default" "bind-ro $T/share/inlink /inside")
P_PROC=$(conf proc.profile "include default" "bind-ro $T/proclink /hostproc")
# A certificate in /etc/ssl/certs that is a link out of /etc, if any.
CERT_LINK=
for f in /etc/ssl/certs/*.pem; do
  [ -L "$f" ] || continue
  case $(readlink -f "$f") in /etc/*) continue ;; esac
  head -1 "$f" 2>/dev/null | grep -qx -- "-----BEGIN CERTIFICATE-----" || continue
  CERT_LINK=$f
  break
done
C_CERTS=$(conf certs.conf "etc-file ssl/certs localtime")
P_CERTS=$(conf certs.profile "include default" "etc-file ${CERT_LINK#/etc/}")
C_SHARE=$(conf share.conf "bind-ro $T/share")
B=$T/bound-skill
mkbundle "$B"
chmod -R a+rX "$T"
WS_root=$(tmpdir)
WS_user=$(user_workspace)

n=0
# try MODE CONF PROFILE [COMMAND...]: one run (default /bin/true); sets
# $rc, $AUDIT, $OUT (the skill's stdout) and $W (the warning events' messages).
try() {
  local mode=$1 c=$2 prof=$3 w pre=(env)
  shift 3
  [ $# -gt 0 ] || set -- /bin/true
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=("${AS_USER[@]}"); else w=$WS_root; fi
  AUDIT=$w/b$n.audit
  timeout 60 "${pre[@]}" "$SKILLRUN" --conf "$c" -p "$prof" --workspace-root "$w" \
    --execution-id "b$n" --audit-file "$AUDIT" "$B" -- "$@" >/dev/null 2>"$w/b$n.err"
  rc=$?
  OUT=$(cat "$w/default/b$n/logs/stdout.log" 2>/dev/null)
  W=$("$JQ" -r 'select(.event == "warning") | .message' "$AUDIT" 2>/dev/null)
}
sc_allow() { field "$AUDIT" policy_resolved '.policy.seccomp.allow | join(" ")'; }

skip_modes
for mode in $MODES; do
  try "$mode" "$C_SC_NONE" "$P_SC"
  is "$mode: conf seccomp-allow none: the run completes" "$rc" 0
  is "$mode: ... the profile adds no system call" "$(sc_allow)" ""
  is "$mode: ... the filter is the default one" \
    "$(field "$AUDIT" policy_resolved .seccomp.policy)" default-allowlist
  check "$mode: ... a warning names the profile's line" \
    grep -qx "profile $P_SC:2: seccomp-allow sethostname is not permitted by skillrun.conf; dropped" <<<"$W"
  try "$mode" "$C_SC_SOME" "$P_SC"
  is "$mode: conf seccomp-allow vhangup: only vhangup is added" "$rc:$(sc_allow)" 0:vhangup
  check "$mode: ... sethostname is dropped with a warning" \
    grep -q "seccomp-allow sethostname is not permitted by skillrun.conf; dropped" <<<"$W"
  try "$mode" "$C_OPEN" "$P_SC"
  is "$mode: control: a conf without seccomp-allow bounds nothing" \
    "$rc:$(sc_allow)" "0:sethostname vhangup"

  try "$mode" "$C_CG_REQ" "$P_CG"
  check "$mode: conf cgroup require: the profile's cgroup off is raised, with a warning naming its line" \
    grep -qx "profile $P_CG:2: cgroup off is weaker than skillrun.conf's cgroup require; cgroup stays require" <<<"$W"
  if [ "$rc" = 0 ]; then
    is "$mode: ... the run's mode is require" "$(field "$AUDIT" policy_resolved .policy.cgroup)" require
    by=$(field "$AUDIT" policy_resolved .policy.limits.memory.enforced_by)
    check "$mode: ... memory is held by a cgroup, not sampled ($by)" grep -qx 'cgroup[12]' <<<"$by"
  else
    is "$mode: ... no usable cgroup here: refused by cgroup require (125), not sampled" \
      "$rc:$(field "$AUDIT" layer_failed '.message | startswith("cgroup require:")')" 125:true
  fi
  try "$mode" "$C_CG_REQ" default
  check "$mode: conf cgroup require, the default profile: no warning about its cgroup" \
    not grep -q "cgroup" <<<"$W"
  if [ "$rc" = 0 ]; then
    is "$mode: ... its mode is the conf's require" "$(field "$AUDIT" policy_resolved .policy.cgroup)" require
  else
    is "$mode: ... no usable cgroup here: refused by the conf's require (125)" \
      "$rc:$(field "$AUDIT" layer_failed '.message | startswith("cgroup require:")')" 125:true
  fi
  try "$mode" "$C_CG_PREFER" "$P_CG"
  is "$mode: conf cgroup prefer: the profile's off becomes prefer" \
    "$rc:$(field "$AUDIT" policy_resolved .policy.cgroup)" 0:prefer
  try "$mode" "$C_OPEN" "$P_CG"
  is "$mode: control: a conf without cgroup leaves the profile's off" \
    "$rc:$(field "$AUDIT" policy_resolved .policy.cgroup)" 0:off


  export SR_BOUND_SECRET="caller secret $$"
  try "$mode" "$C_ENV" "$P_ENV" /usr/bin/env
  is "$mode: conf env-keep LANG: the run completes" "$rc" 0
  check "$mode: ... the skill does not get the variable outside it" not grep -q "^SR_BOUND_SECRET=" <<<"$OUT"
  check "$mode: ... a warning names the profile's env-keep" \
    grep -qx "profile $P_ENV:2: env-keep SR_BOUND_SECRET is not permitted by skillrun.conf; dropped" <<<"$W"
  try "$mode" "$C_OPEN" "$P_ENV" /usr/bin/env
  check "$mode: control: without the line the profile keeps it" grep -qx "SR_BOUND_SECRET=caller secret $$" <<<"$OUT"
  unset SR_BOUND_SECRET

  try "$mode" "$C_SHARE" "$P_LINK_OUT" /bin/sh -c 'cat /secret/secret; true'
  is "$mode: conf bind-ro: a link below the permitted path leading out of it: refused" "$rc" 125
  check "$mode: ... the skill does not see what it points to" not grep -q "host secret" <<<"$OUT"
  is "$mode: ... layer_failed names where it resolves" \
    "$(field "$AUDIT" layer_failed .message)" \
    "bind-ro $T/share/out resolves to $T/sharex, outside skillrun.conf's bind-ro: Operation not permitted"
  is "$mode: ... the run ends with execution_completed" \
    "$(field "$AUDIT" execution_completed .exit_code)" 125
  try "$mode" "$C_SHARE" "$P_LINK_IN" /bin/cat /inside/file
  is "$mode: control: a link that stays inside the permitted path is bound" "$rc:$OUT" "0:inside $$"
  try "$mode" "$C_OPEN" "$P_PROC" /bin/sh -c 'ls /hostproc; true'
  is "$mode: a link to the host's /proc, no bound: refused" "$rc" 125
  is "$mode: ... layer_failed says why" "$(field "$AUDIT" layer_failed .message)" \
    "bind-ro $T/proclink resolves to /proc, which may not be bound into the sandbox: Operation not permitted"
  check "$mode: ... the skill lists no host process" not grep -qx 1 <<<"$OUT"

  # An /etc name is checked as written: /etc's links are root's, and the
  # CA certificates' lead out of /etc by design (Debian's into
  # /usr/share/ca-certificates, Fedora's into /etc/pki).
  if [ -n "$CERT_LINK" ]; then
    try "$mode" "$C_CERTS" "$P_CERTS" /bin/sh -c "head -1 $CERT_LINK"
    is "$mode: conf etc-file ssl/certs admits a certificate whose link leaves /etc" \
      "$rc:$OUT" "0:-----BEGIN CERTIFICATE-----"
  else
    pass "# SKIP $mode: no certificate in /etc/ssl/certs links out of /etc on this host"
  fi

  if [ -r /etc/timezone ] && [ -s /etc/timezone ]; then
    try "$mode" "$C_PATHS" "$P_PATHS" /bin/sh -c 'cat /secret/secret /etc/timezone; true'
    is "$mode: conf bind-ro and etc-file: the run completes" "$rc" 0
    check "$mode: ... the skill does not see the host path outside them" not grep -q "host secret" <<<"$OUT"
    check "$mode: ... a warning names the profile's bind-ro" \
      grep -qx "profile $P_PATHS:2: bind-ro $T/sharex is not permitted by skillrun.conf; dropped" <<<"$W"
    check "$mode: ... nor gets /etc/timezone" not grep -qxF "$(cat /etc/timezone)" <<<"$OUT"
    check "$mode: ... a warning names the profile's etc-file" \
      grep -qx "profile $P_PATHS:3: etc-file /etc/timezone is not permitted by skillrun.conf; dropped" <<<"$W"
    try "$mode" "$C_OPEN" "$P_PATHS" /bin/sh -c 'cat /secret/secret /etc/timezone; true'
    check "$mode: control: without the lines the profile's bind is seen" grep -q "host secret" <<<"$OUT"
    check "$mode: ... and its /etc file" grep -qxF "$(cat /etc/timezone)" <<<"$OUT"
  else
    pass "# SKIP $mode: bind-ro and etc-file bounds: this host has no /etc/timezone to copy"
  fi
done
finish
