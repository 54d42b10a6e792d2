#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the uid pool against the host's other ids.
# Root's runs take their sandbox's host uid and gid from the uid pool
# (800000-800063 by default).  A user whose subordinate range in
# /etc/subuid or /etc/subgid covers the pool (useradd hands out 65536 ids
# a user from 100000: the 11th user's range is 755360-820895) runs
# rootless containers as those very ids, and could signal, trace or read
# a root run's sandbox; so could a user or group that has one of those
# ids.  Before the fix such a pool was used all the same.  Now a pool a
# subordinate range overlaps stops the run (125, layer uid-pool, naming
# the file and line), an id that is a user's or a group's is never taken,
# and a pool with no other id left stops the run too.  The host's files
# are not touched: each case binds its own copy over them in a private
# mount namespace.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "the uid pool is root's (the tests run as uid $(id -u))"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
. "$(dirname "$0")/common.sh"

W=$WS_root
n=0
# over FILE=COPY... -- SKILLRUN-ARGS...: one run of the bundle with each
# COPY bound over FILE, in a mount namespace of its own; sets $rc, $AUDIT,
# $ERR.
over() {
  local binds=()
  while [ "$1" != -- ]; do
    binds+=("$1")
    shift
  done
  shift
  n=$((n + 1))
  AUDIT=$W/u$n.audit ERR=$W/u$n.err
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare -m --propagation private sh -c '
    while [ "$1" != -- ]; do
      mount --bind "${1#*=}" "${1%%=*}" || exit 99
      shift
    done
    shift
    exec "$@"' sh "${binds[@]}" -- "$SKILLRUN" --workspace-root "$W" \
    --execution-id "u$n" --audit-file "$AUDIT" "$@" >/dev/null 2>"$ERR"
  rc=$?
}
host_uid() { field "$AUDIT" policy_resolved .sandbox_ids.uid; }

# The control: the pool as shipped, nobody else's here.
over -- "$B" -- /bin/true
is "the default uid pool: the run succeeds" "$rc" 0
uid=$(host_uid)
check "... with a host uid from the pool ($uid)" \
  test "${uid:-0}" -ge 800000 -a "${uid:-0}" -le 800063

printf 'alice:100000:65536\nvictim:755360:65536\n' >"$T/subids"
for f in subuid subgid; do
  over "/etc/$f=$T/subids" -- "$B" -- /bin/true
  is "a subordinate range over the pool in /etc/$f stops the run (125)" "$rc" 125
  check "... naming the range, the file and the line" \
    grep -q "overlaps victim's subordinate ids 755360-820895 (/etc/$f:2)" "$ERR"
  is "... recorded as layer_failed uid-pool" \
    "$(field "$AUDIT" layer_failed .layer)" uid-pool
  is "... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error
done

# Every range newuidmap honours counts: shadow (getulong) reads a field
# with strtoul, base 0, up to 2^64-1, and ignores fields after the third;
# a NUL ends a line's text, not the file.  Before, each of these ran.
k=0
for line in 'victim:0xc3500:64' 'victim:800000:64:x' 'victim: 800000:64' \
  'victim:700000:4294967296000' 'victim:790000:-1' 'junk\000x\nvictim:800000:64'; do
  k=$((k + 1))
  printf "alice:100000:65536\n$line\n" >"$T/subids-$k"
  over "/etc/subuid=$T/subids-$k" -- "$B" -- /bin/true
  is "a range shadow reads as over the pool ('$line') stops the run (125)" "$rc" 125
  check "... naming it" grep -q "overlaps victim's subordinate ids" "$ERR"
done
# Without its last newline, the last line counts as well.
printf 'alice:100000:65536\nvictim:800063:1' >"$T/subids-nonl"
over "/etc/subuid=$T/subids-nonl" -- "$B" -- /bin/true
is "a last range without its newline over the pool's last id stops the run (125)" "$rc" 125
# A range of no ids covers none, wherever it starts (before: 125).
printf 'alice:100000:65536\nnobody:800010:0\n' >"$T/subids-zero"
over "/etc/subuid=$T/subids-zero" -- "$B" -- /bin/true
is "a range of 0 ids inside the pool: the run succeeds" "$rc" 0

# A range beside the pool is none of its business.
printf 'alice:100000:65536\nbob:165536:65536\n' >"$T/subids-clear"
over "/etc/subuid=$T/subids-clear" "/etc/subgid=$T/subids-clear" -- "$B" -- /bin/true
is "subordinate ranges beside the pool: the run succeeds" "$rc" 0

