#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, --gc when it runs short (a caller's low
# RLIMIT_NOFILE, the runs index's lock held).  gc closes a dead run, then
# removes its marker in .active, after which no later gc knows of the run.
# What it could not do before that was lost for good, while gc said it
# had closed the run and exited 0:
# - under `ulimit -n 12` the removal of a run's staging copy on tmpfs
#   failed unseen: the copies stayed in /dev/shm, memory nothing refers
#   to any more; a little lower, every dead run was "not the audit.jsonl"
#   of its run and left as it was;
# - with the caller's own runs index locked past gc's wait (a reader, a
#   stopped run), the run was closed and never counted.
# A line that cannot go into the index for good (a .metrics another user
# made in a shared root) does not keep the marker: gc must not fail for
# ever.
# Now the marker stays and gc exits 125; the next gc with room finishes
# the run: no staging copy, its record closed once, one index line.  As
# root and as an unprivileged user, each in a workspace root of its own.
. "$(dirname "$0")/../integration/lib.sh"
sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/short-skill
mkbundle "$B"
chmod -R a+rX "$T"
N=3

# bases UID: the tmpfs staging bases UID's runs may use (an ordinary
# user's own session may have XDG_RUNTIME_DIR).  copies UID PREFIX: how
# many staging copies of runs PREFIX* are in them.
bases() { echo "/dev/shm/skillrun-$1" ${XDG_RUNTIME_DIR:+"$XDG_RUNTIME_DIR/skillrun"}; }
copies() {
  # shellcheck disable=SC2046 # one word a base
  find $(bases "$1") -mindepth 1 -maxdepth 1 -name "*-default:$2*" 2>/dev/null | wc -l
}
index_lines() { grep -c " $2\$" "$1/.metrics/runs.log" 2>/dev/null; }

for mode in $MODES; do
  W=$(mode_workspace "$mode")
  if [ "$mode" = user ]; then pre=("${AS_USER[@]}") uid=$USER_UID; else pre=(env) uid=0; fi
  p=short-$$-
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "${p}seed" "$B" \
    -- /bin/true >/dev/null 2>&1
  is "$mode: a run that ends makes the runs index" "$?" 0

  # N runs killed (SIGKILL) while their skills sleep: each leaves its
  # marker, its record open and its staging copy on tmpfs.
  sups=()
  for i in $(seq $N); do
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$p$i" \
      --audit-file "$W/$p$i.audit" "$B" -- sleep 60 >/dev/null 2>&1 &
    sups+=($!)
  done
  for i in $(seq $N); do wait_running "$W/$p$i.audit"; done
  kill -KILL "${sups[@]}"
  wait "${sups[@]}" 2>/dev/null
  is "$mode: $N killed runs leave their staging copies on tmpfs" "$(copies $uid "$p")" $N

  # gc with too few descriptors, at a few limits: whatever it could not
  # do, it says so (125) and leaves for the next gc.
  for lim in 8 10 12 16; do
    "${pre[@]}" bash -c 'ulimit -n "$1" && exec "$2" --gc --workspace-root "$3"' - \
      "$lim" "$SKILLRUN" "$W" >"$W/gc.$lim" 2>&1
    rc=$?
    left=$(copies $uid "$p") markers=$(find "$W/.active" -name "default:$p*" | wc -l)
    if [ "$rc" -eq 0 ]; then
      is "$mode: gc under ulimit -n $lim exits 0: no staging copy is left" "$left" 0
      is "$mode: ... nor a marker" "$markers" 0
    else
      is "$mode: gc under ulimit -n $lim fails (125)" "$rc" 125
      is "$mode: ... leaving a marker for each staging copy it left ($left)" \
        "$((markers >= left))" 1
      check "$mode: ... saying what it could not do" \
        grep -qE "left for the next gc|cannot close the record" "$W/gc.$lim"
    fi
  done

  # The caller's own index locked past gc's wait: the run is closed, but
  # not counted, so its marker stays.
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "${p}L" \
    --audit-file "$W/${p}L.audit" "$B" -- sleep 60 >/dev/null 2>&1 &
  sup=$!
  wait_running "$W/${p}L.audit"
  kill -KILL $sup
  wait $sup 2>/dev/null
  hold_lock "$W/.metrics/runs.log" "${pre[@]}"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.locked" 2>&1
  is "$mode: gc with its own runs index locked fails (125)" "$?" 125
  check "$mode: ... keeps the uncounted run's marker" test -e "$W/.active/default:${p}L"
  check "$mode: ... saying it could not count it" grep -q "cannot count default/${p}L" "$W/gc.locked"
  kill "$holder"
  wait "$holder" 2>/dev/null

  # With room, and 2 s after the kills (gc leaves younger cgroup leaves).
  sleep 2
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.last" 2>&1
  is "$mode: gc with room then exits 0" "$?" 0
  is "$mode: ... no staging copy is left" "$(copies $uid "$p")" 0
  is "$mode: ... nor a marker" "$(find "$W/.active" -name "default:$p*" | wc -l)" 0
  for i in $(seq $N) L; do
    closed_ok "$mode: run $i" "$W/default/$p$i" abandoned
    is "$mode: run $i: ... counted once in the runs index" "$(index_lines "$W" "$p$i")" 1
  done
  # A .metrics another user made first in a shared root (1777, root's):
  # root's runs there go uncounted for good.  gc closes a dead one all the
  # same, rather than fail every time (a timer's --gc for ever).
  if [ "$mode" = root ] && [[ " $MODES " == *" user "* ]]; then
    S=$(tmpdir)
    chmod 1777 "$S"
    as_user mkdir -m 700 "$S/.metrics"
    "$SKILLRUN" --workspace-root "$S" --execution-id "${p}P" \
      --audit-file "$S/${p}P.audit" "$B" -- sleep 60 >/dev/null 2>&1 &
    sup=$!
    wait_running "$S/${p}P.audit"
    kill -KILL $sup
    wait $sup 2>/dev/null
    sleep 2 # gc leaves younger cgroup leaves
    for i in 1 2; do
      "$SKILLRUN" --gc --workspace-root "$S" >"$S/gc.$i" 2>&1
      is "root: gc $i in a shared root whose .metrics is another user's exits 0" "$?" 0
    done
    check "root: ... the first closed the run" grep -q "closed abandoned run default/${p}P" "$S/gc.1"
    check "root: ... saying it could not count it" grep -q "cannot count default/${p}P" "$S/gc.1"
    closed_ok "root: shared root" "$S/default/${p}P" abandoned
    find "/dev/shm/skillrun-0" -mindepth 1 -maxdepth 1 -name "*-default:${p}P" -exec rm -rf {} + 2>/dev/null
  fi

  # Whatever a failing build left on tmpfs goes with the test.
  # shellcheck disable=SC2046 # one word a base
  "${pre[@]}" find $(bases "$uid") -mindepth 1 -maxdepth 1 -name "*-default:$p*" \
    -exec rm -rf {} + 2>/dev/null
done

finish
