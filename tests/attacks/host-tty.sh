#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the host's /dev/tty seen from the sandbox: the
# view's device nodes are the host's own inodes, and an inotify(7) watch
# is on the inode, so a skill watching a /dev/tty bound from the host saw
# each read and write that any host process made through its own
# terminal (one event per byte of a password that ssh or sudo reads a
# byte at a time).  The view has no /dev/tty: the watch must fail.  As
# root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

command -v script >/dev/null || skip_all "script(1) (bsdutils) is not installed"

# A host process with a terminal of its own (script(1) makes one) writes
# a prompt to it through /dev/tty.
host_tty_use() {
  script -qec "sh -c 'printf prompt >/dev/tty'" /dev/null </dev/null >/dev/null 2>&1
}

for mode in $MODES; do
  if [ "$mode" = user ]; then w=$WS_user as=("${AS_USER[@]}"); else
    w=$WS_root as=(); fi
  RUN_ID=tty-$mode
  AUDIT=$w/$RUN_ID.audit ERR=$w/$RUN_ID.err STDOUT=$w/$RUN_ID.stdout
  OUT=$w/default/$RUN_ID/logs/stdout.log
  "${as[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$RUN_ID" \
    --audit-file "$AUDIT" "$B" -- /workspace/inputs/bundle/attacker ttywatch:10 \
    >"$STDOUT" 2>"$ERR" &
  pid=$!
  # Until the skill watches /dev/tty, or its run is over (it could not).
  watching=no
  for _ in $(seq 400); do
    if grep -q '^ttywatch: watching' "$OUT" 2>/dev/null; then watching=yes; break; fi
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
  done
  host_tty_use
  wait $pid
  rc=$?
  [ -f "$OUT" ] || OUT=/dev/null
  run_ok "$mode" "a watch of /dev/tty"
  is "$mode: the skill could not watch a /dev/tty" "$watching" no
  blocked "$mode" ttywatch:10
  is "$mode: ... which the view does not have" "$(result ttywatch:10)" "BLOCKED:watch /dev/tty:ENOENT"
done
finish