# Every id of the pool but one is a user's (or a group's): that one is
# taken, whichever slot the run starts at.  A pool of 64 ids of this
# test's own (912400-912463): under make -j2 another test's root run may
# hold any slot of the default pool for longer than a run waits (10 s),
# and the one id left was then taken (a CI rehearsal's ASan distcheck
# failed so, all three runs); the subordinate ranges are the test's too.
printf 'uid-pool 912400 64\n' >"$T/pool64.conf"
cp /etc/passwd "$T/passwd"
cp /etc/group "$T/group"
for i in $(seq 912400 912463); do
  [ "$i" = 912440 ] && continue
  if [ $((i % 2)) = 0 ]; then
    echo "pool$i:x:$i:$i::/nonexistent:/usr/sbin/nologin" >>"$T/passwd"
  else
    echo "pool$i:x:$i:" >>"$T/group"
  fi
done
for k in 1 2 3; do
  over "/etc/passwd=$T/passwd" "/etc/group=$T/group" \
    "/etc/subuid=$T/subids-clear" "/etc/subgid=$T/subids-clear" -- \
    --conf "$T/pool64.conf" "$B" -- /bin/true
  is "ids of the pool that are users' or groups' are not taken ($k): the run succeeds" "$rc" 0
  is "... with the one id nobody has" "$(host_uid)" 912440
done
rm -f /run/skillrun/uid-pool/912440

# While every slot is taken a run waits (10 s), passing over the pool
# every 100 ms; whether an id is a user's or a group's is asked once per
# id, not on every pass: with LDAP or SSSD each answer may be a round
# trip, and a pool may hold 65536 ids.  Before, 4 ids were asked about
# on each of some 100 passes (/etc/passwd opened ~400 times).
if command -v strace >/dev/null && command -v flock >/dev/null; then
  printf 'uid-pool 912340 4\n' >"$T/pool4.conf"
  holders=()
  for i in 912340 912341 912342 912343; do
    hold_lock /run/skillrun/uid-pool/$i
    holders+=("$holder")
  done
  n=$((n + 1))
  # LeakSanitizer cannot stop the world under ptrace and aborts a
  # sanitizer build's skillrun at exit: the other runs check for leaks.
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    strace -f -qq -e trace=openat -o "$T/strace" "$SKILLRUN" --conf "$T/pool4.conf" \
      --workspace-root "$W" --execution-id "u$n" --audit-file "$W/u$n.audit" \
      "$B" -- /bin/true >/dev/null 2>"$W/u$n.err"
  rc=$?
  kill "${holders[@]}" 2>/dev/null
  wait "${holders[@]}" 2>/dev/null
  rm -f /run/skillrun/uid-pool/91234[0-3]
  is "a pool whose every slot is held: the run is refused after its wait (125)" "$rc" 125
  opens=$(grep -c '"/etc/passwd"' "$T/strace")
  check "... having asked NSS about each id once ($opens opens of /etc/passwd, at most 4)" \
    test "$opens" -le 4
fi

# A slot's lock is its supervisor's only: a supervisor killed with
# SIGKILL frees the slot as it dies, a moment before its sandbox's init
# and proxy get their death signal and the rest of the sandbox is killed
# (longer for a process in uninterruptible sleep).  A run that took the
# slot meanwhile ran its skill as the very uid of the last run's
# processes.  A run marks its slot and clears the mark once its sandbox
# is gone; a marked slot is taken only once no process runs as its id.
# Here a real supervisor is killed (its mark stays), and the leftover is
# a process of the test's own under the pool's one id, which the next run
# must wait for.  Before, that run took the slot at once.
if command -v setpriv >/dev/null; then
  ID=912350 # nobody else's: the cases above take 912340-3 and 912400-63, pool-wait.sh 912360
  SLOT=/run/skillrun/uid-pool/$ID
  printf 'uid-pool %s 1\n' "$ID" >"$T/pool1.conf"
  "$SKILLRUN" --conf "$T/pool1.conf" --workspace-root "$W" --execution-id k1 \
    "$B" -- sleep 60 >"$W/k1.stream" 2>/dev/null &
  killed=$!
  wait_running "$W/k1.stream"
  check "a run holding the slot has marked it" test -s "$SLOT"
  kill -9 $killed
  wait $killed 2>/dev/null
  check "... a supervisor killed with SIGKILL leaves the mark" test -s "$SLOT"
  setpriv --reuid=$ID --regid=$ID --clear-groups sleep 60 &
  left=$!
  # Until it runs as the id: a run that looked before setpriv's switch
  # found no such process and, rightly, took the slot at once.
  for _ in $(seq 100); do
    [ "$(awk '$1 == "Uid:" { print $2 }' /proc/$left/status 2>/dev/null)" = "$ID" ] && break
    sleep 0.05
  done
  n=$((n + 1))
  AUDIT=$W/u$n.audit
  "$SKILLRUN" --conf "$T/pool1.conf" --workspace-root "$W" --execution-id "u$n" \
    --audit-file "$AUDIT" "$B" -- sh -c 'date +%s%N' >/dev/null 2>"$W/u$n.err" &
  run=$!
  sleep 1.5
  gone_at=$(date +%s%N)
  kill $left
  wait $left 2>/dev/null
  wait $run
  rc=$?
  is "a process still running as a marked slot's id: the run succeeds" "$rc" 0
  is "... with that id" "$(host_uid)" "$ID"
  started=$(cat "$W/default/u$n/logs/stdout.log" 2>/dev/null)
  check "... its skill started only once the process was gone" \
    test "${started:-0}" -gt "$gone_at"
  check "... and its clean end cleared the mark" test -f "$SLOT" -a ! -s "$SLOT"
  # Unmarked, a slot is taken without reading /proc: a process of the
  # id (which no run of the pool's left behind) does not hold it up.
  setpriv --reuid=$ID --regid=$ID --clear-groups sleep 60 &
  left=$!
  n=$((n + 1))
  AUDIT=$W/u$n.audit
  "$SKILLRUN" --conf "$T/pool1.conf" --workspace-root "$W" --execution-id "u$n" \
    --audit-file "$AUDIT" "$B" -- /bin/true >/dev/null 2>"$W/u$n.err"
  rc=$?
  kill $left
  wait $left 2>/dev/null
  is "an unmarked slot is taken at once" "$rc" 0
  rm -f "$SLOT"
