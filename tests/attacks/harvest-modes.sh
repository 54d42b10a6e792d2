#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the harvest and the modes a skill gives its
# outputs.  A file the skill left without read permission for its owner
# (0000), a directory without read or search permission (0000, 0300,
# 0600), or the outputs tmpfs's root closed with `chmod 0
# /workspace/outputs`, were harvested when root ran skillrun (which reads
# them anyway) but skipped as "unreadable" when an unprivileged user did:
# the run succeeded and its outputs were gone.  Now the harvest opens such
# an entry up for its owner on the outputs tmpfs first: every file is
# committed whoever runs skillrun, its event keeps the mode the skill gave
# it, and its copy is the caller's to read, never set-id.  As root and as
# an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# committed: "PATH MODE SIZE SHA256" of each artifact_committed, sorted.
committed() {
  "$JQ" -r 'select(.event == "artifact_committed") | "\(.path) \(.mode) \(.size) \(.sha256)"' "$AUDIT" | sort
}
sha() { printf '%s\n' "$1" | sha256sum | cut -d' ' -f1; }

for mode in $MODES; do
  skill $mode -- /bin/sh -c '
    cd /workspace/outputs || exit 1
    echo f0 >f0000 && chmod 0 f0000
    echo w >wronly && chmod 0200 wronly
    mkdir d000 d300 d600 && echo a >d000/in && echo b >d300/in && echo c >d600/in
    chmod 0 d000 && chmod 0300 d300 && chmod 0600 d600
    echo s >suid && chmod 6755 suid
    chmod 0 /workspace/outputs
  '
  run_ok $mode "outputs the skill closed to their owner"
  is "$mode: ... every file is committed, with the mode the skill gave it" \
    "$(committed | tr '\n' ';')" \
    "d000/in 0644 2 $(sha a);d300/in 0644 2 $(sha b);d600/in 0644 2 $(sha c);f0000 0000 3 $(sha f0);suid 6755 2 $(sha s);wronly 0200 2 $(sha w);"
  is "$mode: ... none is skipped as unreadable" \
    "$("$JQ" -r 'select(.event == "warning" and .skipped == "unreadable") | .path' "$AUDIT")" ""
  o=$(dirname "$(dirname "$OUT")")/outputs
  check "$mode: ... the copies are the caller's to read" \
    in_mode $mode sh -c "cat '$o/f0000' '$o/wronly' '$o/d000/in' '$o/d300/in' '$o/d600/in' >/dev/null"
  is "$mode: ... with the skill's restriction, never set-id" \
    "$(cd "$o" && stat -c '%n %a' f0000 wronly d000 d300 d600 suid | tr '\n' ';')" \
    "f0000 600;wronly 600;d000 700;d300 700;d600 700;suid 755;"
  is "$mode: ... and the run is closed, succeeded" \
    "$(last "$AUDIT") $(meta_status "$(dirname "$o")")" "$(printf 'execution_completed\tsucceeded') succeeded"
  host_unchanged $mode
done
finish
