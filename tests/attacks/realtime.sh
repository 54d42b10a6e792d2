#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, real-time scheduling: a caller with a real-time
# priority limit (ulimit -r, which pam_limits gives audio users) passed it
# to the skill, whose seccomp filter allows sched_setscheduler(2): its
# spinning SCHED_FIFO threads could starve the host's CPUs, the
# supervisor's too, for as long as its CPU budget.  A caller run under
# chrt -f handed the skill its real-time policy the same way.  Now the
# skill's RLIMIT_RTPRIO and RLIMIT_NICE are 0 and it starts under the
# default policy, at the caller's nice value.  A caller run under
# ionice -c 1 handed it the real-time I/O class (its I/O before the
# host's); now the skill's I/O class is the one its nice value gives.
# The egress proxy, which does the skill's network work outside its CPU
# budget, kept both: now it drops them too.  As root and as an
# unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

command -v chrt >/dev/null && command -v prlimit >/dev/null ||
  skip_all "chrt and prlimit (util-linux) are needed"
# The policy (field 41 of /proc/self/stat: 0 other, 1 fifo, 2 rr), the
# nice value (19) and what a switch to SCHED_FIFO or a lower nice gives.
probe='
import os
f = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return "errno=%d" % e.errno
print("policy=%s nice=%s" % (f[38], f[16]))
print("fifo=" + attempt(lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))))
print("renice=" + attempt(lambda: os.setpriority(os.PRIO_PROCESS, 0, -5)))
'
# A skill whose runs have the egress proxy.
NB=$T/net-skill
mkbundle "$NB"
printf -- '---\nname: net-skill\ndescription: Sleeps with an egress proxy.\nmetadata:\n  sandbox.network: allowlist\n  sandbox.network-allow: example.com\n---\n# net-skill\n' >"$NB/SKILL.md"
printf 'network allowlist\nnetwork-allow example.com\n' >"$T/net.profile"
chmod -R a+rX "$NB" "$T/net.profile"
# Raising a hard limit takes CAP_SYS_RESOURCE, which a container's root
# may lack.
raise_ok=0
prlimit --rtprio=50:50 --nice=30:30 true 2>/dev/null && raise_ok=1
for mode in $MODES; do
  if [ $raise_ok = 1 ]; then
    # Allowed up to priority 50 and nice -10 by its caller's limits.
    CALLER=(prlimit --rtprio=50:50 --nice=30:30 --)
    skill "$mode" -- python3 -c "$probe"
    run_ok "$mode" "under ulimit -r 50 and -e 30"
    is "$mode: ... the skill cannot take a real-time policy" \
      "$(grep '^fifo=' "$OUT" 2>/dev/null)" "fifo=errno=1"
    is "$mode: ... nor a higher priority" \
      "$(grep '^renice=' "$OUT" 2>/dev/null)" "renice=errno=13"
  else
    for _ in 1 2 3 4; do
      pass "# SKIP $mode: ulimit -r cannot be raised here (no CAP_SYS_RESOURCE)"
    done
  fi

  # Started under SCHED_FIFO, at nice 3 (chrt -f takes CAP_SYS_NICE or
  # a ulimit -r: an ordinary user running the tests has neither).
  # The caller's nice is 3 above the suite's own (which a niced make
  # check raises), 19 at most.
  CALLER=(chrt -f 10 nice -n 3)
  want_nice=$(($(nice) + 3))
  [ "$want_nice" -le 19 ] || want_nice=19
  if chrt -f 10 true 2>/dev/null; then
    skill "$mode" -- python3 -c "$probe"
    run_ok "$mode" "under chrt -f 10"
    is "$mode: ... the skill runs under the default policy, at the caller's nice" \
      "$(grep '^policy=' "$OUT" 2>/dev/null)" "policy=0 nice=$want_nice"
    is "$mode: ... and cannot take a real-time policy back" \
      "$(grep '^fifo=' "$OUT" 2>/dev/null)" "fifo=errno=1"
  else
    pass "# SKIP $mode: chrt -f is not allowed here (no CAP_SYS_NICE, no ulimit -r)"
  fi

  # Started in the real-time I/O class (ionice -c 1, which takes
  # CAP_SYS_NICE): the skill's I/O would go before the host's.  Seen from
  # the host (the filter refuses ioprio_get(2) in the sandbox), while the
  # skill sleeps for a time no other process here uses.
  if command -v ionice >/dev/null && ionice -c 1 -n 0 true 2>/dev/null; then
    nap=4.$$$_run_n
    CALLER=(ionice -c 1 -n 0)
    skill "$mode" -- sleep "$nap" &
    seen=
    for _ in $(seq 30); do
      pid=$(pgrep -x -f "sleep $nap" | head -n 1)
      [ -n "$pid" ] && seen=$(ionice -p "$pid" 2>/dev/null) && [ -n "$seen" ] && break
      sleep 0.1
    done
    wait
    _run_n=$((_run_n + 1)) # the run's id, taken in the background subshell
    case $seen in
    realtime*) fail "$mode: under ionice -c 1 the skill runs in the real-time I/O class ($seen)" ;;
    "") fail "$mode: under ionice -c 1 the skill's I/O class was not seen" ;;
    *) pass "$mode: under ionice -c 1 the skill's I/O class is not real-time ($seen)" ;;
    esac
  else
    pass "# SKIP $mode: ionice -c 1 is not allowed here"
  fi

  # The egress proxy, a child of the supervisor that relays the skill's
  # connections, outside any CPU budget: under chrt -f and ionice -c 1
  # its threads kept both, so a skill that keeps it busy had work done
  # before the host's.  Seen from the host while the skill sleeps.
  if chrt -f 10 true 2>/dev/null && ionice -c 1 -n 0 true 2>/dev/null; then
    nap=4.$$$_run_n
    CALLER=(chrt -f 10 ionice -c 1 -n 0)
    saved=$B
    B=$NB
    skill "$mode" -p "$T/net.profile" -- sleep "$nap" &
    B=$saved
    proxy=
    for _ in $(seq 30); do
      pid=$(pgrep -x -f "sleep $nap" | head -n 1)
      if [ -n "$pid" ]; then
        init=$(ps -o ppid= -p "$pid" | tr -d ' ')
        sup=$(ps -o ppid= -p "${init:-0}" | tr -d ' ')
        proxy=$(ps -o pid=,args= --ppid "$sup" | grep -v skillrun-init | awk '{print $1}' | head -n 1)
        [ -n "$proxy" ] && classes=$(ps -L -o cls= -p "$proxy" | sort -u | tr -d ' \n') &&
          io=$(ionice -p "$proxy" 2>/dev/null) && break
      fi
      sleep 0.1
    done
    wait
    _run_n=$((_run_n + 1)) # the run's id, taken in the background subshell
    if [ -z "$proxy" ]; then
      fail "$mode: under chrt -f, the proxy was not seen"
      w=$WS_root
      [ "$mode" = user ] && w=$WS_user
      diag "$(cat "$w/a$_run_n.err" 2>/dev/null)"
      diag "$(tail -n 2 "$w/a$_run_n.audit" 2>/dev/null | cut -c1-400)"
      fail "$mode: under ionice -c 1, the proxy was not seen"
    else
      is "$mode: under chrt -f, the proxy's threads run under the default policy" "$classes" TS
      case $io in
      realtime*) fail "$mode: under ionice -c 1 the proxy runs in the real-time I/O class ($io)" ;;
      *) pass "$mode: under ionice -c 1 the proxy's I/O class is not real-time ($io)" ;;
      esac
    fi
  else
    pass "# SKIP $mode: chrt -f or ionice -c 1 is not allowed here"
    pass "# SKIP $mode: chrt -f or ionice -c 1 is not allowed here"
  fi
done
CALLER=()
host_unchanged realtime
finish
