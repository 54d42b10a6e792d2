#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault injection by errno: every call of a libc function the supervisor
# makes on the way through a run of /bin/true fails in turn (EIO, through
# the LD_PRELOAD shim tests/faultinject/faultinject.so), one run per call,
# as root and as an unprivileged user.  Whatever fails, skillrun(1)'s
# promises for a run that ends badly hold (tests/faultinject/sweep.sh
# checks them): an exit status of EXIT STATUS and one line on stderr, no
# crash; a run that made its run directory ends with execution_completed
# in its audit.jsonl (or, when that copy is the one that broke, on the
# stream) and has a metadata.json (or --gc makes it from the ledger);
# nothing is left: no process, no mount, no tmpfs staging, no cgroup leaf.
#
# openat, mkdirat and linkat are swept on the run's own names only
# (its marker and tmpfs staging, "default:fi-"), and malloc on the calls
# after the cgroup v1 mount points are found and on every fourth of the
# run's last 240: some 300 runs, 15 s on two idle CPUs (sweep.sh checks
# each run with one jq, whose start-up is most of a run's cost); the
# whole sweep, with the skill writing outputs and ENOSPC, is the tool's
# (tests/faultinject/sweep.sh, enospc.sh).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ -f "${FAULTINJECT:-}" ] || skip_all "the fault-injection shim is not built (FAULTINJECT)"
# An ASan build wants its runtime first; the shim is not sanitized.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
skip_modes

SWEEP=$TOP_SRCDIR/tests/faultinject/sweep.sh
# Whether the shim loads and counts: a clean run's count of read calls.
T=$(tmpdir)
probe_count=$(SKILLRUN_FI_FUNC=read SKILLRUN_FI_N=0 SKILLRUN_FI_COUNT=$T/count \
  LD_PRELOAD=$FAULTINJECT "$SKILLRUN" --version >/dev/null 2>&1 && od -An -tu8 -N8 "$T/count" | tr -d ' ')
[ -n "$probe_count" ] || skip_all "the shim does not load here (LD_PRELOAD ignored?)"

