#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, gc and another user's runs index: root's --gc
# over a user's workspace root reads the user's index
# ({root}/.metrics/runs.log) once per pass, into a hash set of its
# "tenant, execution id" pairs, to count each dead run exactly once.  The
# user writes that index: with an unkeyed hash (FNV-1a, whose low bits
# depend only on the low bits of its state), they could write ids that
# all fall in one slot, and every line then probed through all those
# before it: 65536 such lines (7 MB) kept root's --gc busy for 16 s, four
# times as many for four minutes, a hundred MB for hours.  The set's hash is keyed
# now, with a key the user cannot know.  And of an index larger than
# 16 MiB gc reads only the end, so that a sparse one is no cost either.
. "$(dirname "$0")/../integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: the index's writer is another user than root's --gc"
skip_modes
[[ " $MODES " == *" user "* ]] || { finish; exit 0; }
sandbox_possible || skip_all "user namespaces are not available"
command -v python3 >/dev/null || skip_all "python3 makes the colliding ids"

T=$(tmpdir)
B=$T/flood-skill
mkbundle "$B"
chmod -R a+rX "$B"

# LINES index lines whose "t\037ID" keys share the low 24 bits of FNV-1a
# (the offset basis skillrun used): 16 blocks of 4 characters (an id has
# at most 64), each one of two that collide from the state before it (a
# multicollision).
cat >"$T/flood.py" <<'EOP'
import itertools, random, sys
MASK, P = (1 << 24) - 1, 1099511628211
ALPHA = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
def step(h, s):
    for c in s:
        h = ((h ^ c) * P) & MASK
    return h
def pair(h):
    seen, rnd = {}, random.Random(h)
    while True:
        b = bytes(rnd.choice(ALPHA) for _ in range(4))
        x = step(h, b)
        if x in seen and seen[x] != b:
            return seen[x], b, x
        seen[x] = b
h, blocks = step(1469598103934665603 & MASK, b"t\x1f"), []
for _ in range(int(sys.argv[1])):
    a, b, h = pair(h)
    blocks.append((a, b))
out = sys.stdout.buffer
for combo in itertools.product(*blocks):
    out.write(b"1 1700000000 t - succeeded - - - - - - - " + b"".join(combo) + b"\n")
EOP

# The user's root: a finished run, its index line dropped and its ledger
# linked back into .active (a supervisor killed after its last event), so
# that gc must look the run up in the index; then the colliding lines.
W=$(user_workspace)
as_user "$SKILLRUN" --workspace-root "$W" --execution-id dead "$B" \
  -- /bin/true >/dev/null 2>&1
is "the user's own run exits 0" "$?" 0
python3 "$T/flood.py" 16 >"$T/flood.log"
chmod a+r "$T/flood.log"
as_user sh -c 'cd "$1" && ln default/dead/audit.jsonl .active/default:dead &&
  sed -i "/ dead$/d" .metrics/runs.log && cat "$2" >>.metrics/runs.log' \
  sh "$W" "$T/flood.log"
is "... and an index of 65536 colliding lines" "$(wc -l <"$W/.metrics/runs.log")" 65536

t0=$(date +%s%N)
timeout 120 "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc.out" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "root's --gc closes the dead run" "$rc:$(tail -n 1 "$T/gc.out")" \
  "0:gc: 1 dead run(s) cleaned under $(realpath "$W")"
check "... in a few seconds at most (${ms} ms)" [ "$ms" -lt 5000 ]
is "... counting it once" "$(grep -c ' dead$' "$W/.metrics/runs.log")" 1

# A sparse index costs its owner no disk: 32 GB of zeros after the lines
# took root's --gc 100 s of reading (16 GB, 50 s).  gc reads the last
# 16 MiB of an index at most.
as_user "$SKILLRUN" --workspace-root "$W" --execution-id dead2 "$B" \
  -- /bin/true >/dev/null 2>&1
is "another run of the user's exits 0" "$?" 0
as_user sh -c 'cd "$1" && ln default/dead2/audit.jsonl .active/default:dead2 &&
  sed -i "/ dead2$/d" .metrics/runs.log && truncate -s +32G .metrics/runs.log' \
  sh "$W"
if [ "$(stat -c %s "$W/.metrics/runs.log")" -gt 34000000000 ]; then
  t0=$(date +%s%N)
  timeout 60 "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc.out" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  is "... a 32 GB sparse index: root's --gc closes the dead run" \
    "$rc:$(tail -n 1 "$T/gc.out")" "0:gc: 1 dead run(s) cleaned under $(realpath "$W")"
  check "... without reading it all (${ms} ms)" [ "$ms" -lt 5000 ]
  # Root's --metrics (a scraper's timer) reads the owner's index whole:
  # before, all 32 GB of its hole.  A hole is passed over (SEEK_DATA), as
  # one line that is no record.
  t0=$(date +%s%N)
  timeout 60 "$SKILLRUN" --metrics --workspace-root "$W" >"$T/metrics.out" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  is "... root's --metrics over that index exits 0" "$rc" 0
  check "... without reading its hole (${ms} ms)" [ "$ms" -lt 5000 ]
  is "... the hole one line skipped" \
    "$(sed -n 's/^skillrun_metrics_index_skipped //p' "$T/metrics.out")" 1
  is "... every line before it counted (65,536 colliding, the user's)" \
    "$(sed -n 's/^skillrun_metrics_index_records //p' "$T/metrics.out")" \
    "$(wc -l <"$W/.metrics/runs.log")"
else
  pass "# SKIP a sparse index: this file system cannot make a 32 GB file"
fi

finish