fi

# The mark needs no room: /run is a tmpfs that fills up (any user who
# can write to a directory on it can fill it), and a slot file with a page
# of data is one more page.  Before, a run that could not write its pid
# there stopped (125, "No space left on device") where it ran before
# there was a mark; now a full file system takes the mark as a size
# without data.  Here a tmpfs of one page, full, over /run/skillrun in a
# private mount namespace.
n=$((n + 1))
AUDIT=$W/u$n.audit
printf 'uid-pool 912355 1\n' >"$T/pool-full.conf"
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m --propagation private sh -c '
  mount -t tmpfs -o size=4k,mode=0755 tmpfs /run/skillrun || exit 99
  mkdir /run/skillrun/uid-pool || exit 99
  head -c 8192 /dev/zero >/run/skillrun/fill 2>/dev/null
  "$@" &
  run=$!
  marked=no i=0
  while [ $i -lt 100 ] && kill -0 $run 2>/dev/null; do
    if [ -s /run/skillrun/uid-pool/912355 ]; then marked=yes; break; fi
    sleep 0.05
    i=$((i + 1))
  done
  wait $run
  rc=$?
  echo "$marked" >"$0.marked"
  [ -f /run/skillrun/uid-pool/912355 ] && [ ! -s /run/skillrun/uid-pool/912355 ] &&
    echo cleared >>"$0.marked"
  exit $rc' "$T/full" "$SKILLRUN" --conf "$T/pool-full.conf" --workspace-root "$W" \
  --execution-id "u$n" --audit-file "$AUDIT" "$B" -- sleep 1 >/dev/null 2>"$W/u$n.err"
rc=$?
is "a full /run: the run succeeds all the same" "$rc" 0
is "... its slot marked while it ran, cleared at its end" \
  "$(tr '\n' ' ' <"$T/full.marked" 2>/dev/null)" "yes cleared "

# pooled SETUP [RUNNER...] -- SKILLRUN-ARGS...: one run with a pool of
# one slot (912356) in a private mount namespace whose /run/skillrun is an
# empty tmpfs, which the shell text SETUP prepares; RUNNER (setpriv...)
# runs skillrun, killed with SIGTERM after 2 s.  Sets $rc, $AUDIT, $ERR.
printf 'uid-pool 912356 1\n' >"$T/pool-own.conf"
pooled() {
  local setup=$1 runner=()
  shift
  while [ "$1" != -- ]; do
    runner+=("$1")
    shift
  done
  shift
  n=$((n + 1))
  AUDIT=$W/u$n.audit ERR=$W/u$n.err
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare -m --propagation private sh -c '
    mount -t tmpfs -o mode=0755 tmpfs /run/skillrun || exit 99
    eval "$0" || exit 98
    exec timeout -s TERM 2 "$@"' "$setup" ${runner[@]+"${runner[@]}"} \
    "$SKILLRUN" --conf "$T/pool-own.conf" --workspace-root "$W" \
    --execution-id "u$n" --audit-file "$AUDIT" "$@" >/dev/null 2>"$ERR"
  rc=$?
}

# The pool's directories are root's alone.  Whoever owns or can write
# /run/skillrun or its uid-pool (made before root's first run after a
# boot, or by a careless tmpfiles.d line) can unlink a live run's slot
# file, and the next run takes the same host uid as the running one; can
# hold every slot's lock; can plant a FIFO or a hard link to another
# file of root's as a slot file, which a run writes its pid into and
# empties at its end.  Before, the pool was used whoever owned it.
pooled 'mkdir -m 0700 /run/skillrun/uid-pool' -- "$B" -- /bin/true
is "a pool directory of root's, 0700: the run succeeds" "$rc" 0
pooled "mkdir -m 0700 /run/skillrun/uid-pool && chown $NOBODY /run/skillrun/uid-pool" \
  -- "$B" -- /bin/true
