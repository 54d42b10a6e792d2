#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# leaks.sh reports what its suite leaked and nothing else.  Two stand-in
# suites: F ("ours") and G (a concurrent suite of another checkout).  Real
# runs of each, live and killed, a planted test directory, planted cgroup
# leaves; leaks.sh run for F must name every object of F's and none of
# G's, and pass once F's objects are gone while G's are still there.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
LEAKS=$TOP_SRCDIR/tests/integration/leaks.sh

T=$(tmpdir)
# mk_suite NAME: a suite directory as tests/suite-dir.sh makes it.  Its
# ledger names every staging base the suite's tests may be using now as
# one that existed before it: leaks.sh removes the empty bases its suite
# made, which must not happen under the tests running beside this one.
mk_suite() {
  local s=$T/$1 b
  mkdir -m 755 "$s"
  for b in /dev/shm/skillrun-[0-9]* "/dev/shm/skillrun-$(id -u)" "/dev/shm/skillrun-$NOBODY" \
    /run/skillrun-staging "${XDG_RUNTIME_DIR:-/nonexistent}/skillrun"; do
    echo "base $b"
  done >"$s/ledger"
  echo "$s"
}
F=$(mk_suite suite-f)
G=$(mk_suite suite-g)
# A test root in each, with a bundle and a workspace root, as lib.sh makes.
for s in "$F" "$G"; do
  mkdir -m 755 "$s/t.1"
  mkbundle "$s/t.1/b"
  chmod -R a+rX "$s/t.1"
done
FT=$F/t.1 GT=$G/t.1

SUPS=()
# Interrupted (a suite stopped midway), the runs' staging copies on tmpfs
# outlive their workspace roots unless gc collects them first.
trap '{ for p in "${SUPS[@]}"; do kill -KILL "$p"; done; wait
  for w in "$FT/ws" "$GT/ws" "$GT/ws2"; do
    [ -d "$w" ] && "$SKILLRUN" --gc --workspace-root "$w"
  done; } >/dev/null 2>&1; cleanup' EXIT
# start SUITE-TEST-ROOT WS ID SECONDS: a run in the background, as a test of
# that suite starts it, in workspace root SUITE-TEST-ROOT/WS; $sup is its
# supervisor.  Waits until its sleep runs.
start() {
  SKILLRUN_TEST_ROOT=$1 "$SKILLRUN" --workspace-root "$1/$2" --execution-id "$3" \
    --audit-file "$1/$3.audit" "$1/b" -- /bin/sleep "$4" 2>/dev/null &
  sup=$!
  SUPS+=("$sup")
  local p
  # Up to 20 s: a loaded host or a sanitizer build starts runs slowly.
  for _ in $(seq 400); do
    for p in $(pgrep -f "^/bin/sleep $4\$"); do
      _pid_root "$p"
      if [ "$_root" = "$1" ]; then
        sleeper=$p
        return 0
      fi
    done
    sleep 0.05
  done
  diag "the run $3 did not start"
  sleeper=none
}
staging_of() { field "$1" bundle_verified .staging; }
# leaks SUITE: leaks.sh for SUITE; output in $out, exit status in $rc.
leaks() {
  out=$(SKILLRUN_SUITE_DIR=$1 LEAKS_CGROUP_DIRS=$T/cgroup bash "$LEAKS" 2>&1)
  rc=$?
}
# line TEXT: the TAP result line of leaks.sh's check TEXT and its
# diagnostics (what it found), on one line.
line() { awk -v t="$1" 'index($0, t) { p = 1 } p && /^(ok|not ok) / && !index($0, t) { exit } p' <<<"$out" | tr '\n' ' '; }
has() { case $(line "$1") in *"$2"*) return 0 ;; esac; return 1; }
failed() { case $(line "$1") in "not ok"*) return 0 ;; esac; return 1; }
mkdir -m 755 "$T/cgroup"

