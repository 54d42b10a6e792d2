#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, what the process that starts skillrun leaves
# it (a daemon, a scheduler, an orchestrator's exec).
#
# SIGCHLD ignored (SIG_IGN survives execve(2); some daemons leave it so):
# the sandbox's init inherited it, so the kernel reaped the skill itself
# and init never heard of its end; the run hung until its timeout, and
# the skill's exit status was lost.  Now skillrun takes SIGCHLD back to
# its default first, and the run ends as the skill did.
#
# A file-size limit (RLIMIT_FSIZE) that the run's record reaches only at
# its last line: fallocate(2) reserved the final events' room past the
# limit, the write of execution_completed failed with EFBIG in
# audit.jsonl and in a stdout file under the same limit, and skillrun
# exited 0 with no terminal record anywhere (--verify-audit: incomplete)
# and a metadata.json saying succeeded.  Now room past the limit is no
# room, as on a full file system: the run stops with status error and
# reason audit_write, and both records end with execution_completed.
# As root and as an unprivileged user.
#
# root without CAP_SETUID or CAP_SETGID (a container's, or under a
# capability bounding set without them): the run failed in a layer with
# "setgroups: Operation not permitted" or "cannot write /proc/N/uid_map",
# which did not say what was missing.  Now it is refused at its start,
# one line naming the capabilities, reason resources.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ -x /usr/bin/python3 ] || skip_all "no /usr/bin/python3 to set up the caller's state"
skip_modes

T=$(tmpdir)
B=$T/procenv
mkbundle "$B" "Exits 7, or writes one output."
chmod -R a+rX "$T"
# with WHAT CMD...: CMD started with the caller's state WHAT (the system's
# python3: $PYTHON3 may live where the test user cannot go).
cat >"$T/with.py" <<'EOP'
import os, resource, signal, sys
what, arg = sys.argv[1].split("=") if "=" in sys.argv[1] else (sys.argv[1], "")
if what == "sigchld-ignored":
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
elif what == "fsize":
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(arg), int(arg)))
os.execv(sys.argv[2], sys.argv[2:])
EOP
chmod a+r "$T/with.py"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  with() { "${pre[@]}" /usr/bin/python3 "$T/with.py" "$@"; }

  # ------------------------------------------------- SIGCHLD ignored
  id=sigchld
  t0=$(date +%s%N)
  with sigchld-ignored "$SKILLRUN" --workspace-root "$W" --execution-id "$id" \
    --timeout 8s "$B" -- /bin/sh -c 'exit 7' >"$W/a.$id" 2>/dev/null
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  is "$mode: SIGCHLD ignored by the caller: the skill's exit 7" "$rc" 7
  check "$mode: ... promptly, not at the timeout (${ms} ms)" [ "$ms" -lt 6000 ]
  is "$mode: ... the stream ends failed, exit 7" \
    "$(field "$W/a.$id" execution_completed '[.status, .skill_exit_code] | @tsv')" "failed	7"
  closed_ok "$mode: SIGCHLD ignored" "$W/default/$id" failed

  # ---------------------------------------- RLIMIT_FSIZE at the last line
  # The record's length without a limit, then a limit some 200 bytes
  # short of it: the final line (some 700) does not fit.  The final
  # events' room (16 KiB) is not there from the start: the run stops
  # before it begins, its stream whole, and with nothing on its record
  # leaves no run directory.
  id=fsize-free
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" -- \
    /bin/sh -c 'echo out >/workspace/outputs/o' >"$W/a.$id" 2>/dev/null
  is "$mode: without a file-size limit: exit 0" "$?" 0
  size=$(stat -c %s "$W/default/$id/audit.jsonl")
  lim=$((size - 200))
  id=fsize
  with fsize=$lim "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" -- \
    /bin/sh -c 'echo out >/workspace/outputs/o' >"$W/a.$id" 2>"$W/e.$id"
  is "$mode: a file-size limit of $lim bytes, the record $size: exit 125" "$?" 125
  is "$mode: ... the stream (a file under that limit) ends with status error" \
    "$(last "$W/a.$id")" "execution_completed	error"
  check "$mode: ... and verifies" audit_ok "$W/a.$id"
  is "$mode: ... an error event says audit_write" "$(field "$W/a.$id" error .reason)" audit_write
  check "$mode: ... which stderr says ($(head -n 1 "$W/e.$id"))" \
    grep -q "file-size limit.*File too large" "$W/e.$id"
  # Nothing went on its record: no run directory to say so, nor a marker.
  check "$mode: ... and leaves no run directory" test ! -e "$W/default/$id"
  check "$mode: ... nor a marker" test ! -e "$W/.active/default:$id"

  # A limit the record reaches halfway through the harvest of 300
  # outputs: the run stops there, and both records end with the final
  # events in the room kept for them.
  id=fsize-mid
  with fsize=40000 "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" -- \
    /bin/sh -c 'i=0; while [ $i -lt 300 ]; do : >/workspace/outputs/f$i; i=$((i + 1)); done' \
    >"$W/a.$id" 2>"$W/e.$id"
  is "$mode: a file-size limit the harvest reaches: exit 125" "$?" 125
  is "$mode: ... the stream ends with status error" "$(last "$W/a.$id")" "execution_completed	error"
  check "$mode: ... and verifies" audit_ok "$W/a.$id"
  closed_ok "$mode: a file-size limit halfway" "$W/default/$id" error
  is "$mode: ... an error event says audit_write" \
    "$(field "$W/default/$id/audit.jsonl" error .reason)" audit_write
  check "$mode: ... within the limit" [ "$(stat -c %s "$W/default/$id/audit.jsonl")" -le 40000 ]
done

# ------------------------------------------- root without CAP_SETUID/GID
if [ "$(id -u)" = 0 ] && setpriv --bounding-set -all true 2>/dev/null; then
  W=$(mode_workspace root)
  for keep in "" +setuid +setgid; do
    id=caps-${keep#+}
    setpriv --bounding-set "-all${keep:+,$keep}" "$SKILLRUN" --workspace-root "$W" \
      --execution-id "$id" "$B" -- /bin/true >"$W/a.$id" 2>"$W/e.$id"
    is "root, bounding set -all${keep:+,$keep}: exit 125" "$?" 125
    is "... an error event says resources" "$(field "$W/a.$id" error .reason)" resources
    check "... one line on stderr names what is missing ($(head -c 60 "$W/e.$id"))" \
      sh -c '[ "$(wc -l <"$1")" = 1 ] && grep -q "^skillrun: root without CAP_SET" "$1"' - "$W/e.$id"
    check "... the stream verifies" audit_ok "$W/a.$id"
  done
  setpriv --bounding-set -all,+setuid,+setgid "$SKILLRUN" --workspace-root "$W" \
    --execution-id caps-both "$B" -- /bin/true >/dev/null 2>&1
  is "root, bounding set -all,+setuid,+setgid: the run succeeds" "$?" 0
else
  pass "# SKIP not root, or setpriv cannot set the bounding set"
fi

finish
