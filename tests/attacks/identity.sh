#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, identity not names (issue 14, item 1): what init
# mounts from the host side (the staged bundle, the staged inputs,
# metadata.json) is the very object the supervisor created and hashed.
# The racing local user: as soon as the run's staging is complete, a racer
# renames the run directory away and puts a prepared one in its place,
# whose staging/bundle/run.sh prints FOREIGN.  Before the fix init
# re-resolved the path, and the pinned run exited 0 with "pinned": true
# and the attacker's code.  Now every run either ran the verified bytes or
# was refused with layer_failed; none ran foreign code.  Many attempts, as
# root and as an unprivileged user (the racer has the caller's uid: the
# tenant directory is the caller's own, item 2).
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

RUNS=${SKILLRUN_ATTACK_SWAP_RUNS:-100}

G=$T/swap-skill
mkbundle "$G"
printf '#!/bin/sh\necho GENUINE\n' >"$G/run.sh"
chmod 755 "$G/run.sh"
echo "input" >"$T/in.txt"
# The attacker's staging tree, complete: a bundle with a run.sh of its own,
# the input, a metadata.json.
F=$T/fake-template
mkdir -p "$F/staging/bundle" "$F/staging/inputs"
cp "$G/SKILL.md" "$F/staging/bundle/"
printf '#!/bin/sh\necho FOREIGN\n' >"$F/staging/bundle/run.sh"
chmod 755 "$F/staging/bundle/run.sh"
cp "$T/in.txt" "$F/staging/inputs/in.txt"
echo '{}' >"$F/staging/metadata.json"
chmod -R a+rX "$T"
pin=$("$SKILLRUN" --digest "$G" | cut -d' ' -f1)
pin=${pin#sha256:}

for mode in root user; do
  if [ $mode = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(env); fi
  ran=0 refused=0 foreign=0 other=0 swapped=0
  for i in $(seq "$RUNS"); do
    id=swap-$mode-$i
    # The run directory's tenant is the caller's: the racer is the caller.
    "${pre[@]}" mkdir -p "$w/default"
    "${pre[@]}" cp -r "$F" "$w/default/fake-$i"
    "${pre[@]}" "$ATTACKER" host-swap "$w/default/$id" "$w/default/fake-$i" >"$w/racer-$i" &
    racer=$!
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" --audit-file "$w/$id.audit" \
      --expect-sha256 "$pin" -i "$T/in.txt" "$G" -- ./run.sh >/dev/null 2>"$w/$id.err"
    rc=$?
    # A racer that has not swapped by now missed this run: it would poll
    # on for 30 s.
    kill -KILL "$racer" 2>/dev/null
    wait "$racer"
    grep -q swapped "$w/racer-$i" && swapped=$((swapped + 1))
    out=$(cat "$w/default/$id.moved/logs/stdout.log" "$w/default/$id/logs/stdout.log" 2>/dev/null)
    case "$rc:$out" in
    *FOREIGN*)
      foreign=$((foreign + 1))
      diag "$mode run $i: exit $rc, FOREIGN code ran (pinned: $(field "$w/$id.audit" bundle_verified .pinned))"
      ;;
    0:GENUINE) ran=$((ran + 1)) ;;
    125:)
      # Refused by the mount layer: the object found is not the one
      # staged, or (the racer between its two renames) none is there.
      if [ "$(field "$w/$id.audit" layer_failed .layer)" = mount ] &&
        grep -Eq "not what skillrun staged|open (the bundle|the staged inputs|metadata) " "$w/$id.err"; then
        refused=$((refused + 1))
      else
        other=$((other + 1))
        diag "$mode run $i: exit 125: $(head -c 300 "$w/$id.err")"
      fi
      ;;
    *)
      other=$((other + 1))
      diag "$mode run $i: exit $rc, output '$out': $(head -c 300 "$w/$id.err")"
      ;;
    esac
  done
  diag "$mode: $RUNS racing runs, $swapped swapped: $ran ran the verified bytes, $refused refused (layer_failed), $foreign foreign, $other other"
  is "$mode: no run ever ran the attacker's code" "$foreign" 0
  is "$mode: every run ran the verified bytes or was refused with layer_failed" "$other" 0
  check "$mode: the racer did get in ($swapped of $RUNS swaps)" [ "$swapped" -gt 0 ]
  check "$mode: ... and some swaps came before the sandbox was built ($refused refused)" \
    [ "$refused" -gt 0 ]
done
host_unchanged identity
finish