# kill9 PID: SIGKILL, and reaped without the shell's "Killed" notice.
kill9() { { kill -KILL "$1" && wait "$1"; } 2>/dev/null; }
# A foreign run that leaked (supervisor killed: its staging stays; in a
# workspace root of its own, where no later run collects it), and a live
# one; then F's own live run.
start "$GT" ws2 g2 30682
g2_sup=$sup g2_sleeper=$sleeper
kill9 "$g2_sup"
start "$GT" ws g1 30681
g1_sup=$sup g1_sleeper=$sleeper
start "$FT" ws f1 30671
f1_sup=$sup f1_sleeper=$sleeper
f1_staging=$(staging_of "$FT/f1.audit")
g1_staging=$(staging_of "$GT/g1.audit")
g2_staging=$(staging_of "$GT/g2.audit")
check "the runs started ($f1_sleeper, $g1_sleeper, $g2_sleeper)" \
  test "$f1_sleeper" != none -a "$g1_sleeper" != none -a "$g2_sleeper" != none
check "the killed foreign run left its staging ($g2_staging)" [ -d "$g2_staging" ]
# What F's tests record when they end (lib.sh).
_ledger_runs "$FT" "$F"
_ledger_runs "$GT" "$G"

P="no process"
S="no staging"
D="no test directory"
U="no uid-pool slot"
C="no cgroup leaf"
leaks "$F"
diag "leaks.sh for F with F's run live:"
sed 's/^/#   /' <<<"$out"
check "F live: leaks.sh fails" [ "$rc" -ne 0 ]
check "F live: it reports the supervisor of F's run" has "$P" "[$f1_sup]"
check "F live: ... and the sandboxed process of F's run" has "$P" "[$f1_sleeper]"
check "F live: ... but not G's supervisor" not has "$P" "[$g1_sup]"
check "F live: ... nor G's sandboxed process" not has "$P" "[$g1_sleeper]"
check "F live: it reports F's staging" has "$S" "$f1_staging "
check "F live: ... but not the live foreign run's" not has "$S" "$g1_staging "
check "F live: ... nor the leaked foreign run's" not has "$S" "$g2_staging "
check "F live: it reports F's test directory" has "$D" "$FT"
if needs_root "F live: uid-pool slots (only root runs take them)"; then
  check "F live: it reports the uid-pool slot F's run holds" has "$U" "(pid $f1_sup)"
  check "F live: ... but not the foreign run's" not has "$U" "(pid $g1_sup)"
fi

# F's supervisor dies: its sandbox goes with it, its staging stays.
kill9 "$f1_sup"
for _ in $(seq 50); do kill -0 "$f1_sleeper" 2>/dev/null || break; sleep 0.1; done
# Planted cgroup leaves: of runs of F's (unlocked, as a killed run leaves
# it; locked by processes of F's); of a run of F's but locked by a foreign
# process (another suite's run with the same ids); of no run of F's.
echo "run default f3" >>"$F/ledger"
echo "run default f4" >>"$F/ledger"
echo "run default f5" >>"$F/ledger"
mkdir "$T/cgroup/run-default.f1.0123abcd" "$T/cgroup/run-default.f3.0123abcd" \
  "$T/cgroup/run-default.f4.0123abcd" "$T/cgroup/run-default.f5.0123abcd" \
  "$T/cgroup/run-default.other.0123abcd"