for mode in $MODES; do
  out=$T/$mode.out
  SWEEP_MODE=$mode SWEEP_SKILL=true bash "$SWEEP" "$SKILLRUN" "$FAULTINJECT" "$T/$mode" \
    write pwrite read mkdirat fstatfs ftruncate fallocate renameat unlinkat clone3 >"$out" 2>&1
  rc=$?
  grep '^#' "$out" | sed 's/^/# /'
  is "$mode: every failing call ends the run as promised" "$rc:$(grep VIOLATION "$out")" "0:"
  out=$T/$mode-names.out
  SWEEP_MODE=$mode SWEEP_SKILL=true SWEEP_MATCH=default:fi- bash "$SWEEP" "$SKILLRUN" "$FAULTINJECT" \
    "$T/$mode-names" openat mkdirat linkat >"$out" 2>&1
  rc=$?
  grep '^#' "$out" | sed 's/^/# /'
  is "$mode: a failing call on the run's own names ends it as promised" \
    "$rc:$(grep VIOLATION "$out")" "0:"
  # malloc failing while the cgroup v1 mount points are copied for the
  # run (after the last one is found: cpuacct), on a v1 host; none
  # elsewhere.  Not with an ASan build, whose allocator the shim would
  # bypass.
  if grep -qa __asan_init "$SKILLRUN" || [ ! -f "${FAULTINJECT_MALLOC:-}" ]; then
    pass "# SKIP $mode: malloc failures (an ASan build, or no faultinject-malloc.so)"
    pass "# SKIP $mode: malloc failures at the end (an ASan build, or no faultinject-malloc.so)"
    pass "# SKIP $mode: malloc failing on the command line (an ASan build, or no faultinject-malloc.so)"
  else
    # Out of memory as the command line is read: the error is the one
    # line, without the usage hint (the command line was not at fault).
    E=$T/$mode-cli
    mkdir -p "$E" && cp "$FAULTINJECT_MALLOC" "$E/fim.so" && chmod -R a+rX "$E"
    in_mode "$mode" env SKILLRUN_FI_FUNC=malloc SKILLRUN_FI_N=1 LD_PRELOAD="$E/fim.so" \
      "$SKILLRUN" --workspace-root "$E" --execution-id cli "$E" -- /bin/true >/dev/null 2>"$E/stderr"
    rc=$?
    is "$mode: malloc failing on the command line is one line of error, no usage hint" \
      "$rc:$(wc -l <"$E/stderr"):$(cat "$E/stderr")" \
      "125:1:skillrun: parsing the command line: Cannot allocate memory"

    out=$T/$mode-malloc.out
    SWEEP_MODE=$mode SWEEP_AFTER=/sys/fs/cgroup/cpuacct SWEEP_MAX=6 bash "$SWEEP" "$SKILLRUN" \
      "$FAULTINJECT_MALLOC" "$T/$mode-malloc" malloc >"$out" 2>&1
    rc=$?
    grep '^#' "$out" | sed 's/^/# /'
    is "$mode: malloc failing as the cgroup v1 mount points are copied ends the run as promised" \
      "$rc:$(grep VIOLATION "$out")" "0:"
    # And every fourth of the last 240 (the final records: execution_completed,
    # metadata.json, the runs index).
    out=$T/$mode-malloc-end.out
    SWEEP_MODE=$mode SWEEP_LAST=240 SWEEP_STEP=4 bash "$SWEEP" "$SKILLRUN" \
      "$FAULTINJECT_MALLOC" "$T/$mode-malloc-end" malloc >"$out" 2>&1
    rc=$?
    grep '^#' "$out" | sed 's/^/# /'
    is "$mode: malloc failing as the run writes its final records ends it as promised" \
      "$rc:$(grep VIOLATION "$out")" "0:"
  fi
  # A tmpfs staging copy that cannot be removed at all (every open of its
  # name fails from the run's removal on): the run keeps its marker, which
  # says where the copy is, and --gc removes it and leaves the closed
  # ledger as it was.
  W=$T/$mode-left
  mkdir -p "$W/bundle/left" "$W/ws"
  printf -- '---\nname: left\ndescription: t.\n---\n# left\n' >"$W/bundle/left/SKILL.md"
  chmod -R a+rX "$W"
  if [ "$mode" = user ]; then chown "$NOBODY" "$W/ws"; fi
  cp "$FAULTINJECT" "$W/fi.so" && chmod 755 "$W/fi.so"
  in_mode "$mode" env SKILLRUN_FI_FUNC=openat SKILLRUN_FI_MATCH=default:left SKILLRUN_FI_N=2 \
    SKILLRUN_FI_TIMES=99 LD_PRELOAD="$W/fi.so" \
    "$SKILLRUN" --workspace-root "$W/ws" --execution-id left "$W/bundle/left" -- /bin/true \
    >"$W/stream" 2>"$W/stderr"
  rc=$?
  # Where the run staged: /run/skillrun-staging for root where /run is a
  # tmpfs, $XDG_RUNTIME_DIR/skillrun for a user who has one, /dev/shm
  # otherwise (skillrun(1) FILES).
  staging=$($JQ -r 'select(.event == "bundle_verified") | .staging' "$W/stream")
  case $staging in /*/*-default:left) ;; *) staging=$W/no-staging-in-the-stream ;; esac
  left=$([ -d "$staging" ] && echo staging)
  [ -e "$W/ws/.active/default:left" ] && left="$left marker"
  in_mode "$mode" "$SKILLRUN" --gc --workspace-root "$W/ws" >"$W/gc.out" 2>&1
  gone=$([ -e "$staging" ] && echo "staging stays")
  [ -e "$W/ws/.active/default:left" ] && gone="$gone marker stays"
  rm -rf "$staging" # whatever happened, not left behind by the test
  is "$mode: a staging copy that cannot be removed keeps its marker, and --gc removes it" \
    "$rc:$left:$gone:$(tail -n1 "$W/ws/default/left/audit.jsonl" | $JQ -r .status):$("$SKILLRUN" --verify-audit "$W/ws/default/left/audit.jsonl" 2>&1 | cut -d: -f1)" \
    "0:staging marker::succeeded:ok"
  # A run whose audit.jsonl cannot be linked into its new run directory
  # (both ways fail: linkat(2) of the open file and of /proc/self/fd)
  # has no run directory: it is removed, the error is the one line on
  # stderr (no warning about a metadata.json written into the removed
  # directory), and execution_started names no run_dir.
  W=$T/$mode-unlinked
  mkdir -p "$W/bundle/unlinked" "$W/ws"
  printf -- '---\nname: unlinked\ndescription: t.\n---\n# unlinked\n' >"$W/bundle/unlinked/SKILL.md"
  chmod -R a+rX "$W"
  if [ "$mode" = user ]; then chown "$NOBODY" "$W/ws"; fi
  cp "$FAULTINJECT" "$W/fi.so" && chmod 755 "$W/fi.so"
  in_mode "$mode" env SKILLRUN_FI_FUNC=linkat SKILLRUN_FI_MATCH=audit.jsonl SKILLRUN_FI_N=1 \
    SKILLRUN_FI_TIMES=2 LD_PRELOAD="$W/fi.so" "$SKILLRUN" --workspace-root "$W/ws" \
    --execution-id unlinked "$W/bundle/unlinked" -- /bin/true >"$W/stream" 2>"$W/stderr"
  rc=$?
  is "$mode: a run whose audit.jsonl cannot be linked ends with one error and no run directory" \
    "$rc:$(wc -l <"$W/stderr"):$(head -n1 "$W/stderr"):$([ -e "$W/ws/default/unlinked" ] && echo dir):$($JQ -r 'select(.event == "execution_started") | .run_dir' "$W/stream"):$(tail -n1 "$W/stream" | $JQ -r .status)" \
    "125:1:skillrun: cannot create audit.jsonl: Input/output error::null:error"
  # A run that closed its record but could not write its metadata.json
  # (exit 0, a warning) keeps its marker for gc to write it.  Its
  # outputs/ is then its caller's: a file the caller put there, and an
  # artifact the caller renamed, stay through the next run's gc and
  # --gc, which leave the closed ledger as it is and count the run once.
  W=$T/$mode-kept
  mkdir -p "$W/bundle/kept" "$W/ws"
  printf -- '---\nname: kept\ndescription: t.\n---\n# kept\n' >"$W/bundle/kept/SKILL.md"
  chmod -R a+rX "$W"
  if [ "$mode" = user ]; then chown "$NOBODY" "$W/ws" 2>/dev/null; fi
  cp "$FAULTINJECT" "$W/fi.so" && chmod 755 "$W/fi.so"
  R=$W/ws/default/kept
  in_mode "$mode" env SKILLRUN_FI_FUNC=renameat SKILLRUN_FI_MATCH=metadata.json SKILLRUN_FI_N=1 \
    LD_PRELOAD="$W/fi.so" "$SKILLRUN" --workspace-root "$W/ws" --execution-id kept \
    "$W/bundle/kept" -- /bin/sh -c 'echo a >/workspace/outputs/a' >"$W/stream" 2>"$W/stderr"
  rc=$?
  kept=$([ -e "$W/ws/.active/default:kept" ] && echo marker)
  [ -e "$R/metadata.json" ] && kept="$kept metadata.json"
  in_mode "$mode" sh -c "mv '$R/outputs/a' '$R/outputs/a.processed' && echo n >'$R/outputs/notes'"
  in_mode "$mode" "$SKILLRUN" --workspace-root "$W/ws" --execution-id next \
    "$W/bundle/kept" -- /bin/true >/dev/null 2>&1
  in_mode "$mode" "$SKILLRUN" --gc --workspace-root "$W/ws" >"$W/gc.out" 2>&1
  is "$mode: a run kept for its metadata.json keeps the outputs its caller changed through gc" \
    "$rc:$kept:$(cd "$R/outputs" && ls | tr '\n' ' ')" "0:marker:a.processed notes "
  gone=$([ -e "$W/ws/.active/default:kept" ] && echo "marker stays")
  closes=$($JQ -r 'select(.event == "execution_completed") | .status' "$R/audit.jsonl" | tr '\n' ' ')
  counted=$(in_mode "$mode" "$SKILLRUN" --metrics --workspace-root "$W/ws" 2>/dev/null |
    grep '^skillrun_runs_total{.*skill="kept"' | tr '\n' ' ')
  is "$mode: ... and gc writes its metadata.json, its closed ledger and count unchanged" \
    "$gone:$($JQ -r .result.status "$R/metadata.json" 2>&1):$closes:$counted" \
    ':succeeded:succeeded :skillrun_runs_total{tenant="default",skill="kept",status="succeeded"} 2 '
done
# A cgroup leaf that cannot be removed (every rmdir of the run's leaves
# fails) is on the record: a warning, reason cgroup_left, just before
# execution_completed, and --gc removes the leaf once it is empty.  As
# root, where the run has a cgroup of its own.
W=$T/cgleft
mkdir -p "$W/bundle/cgleft" "$W/ws"
printf -- '---\nname: cgleft\ndescription: t.\n---\n# cgleft\n' >"$W/bundle/cgleft/SKILL.md"
chmod -R a+rX "$W"
if [ "$(id -u)" = 0 ]; then
  env SKILLRUN_FI_FUNC=unlinkat SKILLRUN_FI_MATCH=run-default.cgleft SKILLRUN_FI_N=1 \
    SKILLRUN_FI_TIMES=999 LD_PRELOAD="$FAULTINJECT" "$SKILLRUN" --workspace-root "$W/ws" \
    --execution-id cgleft "$W/bundle/cgleft" -- /bin/true >"$W/stream" 2>"$W/stderr"
  rc=$?
  leaves=$($JQ -r 'select(.event == "policy_resolved") | .cgroup_leaves // [] | .[]' "$W/stream")
fi
if [ "$(id -u)" != 0 ] || [ -z "$leaves" ]; then
  pass "# SKIP a cgroup leaf that cannot be removed: the run has no cgroup leaf (root, a writable cgroup)"
  pass "# SKIP ... naming every leaf left"
  pass "# SKIP ... --gc removes it"
else
  left=$(for l in $leaves; do [ -d "$l" ] && echo left; done | sort -u)
  is "a cgroup leaf that cannot be removed: a warning just before execution_completed" \
    "$rc:$left:$(tail -n2 "$W/stream" | $JQ -r '.reason // .status' | tr '\n' ' ')" \
    "0:left:cgroup_left succeeded "
  # Which names every leaf left (cgroup v1: one in each hierarchy).
  msg=$($JQ -r 'select(.reason == "cgroup_left") | .message' "$W/stream")
  unnamed=$(for l in $leaves; do case $msg in *"$l"*) ;; *) echo "$l" ;; esac; done)
  is "... naming every leaf left" "$unnamed" ""
  sleep 2 # --gc leaves a leaf younger than 2 s to the run making it
  "$SKILLRUN" --gc --workspace-root "$W/ws" >/dev/null 2>&1
  left=$(for l in $leaves; do [ -d "$l" ] && echo "$l"; done)
  for l in $left; do rmdir "$l"; done # not left behind by the test
  is "... --gc removes it" "$left" ""
fi
finish
