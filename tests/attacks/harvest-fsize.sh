#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the harvest under the caller's file-size limit.
# A caller with a soft ulimit -f (SIGXFSZ ignored, so a write past it fails
# with EFBIG) whose skill raised its own soft limit and left an output
# larger than that: the harvest's copy failed with EFBIG, which it took for
# outputs-size, so the run "succeeded" with a limit_exceeded event naming
# outputs-size (256 MiB) at a 5 MB file, the output dropped and the rest
# of the harvest stopped.  Now only a source longer than outputs-size is
# that cap; a copy the host refuses is a failed harvest, as on a full disk:
# one line naming the file, exit 125, the run closed as an error, nothing
# cut short left in outputs/.  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# 4 MiB (more than the bundle, whose copy it also holds), soft only: the
# skill may raise its own to the hard limit.
CALLER=(bash -c 'ulimit -S -f 4096 && exec "$@"' -)
for mode in $MODES; do
  skill $mode -- /bin/sh -c '
    ulimit -f unlimited || exit 1
    head -c 5000000 /dev/zero >/workspace/outputs/big || exit 1
  '
  is "$mode: an output past the caller's ulimit -f: skillrun exits 125" "$rc" 125
  check "$mode: ... audit verifies" audit_ok "$AUDIT"
  check "$mode: ... one line names the output and why" \
    sh -c "[ \"\$(wc -l <'$ERR')\" = 1 ] && grep -q 'outputs/big.*File too large' '$ERR'"
  is "$mode: ... not taken for outputs-size" \
    "$("$JQ" -r 'select(.event == "limit_exceeded") | .key' "$AUDIT")" ""
  r=$(dirname "$(dirname "$OUT")")
  check "$mode: ... nothing cut short is left in outputs/" test ! -e "$r/outputs/big"
  is "$mode: ... the run is closed as an error" \
    "$(last "$AUDIT") $(meta_status "$r")" "$(printf 'execution_completed\terror') error"
done
CALLER=()
finish