# hold DIR TEST-ROOT: a process of that test holding DIR locked, as a
# supervisor holds its leaf; $holder.  hold_fd: the lock taken by flock(1)
# on a descriptor the process keeps (/proc/locks then names a dead pid).
hold() {
  SKILLRUN_TEST_ROOT=$2 "$PYTHON3" -c 'import fcntl, os, sys, time
fcntl.flock(os.open(sys.argv[1], os.O_RDONLY), fcntl.LOCK_EX)
time.sleep(300)' "$1" &
  holder=$!
  SUPS+=("$holder")
}
hold_fd() {
  (exec 9<"$1" && flock 9 && SKILLRUN_TEST_ROOT=$2 exec sleep 30683) &
  holder=$!
  SUPS+=("$holder")
}
hold_fd "$T/cgroup/run-default.f3.0123abcd" "$GT"
hold_fd "$T/cgroup/run-default.f4.0123abcd" "$FT"
f4_holder=$holder
hold "$T/cgroup/run-default.f5.0123abcd" "$FT"
f5_holder=$holder
SUPS+=("$f4_holder")
# A directory a test of F's made outside the suite's directory.
outside=$(mktemp -d "$T/outside.XXXXXX")
echo "dir $outside $FT" >>"$F/ledger"
# Until the locks are taken (proc(5) /proc/locks names the inode).
locked() { grep -q ":$(stat -c %i "$1") " /proc/locks; }
for _ in $(seq 50); do
  locked "$T/cgroup/run-default.f3.0123abcd" && locked "$T/cgroup/run-default.f4.0123abcd" &&
    locked "$T/cgroup/run-default.f5.0123abcd" && break
  sleep 0.1
done
leaks "$F"
diag "leaks.sh for F after its run was killed:"
sed 's/^/#   /' <<<"$out"
check "F killed: leaks.sh fails" [ "$rc" -ne 0 ]
check "F killed: the supervisor of F's run is gone" not has "$P" "[$f1_sup]"
check "F killed: ... and its sandboxed process" not has "$P" "[$f1_sleeper]"
check "F killed: the processes of F's holding locks are reported" has "$P" "[$f5_holder]"
check "F killed: ... also the one holding a lock flock(1) took" has "$P" "[$f4_holder]"
check "F killed: its staging is still reported" has "$S" "$f1_staging "
check "F killed: ... and not the foreign runs'" not has "$S" "$GT"
check "F killed: the unlocked leaf of F's run is reported" has "$C" "run-default.f1.0123abcd"
check "F killed: ... and one a process of F's holds" has "$C" "run-default.f5.0123abcd"
check "F killed: ... and one a process of F's holds by a descriptor flock(1) locked" \
  has "$C" "run-default.f4.0123abcd"
check "F killed: ... not one of F's ids a foreign process holds" not has "$C" "run-default.f3.0123abcd"
check "F killed: ... nor one of no run of F's" not has "$C" "run-default.other.0123abcd"
check "F killed: a directory F made elsewhere is reported" has "$D" "$outside"
if needs_root "F killed: uid-pool slots (only root runs take them)"; then
  check "F killed: the uid-pool slot is free again" not failed "$U"
fi

# F cleans up: gc, its directories, its leaves.  G's live run, its leaked
# staging and its leaf f3 are still there: leaks.sh for F passes.
"$SKILLRUN" --gc --workspace-root "$FT/ws" >/dev/null 2>&1
check "--gc removed F's staging" [ ! -e "$f1_staging" ]
kill9 "$f4_holder"
kill9 "$f5_holder"
rm -rf "$FT" "$outside"
rmdir "$T/cgroup/run-default.f1.0123abcd" "$T/cgroup/run-default.f4.0123abcd" "$T/cgroup/run-default.f5.0123abcd"
leaks "$F"
diag "leaks.sh for F once F cleaned up, G still active:"
sed 's/^/#   /' <<<"$out"
is "F clean, G active: leaks.sh passes" "$rc" 0
check "F clean, G active: G's run is still live" kill -0 "$g1_sleeper"
check "F clean, G active: ... and G's leaked staging still there" [ -d "$g2_staging" ]
check "leaks.sh removed F's directory, once clean" [ ! -e "$F" ]

# G's turn: its leaks are its own.
leaks "$G"
check "leaks.sh for G reports G's live run" has "$P" "[$g1_sup]"
check "... and G's leaked staging" has "$S" "$g2_staging "
kill -TERM "$g1_sup"
wait "$g1_sup" 2>/dev/null
"$SKILLRUN" --gc --workspace-root "$GT/ws2" >/dev/null 2>&1
check "--gc removed G's staging" [ ! -e "$g2_staging" ]
finish
