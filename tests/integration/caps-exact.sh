#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A limit is "at most": exactly at a cap passes, one over fails
# (skillrun.profile(5)).  outputs-size and outputs-files at cap-1, cap and
# cap+1: a skill that wrote exactly outputs-size bytes or made exactly
# outputs-files entries used to be reported as having filled its outputs
# tmpfs (limit_exceeded in_sandbox:true, ENOSPC it never met), as the
# tmpfs was exactly the cap.  log-cap, inputs-size and inputs-max-size
# the same way.  As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/caps-skill
mkbundle "$B"
printf 'include default\noutputs-size 1M\noutputs-files 5\ninputs-size 8K\ninputs-max-size 4K\n' \
  >"$T/caps.profile"
for n in 4095 4096 4097; do head -c $n /dev/zero >"$T/in$n"; done
cp "$T/in4096" "$T/in4096b"
chmod -R a+rX "$T"
CAP=1048576

# run MODE [OPTION...] -- COMMAND...: one run with the caps' profile; its
# audit stream in $A.
run() {
  local mode=$1 opts=()
  shift
  while [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  A=$(mktemp "$T/audit.XXXXXX")
  chmod 666 "$A"
  in_mode "$mode" "$SKILLRUN" --workspace-root "$(mode_workspace "$mode")" \
    -p "$T/caps.profile" "${opts[@]}" "$B" -- "$@" >"$A" 2>/dev/null
  rc=$?
}
# limits: the limit_exceeded events, one "limit key in_sandbox path" a line.
limits() { "$JQ" -r 'select(.event == "limit_exceeded") | "\(.limit) \(.key) \(.in_sandbox) \(.path)"' "$A" | tr '\n' ';'; }
# kept: execution_completed's stdout figures, "kept dropped".
kept() { "$JQ" -r 'select(.event == "execution_completed") | "\(.logs.stdout.kept) \(.logs.stdout.dropped)"' "$A"; }
artifacts() { "$JQ" -r 'select(.event == "artifact_committed") | "\(.path) \(.size)"' "$A" | tr '\n' ';'; }

for mode in $MODES; do
  # outputs-size: one file of cap-1, cap and cap+1 bytes.
  for n in $((CAP - 1)) $CAP; do
    run $mode -- /bin/sh -c "head -c $n /dev/zero >/workspace/outputs/f"
    is "$mode: an output of $n bytes (outputs-size $CAP) succeeds" "$rc" 0
    is "$mode: ... no limit is reported" "$(limits)" ""
    is "$mode: ... and it is harvested whole" "$(artifacts)" "f $n;"
  done
  run $mode -- /bin/sh -c "head -c $((CAP + 1)) /dev/zero >/workspace/outputs/f"
  check "$mode: an output one byte over outputs-size is stopped at the cap, named" \
    grep -q '^output outputs-size null f$' <<<"$(limits | tr ';' '\n')"
  is "$mode: ... and not harvested" "$(artifacts)" ""

  # outputs-files: 4, 5 and 6 entries.
  for n in 4 5; do
    run $mode -- /bin/sh -c "cd /workspace/outputs && for i in \$(seq $n); do : >f\$i || exit 1; done"
    is "$mode: $n entries (outputs-files 5) succeed" "$rc" 0
    is "$mode: ... no limit is reported" "$(limits)" ""
    is "$mode: ... and all are harvested" "$("$JQ" -r 'select(.event == "artifact_committed") | .path' "$A" | wc -l)" "$n"
  done
  run $mode -- /bin/sh -c 'cd /workspace/outputs && for i in 1 2 3 4 5 6; do : >f$i; done'
  check "$mode: 6 entries are stopped at outputs-files" \
    grep -q '^output outputs-files null f' <<<"$(limits | tr ';' '\n')"
  is "$mode: ... after 5" "$("$JQ" -r 'select(.event == "artifact_committed") | .path' "$A" | wc -l)" 5

  # log-cap: stdout of cap-1, cap and cap+1 bytes.
  for n in 65535 65536; do
    run $mode --log-cap 64K -- /bin/sh -c "head -c $n /dev/zero"
    is "$mode: $n bytes of log (log-cap 64K) are not truncated" \
      "$("$JQ" -r 'select(.event == "log_truncated" or .event == "limit_exceeded") | .event' "$A")" ""
    # Not only no event: the run completed and kept every byte.
    is "$mode: ... all $n are kept" "$rc $(kept)" "0 $n 0"
  done
  run $mode --log-cap 64K -- /bin/sh -c "head -c 65537 /dev/zero"
  is "$mode: 65537 bytes of log are truncated at the cap" \
    "$("$JQ" -r 'select(.event == "log_truncated") | .cap' "$A")" 65536
  is "$mode: ... 65536 kept, 1 dropped" "$(kept)" "65536 1"

  # inputs-max-size 4K, inputs-size 8K.
  for n in 4095 4096; do
    run $mode --input "$T/in$n" -- /bin/true
    is "$mode: an input of $n bytes (inputs-max-size 4K) is taken" "$rc" 0
  done
  run $mode --input "$T/in4097" -- /bin/true
  is "$mode: one of 4097 bytes is refused" \
    "$rc $("$JQ" -r 'select(.event == "input_rejected") | .limit' "$A")" "123 4096"
  run $mode --input "$T/in4096" --input "$T/in4096b" -- /bin/true
  is "$mode: inputs of 8192 bytes in all (inputs-size 8K) are taken" "$rc" 0
  run $mode --input "$T/in4096" --input "$T/in4096b" --input "$T/in4095" -- /bin/true
  is "$mode: 8192+4095 bytes are refused" \
    "$rc $("$JQ" -r 'select(.event == "input_rejected") | .limit' "$A")" "123 8192"
done
finish