is "a pool directory another user owns stops the run (125)" "$rc" 125
check "... naming it and its owner" \
  grep -q "uid-pool/912356 is in directory /run/skillrun/uid-pool of uid $NOBODY" "$ERR"
is "... recorded as layer_failed uid-pool" "$(field "$AUDIT" layer_failed .layer)" uid-pool
is "... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error
pooled "chown $NOBODY /run/skillrun && chmod 0700 /run/skillrun" -- "$B" -- /bin/true
is "a /run/skillrun another user owns stops the run (125)" "$rc" 125
check "... naming it" grep -q "is in directory /run/skillrun of uid $NOBODY" "$ERR"
for mode in 0777 0770; do
  pooled "mkdir -m $mode /run/skillrun/uid-pool" -- "$B" -- /bin/true
  is "a pool directory of mode $mode stops the run (125)" "$rc" 125
  check "... saying who can write it" grep -q "uid-pool, writable by .* (mode $mode)" "$ERR"
done
# A slot file that is a hard link to another of root's files (left from
# a time the directory was not root's, or fs.protected_hardlinks=0).
pooled 'mkdir -m 0700 /run/skillrun/uid-pool && echo secret >/run/skillrun/victim &&
  ln /run/skillrun/victim /run/skillrun/uid-pool/912356' -- "$B" -- /bin/true
is "a slot file that is a hard link stops the run (125)" "$rc" 125

# A marked slot is taken only once no process runs as its id, which
# /proc tells only when it lists every process: under hidepid with a
# gid= that is not skillrun's (proc(5); systemd's ProtectProc=invisible
# for a service of another group) it hides those of other uids from a
# root without CAP_SYS_PTRACE.  The scan saw none, and the run took the
# slot of a live process's uid.  Now it cannot tell, and the slot counts
# as taken: the run waits (here cancelled at 2 s).
if command -v setpriv >/dev/null && command -v timeout >/dev/null; then
  setpriv --reuid=912356 --regid=912356 --clear-groups sleep 60 &
  left=$!
  bg_pids+=("$left")
  pooled 'mkdir -m 0700 /run/skillrun/uid-pool && echo 1 >/run/skillrun/uid-pool/912356 &&
    mount -t proc -o hidepid=2,gid=912357 proc /proc' \
    setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace -- "$B" -- /bin/true
  is "a marked slot whose id /proc may hide: the run does not take it" \
    "$(field "$AUDIT" execution_completed .status)" cancelled
  is "... no sandbox ran as that id" "$(host_uid)" ""
  kill "$left"
  wait "$left" 2>/dev/null
  pooled 'mkdir -m 0700 /run/skillrun/uid-pool && echo 1 >/run/skillrun/uid-pool/912356 &&
    mount -t proc -o hidepid=2,gid=912357 proc /proc' -- "$B" -- /bin/true
  is "... with CAP_SYS_PTRACE, which sees them all, the slot is taken once free" "$rc" 0
  # hidepid=ptraceable (systemd's ProtectProc=ptraceable) hides what
  # skillrun may not ptrace whatever its gid= (proc(5)): being in that
  # group (here root's, the default) does not make it list every
  # process.  Before, the gid= was taken to, and the slot was taken.
  setpriv --reuid=912356 --regid=912356 --clear-groups sleep 60 &
  left=$!
  bg_pids+=("$left")
  pooled 'mkdir -m 0700 /run/skillrun/uid-pool && echo 1 >/run/skillrun/uid-pool/912356 &&
    mount -t proc -o hidepid=ptraceable proc /proc' \
    setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace -- "$B" -- /bin/true
  is "a marked slot under hidepid=ptraceable, skillrun in its gid=: not taken" \
    "$(field "$AUDIT" execution_completed .status)" cancelled
  is "... no sandbox ran as that id" "$(host_uid)" ""
  kill "$left"
  wait "$left" 2>/dev/null
fi

echo "pool912440:x:912440:912440::/nonexistent:/usr/sbin/nologin" >>"$T/passwd"
over "/etc/passwd=$T/passwd" "/etc/group=$T/group" \
  "/etc/subuid=$T/subids-clear" "/etc/subgid=$T/subids-clear" -- \
  --conf "$T/pool64.conf" "$B" -- /bin/true
is "every id of the pool a user's or a group's: the run stops (125)" "$rc" 125
check "... saying so" grep -q "every id of the uid pool 912400-912463 is a user's or a group's" "$ERR"
is "... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error
finish
