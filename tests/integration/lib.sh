# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the shell TAP tests.  Source it; then call `plan N`,
# `ok COND-EXIT-STATUS TEXT` style helpers below, and `finish` at the end.
# shellcheck shell=bash

set -u
: "${SKILLRUN:?SKILLRUN must name the built binary (make check sets it)}"
: "${TOP_SRCDIR:?}"
JQ=${JQ:-jq}
PYTHON3=${PYTHON3:-python3}
NOBODY=${SKILLRUN_TEST_USER:-65534}

_tap_n=0
_tap_failed=0

# The suite's directory: every test's data lives below it, so that
# leaks.sh can tell what this run of the suite made (tests/suite-dir.sh
# says where and why; `make check` names it in SKILLRUN_SUITE_DIR).  Run
# by hand, a test makes a private one.  It must be ours and writable by us
# alone: root runs skills from it.
_suite_private=0
if [ -n "${SKILLRUN_SUITE_DIR:-}" ]; then
  _suite=$SKILLRUN_SUITE_DIR
  if [ ! -d "$_suite" ] || [ -L "$_suite" ] ||
    [ "$(stat -c %u "$_suite")" != "$(id -u)" ] ||
    [ $(($(stat -c %#a "$_suite") & 022)) -ne 0 ]; then
    echo "Bail out! SKILLRUN_SUITE_DIR=$_suite is not a directory of uid $(id -u) that only it can write"
    exit 99
  fi
else
  _suite=$(mktemp -d "${SKILLRUN_TEST_TMPDIR:-/tmp}/skillrun-check.XXXXXX") || exit 99
  chmod 755 "$_suite"
  _suite_private=1
fi
# Resolved, as skillrun resolves a workspace root (its tmpfs staging is
# named after the resolved path: leaks.sh needs the same bytes).
_suite=$(cd -P "$_suite" && pwd) || exit 99
SUITE=$_suite
# One root per test script, made here and not in a $(...) subshell, so the
# EXIT trap knows it; tmpdir hands out directories below it.
_test_root=$(mktemp -d "$_suite/$(basename "$0" .sh).XXXXXX") || exit 99
chmod 755 "$_test_root"
# Every process the test starts carries its root in its environment (a
# skill's clean environment does not, but its sandbox's init and
# supervisor do): test_pids and leaks.sh find the test's processes by it,
# and not those of a concurrent suite or of someone else's runs.
export SKILLRUN_TEST_ROOT=$_test_root
# The binary and the profiles, copied below it: as root the tests also run
# skillrun as uid $NOBODY, which may not reach the build tree (under a 0700
# directory, say).
mkdir -m 755 "$_test_root/bin" && cp "$SKILLRUN" "$_test_root/bin/skillrun" || exit 99
SKILLRUN=$_test_root/bin/skillrun
if [ -d "${SKILLRUN_PROFILE_PATH:-}" ]; then
  cp -r "$SKILLRUN_PROFILE_PATH" "$_test_root/profiles" && chmod -R a+rX "$_test_root/profiles" || exit 99
  export SKILLRUN_PROFILE_PATH=$_test_root/profiles
fi

# _ledger_runs DIR SUITE: appends to SUITE's ledger every workspace root
# below DIR (a directory with a .active) with the 16 hex digits its tmpfs
# staging names start with, and each of its runs (tenant, execution id):
# leaks.sh finds the suite's staging and cgroup leaves by them once the
# test data is gone.
_ledger_runs() {
  local w h t d
  find "$1" -type d -name .active -prune -printf '%h\n' 2>/dev/null |
    while IFS= read -r w; do
      h=$(printf '%s' "$w" | sha256sum | cut -c1-16)
      echo "root $h $w"
      for t in "$w"/*/*/; do
        [ -d "$t" ] || continue
        t=${t%/}
        d=${t%/*}
        echo "run ${d##*/} ${t##*/}"
      done
    done >>"$2/ledger"
}
# outside_tmpdir PARENT: a temp dir below PARENT, for data that cannot be
# below the suite's directory (on a tmpfs, say).  In the ledger, so that
# leaks.sh checks it is gone; removed when the test ends.
outside_tmpdir() {
  local d
  d=$(mktemp -d "$1/skillrun-test.XXXXXX") || return 1
  echo "dir $d $_test_root" >>"$_suite/ledger"
  echo "$d"
}
_remove_outside() {
  local kind d t
  [ -f "$_suite/ledger" ] || return 0
  while read -r kind d t; do
    [ "$kind" = dir ] && [ "$t" = "$_test_root" ] && rm -rf -- "$d"
  done <"$_suite/ledger"
  return 0
}

# _pid_root PID: sets _root to the SKILLRUN_TEST_ROOT PID started with, or
# that of its nearest ancestor that has one (a skill starts with a clean
# environment, but its parents, the sandbox's init and the supervisor, keep
# the caller's; a process left in a sandbox is reparented to that init).
# Empty when none (or when the environment cannot be read: not ours).  A
# process whose command line names a path below $_suite counts as the
# suite's even without the variable: _root is then "$_suite/?".  Builtins
# only: a scan of every process must not start processes of its own.
_pid_root() {
  local p=$1 v k ppid
  local -a words
  _root=
  while [ "$p" -gt 1 ] 2>/dev/null; do
    words=()
    mapfile -d "" -t words 2>/dev/null <"/proc/$p/environ"
    for v in "${words[@]}"; do
      case $v in SKILLRUN_TEST_ROOT=*) _root=${v#*=}; return 0 ;; esac
    done
    words=()
    mapfile -d "" -t words 2>/dev/null <"/proc/$p/cmdline"
    for v in "${words[@]}"; do
      case $v in *"$_suite/"*) _root="$_suite/?"; return 0 ;; esac
    done
    ppid=0
    while read -r k v; do
      [ "$k" = PPid: ] && { ppid=$v; break; }
    done 2>/dev/null <"/proc/$p/status"
    p=$ppid
  done
  return 0
}
# test_pids REGEX: the pids of this test's processes (and of the sandboxes
# they run) whose command line matches REGEX (pgrep -f), one per line.
# Another test's or another suite's processes with the same command line
# are not counted.
test_pids() {
  local p
  for p in $(pgrep -f "$1"); do
    _pid_root "$p"
    [ "$_root" = "$_test_root" ] && echo "$p"
  done
  return 0
}

# cpu_ms_until_exit PID: the CPU time (utime + stime, in ms) of process
# PID alone, not its children, from /proc/PID/stat, sampled every 50 ms
# until it is gone (bash reaps a background job as it ends).  After the
# last ')' (comm may hold spaces) the state is the 1st field, utime the
# 12th, stime the 13th.
cpu_ms_until_exit() {
  local s ticks=0
  while s=$(cat "/proc/$1/stat" 2>/dev/null); do
    s=${s##*) }
    ticks=$(awk '{ print $12 + $13 }' <<<"$s")
    sleep 0.05
  done
  echo $((ticks * 1000 / $(getconf CLK_TCK)))
}

# ended_promptly LABEL WALL_MS AUDIT STATUS: a run stopped from outside
# (a signal, a limit) ended within 15 s, its terminal record says STATUS,
# and its audit verifies.  Three TAP results.
ended_promptly() {
  check "$1: ... promptly ($2 ms)" test "$2" -lt 15000
  is "$1: ... its terminal record says $4" \
    "$(field "$3" execution_completed .status)" "$4"
  check "$1: ... the audit verifies" audit_ok "$3"
}

_tap_planned=0
plan() { echo "1..$1"; _tap_planned=1; }
pass() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() {
  _tap_n=$((_tap_n + 1))
  _tap_failed=$((_tap_failed + 1))
  echo "not ok $_tap_n - $*"
}
# check TEXT CMD...: passes when CMD succeeds.
check() {
  local text=$1
  shift
  if "$@"; then pass "$text"; else fail "$text"; fi
}
# is TEXT GOT WANT
is() {
  if [ "$2" = "$3" ]; then pass "$1"; else
    fail "$1"
    echo "#   got:  '$2'"
    echo "#   want: '$3'"
  fi
}
# not CMD...: succeeds when CMD fails (for check, which runs its words).
not() { ! "$@"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
diag() { echo "# $*"; }

# A private temp dir, world-traversable so that an unprivileged run and a
# root run's sandbox uid can reach bundles and workspaces below it.
tmpdir() {
  local d
  d=$(mktemp -d "$_test_root/d.XXXXXX")
  chmod 755 "$d"
  echo "$d"
}
# Processes a test starts in the background for its whole length
# (servers, a namespace's holder): cleanup kills them and waits for them
# before it removes the test's files.
bg_pids=()
# Only the test's own shell cleans up: a background subshell (a racing
# writer, a listener) that is killed must not remove the test's files.
_test_pid=$$
cleanup() {
  local p
  [ "${BASHPID:-$$}" = "$_test_pid" ] || return 0
  for p in ${bg_pids[@]+"${bg_pids[@]}"}; do kill -KILL "$p" 2>/dev/null; done
  for p in ${bg_pids[@]+"${bg_pids[@]}"}; do wait "$p" 2>/dev/null; done
  _ledger_runs "$_test_root" "$_suite"
  _remove_outside
  chmod -R u+rwX "$_test_root" 2>/dev/null
  rm -rf "$_test_root"
  if [ "$_suite_private" = 1 ]; then rm -f "$_suite/ledger" && rmdir "$_suite"; fi
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# mkbundle DIR [DESCRIPTION]: a minimal valid skill named after DIR.
mkbundle() {
  local dir=$1 name
  name=$(basename "$dir")
  mkdir -p "$dir"
  cat >"$dir/SKILL.md" <<EOS
---
name: $name
description: ${2:-A test skill.}
---
# $name
EOS
}

# Who the tests run skillrun as: $MODES.  As root, "root" and "user", the
# unprivileged test user $NOBODY (uid 65534 unless SKILLRUN_TEST_USER says
# otherwise) through setpriv(1), with no groups.  As anyone else, only
# "user": whoever runs the tests is the unprivileged user then, and what
# needs root is skipped, saying so.  $USER_UID is the user mode's uid;
# AS_USER the command prefix that runs something as it (a plain command,
# so that `"${AS_USER[@]}" skillrun ... &` leaves skillrun in $!).
_root_skip='' _user_skip=''
# Whether the test user can tell whether this build's skillrun.conf exists:
# a run stops when the file cannot be opened for any reason but its
# absence.  Only a build configured under a directory closed to that user
# fails this (make distcheck as root, in a tree under a 0700 directory).
_platform_conf_reachable() {
  local d
  _conf=$("$SKILLRUN" --help | sed -n 's/.*(default \(.*skillrun\.conf\)).*/\1/p')
  [ -n "$_conf" ] || return 0
  d=$_conf
  while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done
  if [ -d "$d" ]; then "${AS_USER[@]}" test -x "$d"; else "${AS_USER[@]}" test -r "$d"; fi
}
if [ "$(id -u)" -eq 0 ]; then
  MODES=root
  USER_UID=$NOBODY
  AS_USER=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)
  if ! command -v setpriv >/dev/null; then
    _user_skip="setpriv (util-linux) is not installed"
  elif ! "${AS_USER[@]}" true 2>/dev/null; then
    _user_skip="setpriv cannot switch to uid $NOBODY"
  elif ! _platform_conf_reachable; then
    _user_skip="uid $NOBODY cannot reach this build's $_conf (under a directory closed to it; skillrun stops rather than run without reading it)"
  else
    MODES="root user"
  fi
else
  MODES=user
  USER_UID=$(id -u)
  AS_USER=(env)
  _root_skip="needs root (the tests run as uid $USER_UID)"
fi
# The first mode, for parts that need one run whoever runs it.
ANY_MODE=${MODES%% *}
# as_user CMD...: run as the unprivileged test user.
as_user() { "${AS_USER[@]}" "$@"; }
# in_mode MODE CMD...: run as MODE's user.
in_mode() {
  if [ "$1" = user ]; then
    shift
    as_user "$@"
  else
    shift
    "$@"
  fi
}
# skip_modes: a TAP skip for each mode that cannot run here, saying why.
skip_modes() {
  [ -z "$_root_skip" ] || pass "# SKIP the runs as root: $_root_skip"
  [ -z "$_user_skip" ] || pass "# SKIP the runs as uid $NOBODY: $_user_skip"
}
# needs_root TEXT: true as root; otherwise a TAP skip of TEXT and false.
needs_root() {
  [ "$(id -u)" -eq 0 ] && return 0
  pass "# SKIP $1: needs root"
  return 1
}

# full_tmpfs_start: the start of a test that sweeps the free room of a
# workspace root on a tmpfs of its own (workspace-full.sh,
# full-at-start.sh): skipped unless it can mount one, $T, and a bundle in
# $B.  sweep_own_tmpfs MODE SCRIPT [ARG...]: SCRIPT (bash, given a mount
# point, the bundle, MODE, its uid and the ARGs) in a mount namespace of
# its own; its output.
full_tmpfs_start() {
  sandbox_possible || skip_all "user namespaces are not available"
  [ "$(id -u)" -eq 0 ] || skip_all "mounts a tmpfs of its own as the workspace root: needs root"
  unshare -m true 2>/dev/null || skip_all "mounts a tmpfs of its own: no mount namespace (unshare -m)"
  skip_modes
  T=$(tmpdir)
  B=$T/full-skill
  mkbundle "$B"
  chmod -R a+rX "$B"
}
sweep_own_tmpfs() {
  local m uid=0
  m=$(tmpdir)
  mkdir "$m/ws"
  [ "$1" = user ] && uid=$USER_UID
  SKILLRUN=$SKILLRUN JQ=$JQ unshare -m --propagation private \
    bash "$2" "$m/ws" "$B" "$1" "$uid" "${@:3}" 2>&1 </dev/null
}

# A workspace root the unprivileged user owns.
user_workspace() {
  local d
  d=$(tmpdir)
  [ "$(id -u)" -eq "$USER_UID" ] || chown "$USER_UID:$USER_UID" "$d"
  echo "$d"
}
# mode_workspace MODE: a workspace root MODE's user owns.
mode_workspace() {
  if [ "$1" = user ]; then user_workspace; else tmpdir; fi
}

# audit_ok FILE: every line parses with jq and the chain verifies.
audit_ok() {
  [ -s "$1" ] || return 1
  "$JQ" -e . "$1" >/dev/null 2>&1 || return 1
  "$SKILLRUN" --verify-audit "$1" >/dev/null
}
# wait_for FILE TEXT: until FILE holds TEXT (a fixed string; 10 s at most).
wait_for() {
  for _ in $(seq 500); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.02
  done
  return 1
}
# wait_running FILE: until the stream says the skill runs (10 s at most).
wait_running() { wait_for "$1" '"state":"running"'; }
# hold_lock FILE [RUNNER...]: a process (started by RUNNER, "${AS_USER[@]}"
# say) holding FILE's flock(2) for 120 s, itself in $holder (not a subshell
# around it: killing it frees the lock; bg_pids kills it at the end);
# returns once the lock is held (5 s at most).
hold_lock() {
  local f=$1
  shift
  "$@" sh -c 'exec 9<>"$1" && flock 9 && exec sleep 120' - "$f" &
  holder=$!
  bg_pids+=("$holder")
  for _ in $(seq 50); do
    flock -n "$f" true || break
    sleep 0.1
  done
}
# last FILE: the last line's event and status.
last() { tail -n 1 "$1" | "$JQ" -r '[.event, .status] | @tsv'; }
meta_status() { "$JQ" -r .result.status "$1/metadata.json" 2>/dev/null; }
# closed_ok LABEL RUN-DIR STATUS: the run directory's record is whole.
closed_ok() {
  is "$1: audit.jsonl ends with execution_completed $3" "$(last "$2/audit.jsonl")" \
    "execution_completed	$3"
  check "$1: ... and verifies" audit_ok "$2/audit.jsonl"
  is "$1: metadata.json says $3" "$(meta_status "$2")" "$3"
}
# event FILE NAME: the last event NAME as compact JSON (empty if none).
event() { "$JQ" -c "select(.event == \"$2\")" "$1" | tail -n 1; }
field() { event "$1" "$2" | "$JQ" -r "$3"; }

# schema_check: every audit line and metadata.json the script's runs left
# under its temp root validates against schema/ (tests/schema-check.py, one
# python3 for the whole script): one TAP result, or one `not ok` per problem
# naming FILE:LINE and the schema error.  Run by finish, before the root is
# removed.  A file made invalid on purpose is listed in SCHEMA_SKIP.
SCHEMA_SKIP=()
schema_check() {
  local out rc summary line args=() n=0
  for line in ${SCHEMA_SKIP[@]+"${SCHEMA_SKIP[@]}"}; do args+=(--skip "$line"); done
  out=$("$PYTHON3" "$TOP_SRCDIR/tests/schema-check.py" --scan "$_test_root" \
    ${args[@]+"${args[@]}"} 2>&1)
  rc=$?
  summary=${out##*$'\n'}
  if [ "$rc" -eq 0 ]; then
    pass "schema: $summary"
  elif [ "$rc" -eq 1 ]; then
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      n=$((n + 1))
      # A '#' would start a TAP directive: "# TODO" would hide the failure.
      [ "$n" -gt 50 ] || fail "schema: ${line//#/\\#}"
    done <<<"${out%"$summary"}"
    [ "$n" -le 50 ] || diag "... and $((n - 50)) more problems"
    [ "$n" -gt 0 ] || fail "schema: invalid, but no problem named: $summary"
    diag "$summary"
  else
    while IFS= read -r line; do diag "$line"; done <<<"$out"
    fail "schema: cannot validate (tests/schema-check.py exited $rc)"
  fi
}

finish() {
  schema_check
  [ "$_tap_planned" = 1 ] || echo "1..$_tap_n"
  if [ "$_tap_failed" -gt 0 ]; then exit 1; fi
  exit 0
}

# check_run_audits LABEL W PREFIX: every audit file $W/a.N of the runs made
# with --execution-id PREFIXN parses with jq and its chain verifies, and the
# run directory's audit.jsonl is the same bytes.  Two TAP results.
check_run_audits() {
  local label=$1 w=$2 prefix=$3 f i c bad=0 copies=0
  for f in "$w"/a.*; do
    i=${f##*.}
    [ -s "$f" ] || continue
    audit_ok "$f" || { bad=$((bad + 1)); diag "audit does not verify: $f"; }
    c="$w/default/$prefix$i/audit.jsonl"
    if [ -f "$c" ] && ! cmp -s "$f" "$c"; then copies=$((copies + 1)); diag "copy differs: $c"; fi
  done
  is "$label: every run's audit parses with jq and verifies" "$bad" 0
  is "$label: every run directory's audit.jsonl equals the stream" "$copies" 0
}

# run_in DIR ROOT ID [OPTION...] [BUNDLE -- COMMAND...]: one skillrun run
# in workspace root ROOT with --execution-id ID, as the caller, its audit
# stream (stdout) into DIR/ID.audit and its stderr into DIR/ID.err.  Sets
# $rc, $audit and $err.
run_in() {
  local dir=$1 root=$2 id=$3
  shift 3
  audit="$dir/$id.audit"
  err="$dir/$id.err"
  "$SKILLRUN" --workspace-root "$root" --execution-id "$id" "$@" \
    >"$audit" 2>"$err"
  rc=$?
}

# die TEXT: a setup step failed: one failed TAP result, and the end.
die() {
  fail "setup: $*"
  finish
}

# For the tests that build their own network (network.sh,
# attacks/egress.sh), as root in private network and mount namespaces.
# server_netns ADDR...: a "server" network namespace behind a veth, v0
# 11.0.0.1/24 on this side, v1 with each ADDR/24 on the other; lo up in
# both.  Sets SRV (the pid that holds it, in bg_pids) and srvns (the
# command prefix that runs something in it).
server_netns() {
  local a cmd="ip link set lo up"
  ip link set lo up || die "lo up"
  unshare --net sleep 3600 &
  SRV=$!
  bg_pids+=("$SRV")
  sleep 0.1
  ip link add v0 type veth peer name v1 netns "$SRV" || die "veth"
  ip addr add 11.0.0.1/24 dev v0 && ip link set v0 up || die "v0"
  for a; do cmd="$cmd && ip addr add $a/24 dev v1"; done
  nsenter --net="/proc/$SRV/ns/net" -- sh -c "$cmd && ip link set v1 up" || die "v1"
  # shellcheck disable=SC2034 # the caller's
  srvns=(nsenter --net="/proc/$SRV/ns/net" --)
}
# wait_ports "ADDR PORT"...: each has a listener by now, or die.
wait_ports() {
  local hp
  for hp; do
    # shellcheck disable=SC2086
    "$PYTHON3" "$TOP_SRCDIR/tests/integration/proxy-client.py" wait-port $hp ||
      die "no server on $hp"
  done
}
# test_resolver DIR: this mount namespace's /etc/resolv.conf names
# 127.0.0.1, where the test runs its DNS server (the namespace is private:
# the host's file is untouched).
test_resolver() {
  echo "nameserver 127.0.0.1" >"$1/resolv.conf"
  chmod 644 "$1/resolv.conf"
  mount --bind "$1/resolv.conf" /etc/resolv.conf || die "resolv.conf"
}

# Whether the sandbox can be built at all here (root or userns).
sandbox_possible() {
  [ "$(id -u)" -eq 0 ] || unshare -U true 2>/dev/null
}

# in_userns MAP CMD...: as root, CMD as root of a new user namespace whose
# uid_map and gid_map are MAP ("inside outside count" lines, as printf
# %b reads them), written from here in one write each (no newuidmap).
in_userns() {
  local map=$1 ours go p
  shift
  ours=$(readlink /proc/self/ns/user)
  go=$(mktemp -u "$_test_root/go.XXXXXX")
  mkfifo "$go" || return 99
  unshare -U sh -c 'read _ <"$0"; exec "$@"' "$go" "$@" &
  p=$!
  for _ in $(seq 100); do
    [ "$(readlink "/proc/$p/ns/user" 2>/dev/null)" = "$ours" ] || break
    sleep 0.05
  done
  map=$(printf '%b' "$map")
  if ! "$PYTHON3" -c 'import os, sys
for f in ("uid_map", "gid_map"):
    fd = os.open("/proc/%s/%s" % (sys.argv[1], f), os.O_WRONLY)
    os.write(fd, (sys.argv[2] + "\n").encode())
    os.close(fd)' "$p" "$map"; then
    kill -KILL "$p"
    wait "$p"
    return 99
  fi
  echo go >"$go"
  wait "$p"
}
