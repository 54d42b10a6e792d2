#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, nothing left to read (issue 14, item 8): init,
# pid 1 inside, is a clone of the supervisor, and /proc/1/cmdline used to
# show the skill the caller's whole command line (workspace root, tenant,
# execution id, bundle and input paths) for as long as the run lasted.
# Now it reads "skillrun-init", and init's environment area is wiped.  Nor
# can the skill poke init: prlimit64 on pid 1 (init runs as the same
# user) used to succeed; only a process's own limits (pid 0) may be read
# or lowered now.  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

echo "input" >"$T/input-$$.txt"
chmod 644 "$T/input-$$.txt"

for mode in root user; do
  if [ $mode = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(env); fi
  tenant=tenant-$mode-$$ id=exec-$mode-$$
  "${pre[@]}" env SKILLRUN_BAIT="bait-$$" "$SKILLRUN" --workspace-root "$w" --tenant "$tenant" \
    --execution-id "$id" --audit-file "$w/$id.audit" -i "$T/input-$$.txt" "$B" -- /bin/sh -c '
      printf "cmdline="; tr "\0" " " </proc/1/cmdline; echo
      printf "environ="; tr "\0" " " </proc/1/environ 2>/dev/null; echo' \
    >/dev/null 2>"$w/$id.err"
  is "$mode: the run exits 0" "$?" 0
  out=$(cat "$w/$tenant/$id/logs/stdout.log" 2>/dev/null)
  cmdline=$(sed -n 's/^cmdline=//p' <<<"$out")
  is "$mode: /proc/1/cmdline reads skillrun-init" "$(tr -s ' ' <<<"$cmdline" | sed 's/ $//')" skillrun-init
  for leak in "$w" "$tenant" "$id" "$B" "input-$$" "bait-$$"; do
    check "$mode: ... '$leak' appears nowhere in pid 1's command line or environment" \
      not grep -qF -- "$leak" <<<"$out"
  done

  attack $mode -- prlimit
  run_ok $mode "prlimit on pid 1"
  blocked $mode prlimit
done
host_unchanged pid1
finish
