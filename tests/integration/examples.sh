#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's example skills run, as root and as an unprivileged user
# (lib.sh $MODES).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
cp -r "$TOP_SRCDIR/examples" "$T/"
chmod -R a+rX "$T"
E=$T/examples
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id hello "$E/hello" >"$W/a.hello" 2>"$W/err"
  is "$mode: examples/hello exits 0" "$?" 0
  check "$mode: hello read its bundle" grep -q "Hello from a verified skill bundle" "$W/default/hello/logs/stdout.log"
  check "$mode: hello wrote its artifact" grep -q "written by hello" "$W/default/hello/outputs/hello.txt"

  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id scorer -p "$SKILLRUN_PROFILE_PATH/python.profile" \
    -i "$E/sample-inputs/design-notes.txt" -i "$E/sample-inputs/meeting.txt" "$E/document-scorer" \
    >"$W/a.scorer" 2>"$W/err"
  is "$mode: examples/document-scorer exits 0" "$?" 0
  is "$mode: the scores CSV ranks both inputs" \
    "$(cut -d, -f1 "$W/default/scorer/outputs/scores.csv" 2>/dev/null | tr '\n' ' ')" \
    "document design-notes.txt meeting.txt "
  check "$mode: both audits verify" audit_ok "$W/a.scorer"
done
finish
