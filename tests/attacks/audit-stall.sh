#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a stalled audit stream: policy_resolved is
# written while the sandbox's init builds the mounts (issue 20).  A reader
# of skillrun's stdout that stops taking lines (a pipe of one page, a
# reader asleep) holds that write for up to 5 s, and for a while the
# skill's process was let go meanwhile: it ran before its timers were
# armed (a --timeout 2s skill of 3 s ended "succeeded"), and when the
# write then failed the record said the skill never ran while it had run
# for 5 s.  Now init lets the skill go only after the supervisor says the
# record is written and the timers run (SR_SYNC_RECORDED).  As root and as
# an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# Two pipe pages must be 8 KiB for the stall to fall on policy_resolved.
[ "$(getconf PAGESIZE)" = 4096 ] ||
  skip_all "pages of $(getconf PAGESIZE) bytes: the test's pipe sizes assume 4096"
. "$(dirname "$0")/common.sh"

# stalled MODE SECONDS TAG OUT [SKILLRUN-OPTION...]: runs the bundle with its
# stdout on a pipe with room for the events before policy_resolved but not
# for it, whose reader sleeps SECONDS (0: until skillrun exits) before it
# reads, skillrun run under the command in $PRE if any,
# the skill `sleep 3.TAG; sleep 1; date > outputs/finished` (it first
# writes the time it started to outputs/started).  While the reader
# sleeps, the harness looks for the skill's `sleep 3.TAG` among the host's
# processes.  Sets $rc, $W, $ID, $SEEN (seconds into the stall the skill
# was first seen, or "never") and $TAKEN (the time the reader began to
# read, seconds since the epoch); what the stream got is in $W/$ID.OUT.
stalled() {
  local mode=$1 secs=$2 tag=$3 out=$4 report
  shift 4
  _run_n=$((_run_n + 1))
  if [ "$mode" = user ]; then W=$WS_user; else W=$WS_root; fi
  ID=stall$_run_n
  local cmd=(${PRE[@]+"${PRE[@]}"} "$SKILLRUN" --workspace-root "$W" --execution-id "$ID" \
    "$@" "$B" -- /bin/sh -c \
    'date +%s.%N >/workspace/outputs/started; sleep "3.$1"; sleep 1
     date >/workspace/outputs/finished' - "$tag")
  if [ "$mode" = user ]; then cmd=("${AS_USER[@]}" "${cmd[@]}"); fi
  report=$("$PYTHON3" - "$secs" "3.$tag" "$W/$ID.$out" "$W/$ID.err" "${cmd[@]}" <<'EOF'
import fcntl, os, subprocess, sys, time
secs, needle, out, err = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
r, w = os.pipe()
# Two pages (F_SETPIPE_SZ): the events before policy_resolved (1,000 -
# 1,700 bytes) share the first; skillrun writes in PIPE_BUF chunks, and
# a whole page needs a free one, so policy_resolved (some 6,000 bytes)
# stops after its first 4,096.
fcntl.fcntl(w, 1031, 8192)
with open(err, "wb") as e:
    p = subprocess.Popen(sys.argv[5:], stdout=w, stderr=e, stdin=subprocess.DEVNULL)
os.close(w)
start, seen = time.monotonic(), "never"
# secs 0: until skillrun exits (at most a minute).
while (time.monotonic() - start < secs) if secs else \
        (p.poll() is None and time.monotonic() - start < 60):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", needle.encode()] and seen == "never":
            seen = "%.2f" % (time.monotonic() - start)
    time.sleep(0.05)
taken = time.time()
with open(out, "wb") as o:
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        o.write(b)
print(p.wait(), seen, "%.6f" % taken)
EOF
  )
  read -r rc SEEN TAKEN <<<"$report"
}

PRE=()
for mode in $MODES; do
  # A stall shorter than the stream's limit: the run goes on once the
  # reader reads; the skill (4 s) starts only then and meets its 2 s.
  stalled "$mode" 4 111111 stdout --timeout 2s
  is "$mode: stalled 4 s: the run ends in the skill's timeout (124)" "$rc" 124
  is "$mode: ... execution_completed: timeout" \
    "$(field "$W/default/$ID/audit.jsonl" execution_completed .status)" timeout
  is "$mode: ... the skill was not running while the record waited" "$SEEN" never
  started=$(cat "$W/default/$ID/outputs/started" 2>/dev/null)
  if [ -n "$started" ] && "$PYTHON3" -c 'import sys; sys.exit(float(sys.argv[1]) < float(sys.argv[2]) - 0.05)' \
    "$started" "$TAKEN"; then
    pass "$mode: ... it started after policy_resolved was taken ($started >= $TAKEN)"
  else
    fail "$mode: ... it started after policy_resolved was taken"
    diag "started '$started', record taken at $TAKEN"
  fi
  check "$mode: ... the record verifies" audit_ok "$W/$ID.stdout"

  # A stall past the stream's limit (5 s; the reader waits for skillrun's
  # end): the launch fails on the record it could not write, and the skill
  # never ran.
  # What the stream got ends in the middle of policy_resolved's line (its
  # reader left it), so it is not kept as an audit file: the run's own
  # audit.jsonl is the complete record.
  stalled "$mode" 0 222222 abandoned-stream
  SCHEMA_SKIP+=("$W/$ID.abandoned-stream")
  check "$mode: stalled until skillrun ends: the stream has no whole policy_resolved line" \
    "$PYTHON3" -c 'import sys
d = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
sys.exit(any(b"\"event\":\"policy_resolved\"" in l for l in d) or not d)' \
    "$W/$ID.abandoned-stream"
  is "$mode: ... exit 125" "$rc" 125
  is "$mode: ... one line says which record was left untaken" "$(cat "$W/$ID.err")" \
    "skillrun: audit: the audit stream's reader left event 'policy_resolved' untaken for 5 s"
  is "$mode: ... the skill never ran (not seen on the host)" "$SEEN" never
  is "$mode: ... no 'running' state on the run's record" \
    "$(grep -c '"state":"running"' "$W/default/$ID/audit.jsonl")" 0
  is "$mode: ... execution_completed: error" \
    "$(field "$W/default/$ID/audit.jsonl" execution_completed .status)" error
  check "$mode: ... the run's audit.jsonl verifies" audit_ok "$W/default/$ID/audit.jsonl"

  # init fails once released (its unshare of the cgroup namespace refused)
  # while the supervisor is still held by the record: init's own error is
  # the run's, not the supervisor's failed word to an init already gone.
  PRE=("$REFUSE" unshare-cgroup)
  stalled "$mode" 1 333333 stdout
  PRE=()
  is "$mode: init fails while the record is held: exit 125" "$rc" 125
  is "$mode: ... the line is init's" "$(cat "$W/$ID.err")" \
    "skillrun: unshare(CLONE_NEWCGROUP): Operation not permitted"
  is "$mode: ... layer_failed names init's layer" \
    "$(field "$W/default/$ID/audit.jsonl" layer_failed .layer)" cgroupns
  is "$mode: ... the skill never ran" "$SEEN" never
done
host_unchanged audit-stall
finish
