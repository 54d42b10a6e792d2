#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, privilege classes: capability and uid regain
# (setuid-root and file-capability binaries in the bundle, setuid(0),
# capset), namespace creation and joining, kernel attack surface, KSM
# (pages offered for merging: a side channel where the host runs it), terminal
# injection, line disciplines (TIOCSETD on a pty of the skill's own: every
# discipline the kernel has, and the autoload of its module), signals and
# ptrace against a host process, fd, environment and signal-state leaks.
# As root and as an unprivileged user; every case must be BLOCKED
# (tests/attacks/attacker.c names the CVE of each).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# Bait in the bundle: a setuid-root copy and a file-capability copy of the
# attacker; both must lose their power in the staged copy.  Not root, the
# tests can only make the copy setuid to themselves (the bit must still
# go), and no file capabilities (setcap needs CAP_SETFCAP).
cp "$ATTACKER" "$B/suid-attacker"
[ "$(id -u)" -ne 0 ] || chown 0:0 "$B/suid-attacker"
chmod 6755 "$B/suid-attacker"
fcap=0
if ! needs_root "the file-capability bait"; then
  :
elif ! command -v setcap >/dev/null; then
  pass "# SKIP the file-capability bait: setcap (libcap2-bin) is not installed"
else
  cp "$ATTACKER" "$B/fcap-attacker"
  chmod 755 "$B/fcap-attacker"
  setcap cap_setuid,cap_sys_admin,cap_dac_override+ep "$B/fcap-attacker" || fail "setcap on the bait"
  check "the bait really has file capabilities on the host" \
    sh -c "getcap '$B/fcap-attacker' | grep -q cap_setuid"
  fcap=1
fi
# The same as an input file.
cp "$ATTACKER" "$T/suid-input"
chmod 6755 "$T/suid-input"
check "the bait is really setuid on the host" [ -u "$B/suid-attacker" ]

# A host process to signal and ptrace (killed on exit, else leaks.sh
# reports it: it carries the test's root in its environment).
sleep 98790 &
HOST_PID=$!
trap 'kill $HOST_PID 2>/dev/null; wait $HOST_PID 2>/dev/null; cleanup' EXIT

SECRET=skillrun-secret-$$-$RANDOM
env_names=SECRET_TOKEN,LD_PRELOAD,LD_LIBRARY_PATH,SSH_AUTH_SOCK,BASH_ENV,PYTHONPATH,GITHUB_TOKEN

cases=(
  signals setuid capset usr_nosuid
  suid_exec:/workspace/inputs/bundle/suid-attacker
  suid_exec:/workspace/inputs/suid-input
  ns_create ns_join kernel ksm "host_pid:$HOST_PID" tiocsti ldisc fds
  "env:$env_names,=$(printf %s "$SECRET" | rev)"
)
[ $fcap = 0 ] || cases+=(fcap_exec:/workspace/inputs/bundle/fcap-attacker)

for mode in $MODES; do
  # Bait in the caller's environment and fds: a secret, loader injection,
  # an agent socket; fds 5-9 open on host files and directories.
  # LD_PRELOAD names a library that does not exist: the loader only warns.
  # ... and in its signal state: signals ignored (glibc's own 32 and 33
  # among them on x86-64) and blocked, which execve(2) keeps.
  CALLER=("$PYTHON3" "$TOP_SRCDIR/tests/attacks/ignore-signals.py")
  SECRET_TOKEN=$SECRET GITHUB_TOKEN=$SECRET LD_PRELOAD=/nonexistent/attack.so \
    LD_LIBRARY_PATH=$T SSH_AUTH_SOCK=$T/agent.sock BASH_ENV=$T/evil.sh PYTHONPATH=$T \
    attack $mode -i "$T/suid-input" -- "${cases[@]}" \
    5<"$MARKER" 6<"$T" 7>>"$T/leak" 8</etc/passwd 9<>"$T/leak2"
  # shellcheck disable=SC2034 # read by skill() in common.sh
  CALLER=()
  run_ok $mode "privilege attacks"
  blocked $mode "${cases[@]}"
  is "$mode: the skill's own terminal still works (isatty, window size)" \
    "$(result ldisc | grep -o 'isatty=1\|TIOCGWINSZ=ok' | tr '\n' ' ')" "isatty=1 TIOCGWINSZ=ok "
  check "$mode: the host process survived signals and kill(-1)" kill -0 $HOST_PID
  check "$mode: ... and is not traced" \
    sh -c "grep -q '^TracerPid:[[:space:]]*0$' /proc/$HOST_PID/status"
  host_unchanged $mode
  check "$mode: nothing was written through the leaked fds" \
    sh -c "[ ! -s '$T/leak' ] && [ ! -s '$T/leak2' ]"
  if grep -q "$SECRET" "$AUDIT" "$OUT"; then
    fail "$mode: the secret appears nowhere in the audit or the logs"
  else pass "$mode: the secret appears nowhere in the audit or the logs"; fi

  # Escape sequences the skill prints (terminal title, clipboard, clear
  # screen) stay in its log; none reaches skillrun's own stdout or stderr,
  # the caller's terminal, nor the audit stream raw.
  attack $mode -- ansi
  blocked $mode ansi
  check "$mode: the skill's escape sequences are in its log" grep -q $'\033' "$OUT"
  check "$mode: ... and not on skillrun's stdout, stderr or audit" \
    sh -c "! grep -q -l \"\$(printf '\\033')\" '$STDOUT' '$ERR' '$AUDIT'"

  # Terminal injection with a real terminal: skillrun runs under script(1)
  # so the caller has a controlling tty the skill could try to reach.
  if command -v script >/dev/null; then
    n_before=$_run_n
    _run_n=$((_run_n + 1))
    if [ $mode = user ]; then w=$WS_user; pre="${AS_USER[*]}"; else
      w=$WS_root; pre=""; fi
    RUN_ID=a$_run_n
    OUT=$w/default/$RUN_ID/logs/stdout.log
    script -qec "$pre $SKILLRUN --workspace-root $w --execution-id $RUN_ID --audit-file $w/$RUN_ID.audit $B -- /workspace/inputs/bundle/attacker tiocsti fds" \
      "$T/typescript.$mode" </dev/null >/dev/null 2>&1
    rc=$?
    [ -f "$OUT" ] || OUT=/dev/null
    is "$mode: under a terminal, skillrun exits 0" "$rc" 0
    blocked "$mode (tty)" tiocsti fds
    : "$n_before"
  fi
done
finish
