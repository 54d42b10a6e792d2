#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, mount propagation: a host path the profile binds
# (bind-ro) sits on a shared mount, and while the skill runs, someone on the
# host mounts a filesystem under it carrying a device node and a set-user-ID
# file.  The sandbox's clone of that path used to stay a slave of the
# host's, so the new mount appeared inside the running sandbox without the
# view's read-only, nosuid and nodev (only Landlock still refused writes).
# The view is private now: the skill sees the empty directory it had, no
# new mount in its table, no device, no set-user-ID file; every mount of
# its table shows no propagation (init also checks that before the skill
# starts, src/mount.c verify_mountinfo).  As root and as uid 65534.
# Root only: the shared mount is made with unshare -m, in a private mount
# namespace of the test's; nothing of it reaches the host.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root: it mounts on the host side while a skill runs (in a private mount namespace, unshare -m)"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
. "$(dirname "$0")/common.sh"

mkdir "$T/shared"
printf 'bind-ro %s /opt/shared\nbind-ro-try /etc/alternatives\n' "$T/shared" >"$T/shared.profile"
chmod 644 "$T/shared.profile"
nap="7.$$"
for mode in $MODES; do
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  echo "$w" >"$T/$mode.ws"
done

# One namespace for both modes: the skill waits in `sleep`; the host side
# then mounts under the shared path and ends the sleep; the skill reports
# what it sees.
# shellcheck disable=SC2016 # expanded by the inner shells
SKILLRUN=$SKILLRUN B=$B T=$T MODES=$MODES nap=$nap JQ=$JQ AS_USER_WORDS="${AS_USER[*]}" \
  unshare -m --propagation private bash -c '
  mount -t tmpfs -o size=64k,mode=0755 sr-shared "$T/shared" || exit 9
  mount --make-shared "$T/shared" || exit 9
  mkdir "$T/shared/late"
  for mode in $MODES; do
    pre=()
    [ "$mode" = user ] && read -r -a pre <<<"$AS_USER_WORDS"
    w=$(cat "$T/$mode.ws")
    id=prop-$mode
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
      --audit-file "$w/$id.audit" -p "$T/shared.profile" "$B" -- /bin/sh -c "
        sleep \"\$1\" || true
        awk '\''\$5 ~ \"^/opt/shared\" { print \"mount\", \$5, \$6 }'\'' /proc/self/mountinfo
        [ -e /opt/shared/late/marker ] && echo marker
        [ -e /opt/shared/late/null ] && echo device
        [ -e /opt/shared/late/suid ] && echo suid
        awk '\''{ sub(/ - .*/, \"\"); n = split(\$0, f, \" \");
                 for (i = 7; i <= n; i++) print \"propagation\", \$5, f[i] }'\'' /proc/self/mountinfo
        true" - "$nap" >/dev/null 2>"$w/$id.err" &
    sup=$!
    for _ in $(seq 600); do
      [ "$("$JQ" -r "select(.event == \"state_changed\") | .state" "$w/$id.audit" 2>/dev/null | tail -n 1)" = running ] &&
        pgrep -x -f "sleep $nap" >/dev/null && break
      sleep 0.05
    done
    pgrep -x -f "sleep $nap" >"$T/$mode.spid"
    # The late mount: a tmpfs allowing devices and set-user-ID files.
    mount -t tmpfs -o size=64k,mode=0755,dev,suid "sr-late-$mode" "$T/shared/late" || exit 9
    echo late >"$T/shared/late/marker"
    mknod "$T/shared/late/null" c 1 3
    cp /bin/true "$T/shared/late/suid" && chmod 4755 "$T/shared/late/suid"
    # The skill must still be sleeping: otherwise it looked before the
    # mount and the test proves nothing.
    pkill -x -f "sleep $nap"
    echo $? >"$T/$mode.pkill"
    wait "$sup"
    echo $? >"$T/$mode.rc"
    umount "$T/shared/late"
  done
'
is "the host side set up its shared mount" "$?" 0
for mode in $MODES; do
  w=$(cat "$T/$mode.ws")
  id=prop-$mode
  out=$w/default/$id/logs/stdout.log
  check "$mode: the skill was running when the host mounted" test -s "$T/$mode.spid"
  is "$mode: ... and still waiting once the mount was made" "$(cat "$T/$mode.pkill" 2>/dev/null)" 0
  is "$mode: the run exits 0" "$(cat "$T/$mode.rc" 2>/dev/null)" 0
  check "$mode: ... and the skill saw its bind of the shared path" \
    grep -q '^mount /opt/shared ' "$out"
  is "$mode: the host's later mount does not reach the sandbox" \
    "$(grep -E '^mount /opt/shared/|^marker$' "$out")" ""
  is "$mode: ... nor its device node or set-user-ID file" \
    "$(grep -E '^(device|suid)$' "$out")" ""
  is "$mode: no mount of the sandbox takes part in propagation" \
    "$(grep '^propagation ' "$out")" ""
  check "$mode: ... and its audit verifies" audit_ok "$w/$id.audit"
done
host_unchanged propagation
finish
