#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, private run data (issue 14, item 3): the staged
# bundle and inputs, outputs, logs, metadata.json and audit.jsonl of a run
# are readable by its caller and by the sandbox's own uid, by no other
# local user, by any path: the run directory, the tmpfs staging base, a
# path learnt from mountinfo; nor is --audit-file's copy of the record,
# even by a user of the caller's group.  Copies keep the source's restriction (a 0600
# input stays 0600; it used to become 0644), and a root run gives the pool
# uid access by ownership, not by world permissions.  Another user tries,
# during the run and after it; the skill itself reads its 0600 input.  A
# root caller with umask 077 still runs on the first use of a new tenant.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

P=$T/private-skill
mkbundle "$P"
echo "bundle secret $$" >"$P/secret.txt"
chmod 600 "$P/secret.txt"
echo "input secret $$" >"$T/secret-in.txt"
chmod 600 "$T/secret-in.txt"
cp "$T/secret-in.txt" "$T/secret-user.txt"
chown "$NOBODY" "$T/secret-user.txt" "$P/secret.txt"
chmod a+rx "$T" "$P"
nap="7.$$"

# snoop AS PATH...: as uid AS, read each PATH; prints the ones it could.
# AS may be UID:GID, another user of the caller's group (a shared
# "users" group).
snoop() {
  local as=${1%%:*} group=${1#*:}
  shift
  setpriv --reuid="$as" --regid="$group" --clear-groups -- sh -c \
    'for f; do [ -f "$f" ] && cat "$f" >/dev/null 2>&1 && echo "$f"; done; exit 0' - "$@"
}

for mode in root user; do
  if [ $mode = user ]; then
    w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)
    spy=$((NOBODY - 1)) in=$T/secret-user.txt
  else
    w=$WS_root pre=(env) spy=$NOBODY in=$T/secret-in.txt
  fi
  for staging in run tmpfs; do
    id=p-$mode-$staging
    opts=()
    # Inputs put staging in the run directory; without them a small bundle
    # is staged on a tmpfs.
    [ $staging = run ] && opts=(-i "$in:secret-in.txt")
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" --audit-file "$w/$id.audit" \
      "${opts[@]}" "$P" -- /bin/sh -c '
        cat /workspace/inputs/bundle/secret.txt >/workspace/outputs/copy.txt
        [ ! -e /workspace/inputs/secret-in.txt ] || {
          cat /workspace/inputs/secret-in.txt >>/workspace/outputs/copy.txt
          stat -c "input mode %a" /workspace/inputs/secret-in.txt
        }
        chmod 600 /workspace/outputs/copy.txt
        echo "log line"; sleep "$1" || true' - "$nap" >/dev/null 2>"$w/$id.err" &
    sup=$!
    for _ in $(seq 600); do
      [ "$(field "$w/$id.audit" state_changed .state 2>/dev/null)" = running ] && break
      sleep 0.05
    done
    run=$w/default/$id
    st=$(field "$w/$id.audit" bundle_verified .staging)
    # "running" is said as the skill starts: its sleep comes a few commands
    # later, which a loaded machine may not have reached yet.
    spid=
    for _ in $(seq 200); do
      spid=$(pgrep -f -x "sleep $nap" | head -n 1)
      [ -n "$spid" ] && break
      sleep 0.05
    done
    # The source path of the bundle's bind, as mountinfo shows it.
    learnt=
    [ -n "$spid" ] && learnt=$(awk 'index($5, "/workspace/skills/") == 1 { print $4 }' "/proc/$spid/mountinfo" 2>/dev/null)
    during=$(snoop "$spy" "$st/bundle/secret.txt" "$st/bundle/SKILL.md" "$st/inputs/secret-in.txt" \
      "$st/metadata.json" "$run/audit.jsonl" "$run/logs/stdout.log" \
      ${learnt:+"$learnt/secret.txt"} \
      ${spid:+"/proc/$spid/root/workspace/inputs/bundle/secret.txt"})
    is "$mode, staging in $staging: uid $spy reads nothing of the run while it runs" "$during" ""
    check "$mode, staging in $staging: ... (the run was running: pid ${spid:-none})" test -n "$spid"
    pkill -f -x "sleep $nap"
    wait $sup
    is "$mode, staging in $staging: the run exits 0 (the skill read its own files)" "$?" 0
    after=$(snoop "$spy" "$run/outputs/copy.txt" "$run/logs/stdout.log" "$run/metadata.json" \
      "$run/audit.jsonl")
    is "$mode, staging in $staging: ... nor after it" "$after" ""
    # --audit-file's copy is the same record: 0600 as audit.jsonl, which
    # another user of the caller's group reads no more than a stranger
    # (it was made 0640).
    is "$mode, staging in $staging: --audit-file's copy is 0600" "$(stat -c %a "$w/$id.audit")" 600
    group=$("${pre[@]}" id -g)
    after=$(snoop "$spy:$group" "$w/$id.audit" "$run/audit.jsonl" "$run/metadata.json")
    is "$mode, staging in $staging: ... uid $spy of the caller's group $group reads no record" "$after" ""
    check "$mode, staging in $staging: the skill had its bundle file" \
      grep -q "bundle secret $$" "$run/outputs/copy.txt"
    if [ $staging = run ]; then
      check "$mode: ... and its 0600 input" grep -q "input secret $$" "$run/outputs/copy.txt"
      is "$mode: ... which kept its mode 0600 in the sandbox" \
        "$(grep '^input mode' "$run/logs/stdout.log")" "input mode 600"
    fi
    is "$mode, staging in $staging: the run directory is 0700" "$(stat -c %a "$run")" 700
  done
done

# A root caller with umask 077, on the first use of a new tenant.
(umask 077 && "$SKILLRUN" --workspace-root "$WS_root" --tenant fresh-077 --execution-id u1 \
  -i "$T/secret-in.txt" "$P" -- /bin/sh -c 'cat /workspace/inputs/bundle/secret.txt /workspace/inputs/secret-in.txt' \
  >/dev/null 2>"$T/u1.err")
is "root with umask 077: the first run of a new tenant exits 0" "$?" 0
check "root with umask 077: ... and the skill read its files" \
  grep -q "input secret $$" "$WS_root/fresh-077/u1/logs/stdout.log"
host_unchanged private
finish
