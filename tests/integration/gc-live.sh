#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --gc and --metrics beside live runs (skillrun(1) --gc, METRICS): runs
# whose supervisor was killed (SIGKILL: no terminal record of their own)
# are closed as abandoned, each exactly once however many --gc run at
# once, and counted in the runs index exactly once (by whoever closed
# them, when the index is the run owner's); a live run beside them is
# never touched and counted as in progress until it ends; root's --gc
# over a user's workspace root counts the user's dead run in the user's
# index and makes nothing of root's there.  A run whose id was replayed
# while it lived is counted when it dies: the refusal's line, with its
# id, is not its own.
set -u
# shellcheck source=lib.sh
. "$TOP_SRCDIR/tests/integration/lib.sh"

sandbox_possible || skip_all "no user namespaces here"
skip_modes

T=$(tmpdir)
B=$T/gclive-skill
mkbundle "$B"
chmod -R a+rX "$T"

# sample FILE LINE: FILE has LINE; total FILE NAME: NAME's value, or 0.
sample() { grep -F -x -q -- "$2" "$1"; }
total() { awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }' "$1"; }
abandoned='skillrun_runs_total{tenant="default",skill="gclive-skill",status="abandoned"}'

# start_run W ID: a run of `sleep 30` as ${pre[@]} in the background, once
# it runs; its pid in $pid.
start_run() {
  "${pre[@]}" "$SKILLRUN" --workspace-root "$1" --execution-id "$2" "$B" \
    -- sleep 30 >"$1.$2.audit" 2>"$1.$2.err" &
  pid=$!
  wait_running "$1.$2.audit" || diag "run $2 did not start: $(cat "$1.$2.err")"
}

for mode in $MODES; do
  W=$(mode_workspace "$mode")
  if [ "$mode" = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id done1 "$B" \
    -- true >/dev/null 2>&1
  is "$mode: a finished run" "$?" 0

  # A run that lives on, and three killed while they run (after it
  # started: its start would have closed them).
  start_run "$W" live
  live=$pid
  dead=()
  for id in k1 k2 k3; do
    start_run "$W" "$id"
    dead+=("$pid")
  done
  kill -KILL "${dead[@]}"
  for p in "${dead[@]}"; do wait "$p" 2>/dev/null; done

  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m0.$mode" 2>&1
  is "$mode: before --gc, one run is in progress" \
    "$(total "$T/m0.$mode" skillrun_runs_in_progress)" 1

  # Three --gc at once: each dead run is closed by exactly one of them.
  for g in 1 2 3; do
    "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc$g.$mode" 2>&1 &
    gcs[g]=$!
  done
  n=0
  for g in 1 2 3; do
    wait "${gcs[g]}"
    is "$mode: --gc $g of 3 at once exits 0" "$?" 0
    c=$(sed -n 's/^gc: \([0-9]*\) dead run.*/\1/p' "$T/gc$g.$mode")
    n=$((n + ${c:-0}))
  done
  is "$mode: together they cleaned the 3 dead runs" "$n" 3
  for id in k1 k2 k3; do
    is "$mode: $id's ledger ends abandoned, once" \
      "$(grep -c '"status":"abandoned"' "$W/default/$id/audit.jsonl")" 1
    check "$mode: ... and verifies" audit_ok "$W/default/$id/audit.jsonl"
  done
  check "$mode: the live run's record is still open" \
    not grep -q '"event":"execution_completed"' "$W/default/live/audit.jsonl"

  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m1.$mode" 2>&1
  check "$mode: the 3 abandoned runs are counted" sample "$T/m1.$mode" "$abandoned 3"
  is "$mode: ... the live one is still in progress" \
    "$(total "$T/m1.$mode" skillrun_runs_in_progress)" 1

  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc4.$mode" 2>&1
  is "$mode: another --gc finds nothing more" "$(tail -n 1 "$T/gc4.$mode")" \
    "gc: 0 dead run(s) cleaned under $(realpath "$W")"

  kill -TERM "$live"
  wait "$live"
  is "$mode: the live run ends cancelled" "$(last "$W/default/live/audit.jsonl")" \
    "execution_completed	cancelled"
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m2.$mode" 2>&1
  check "$mode: the abandoned runs are still counted once" \
    sample "$T/m2.$mode" "$abandoned 3"
  is "$mode: every run counted once (1 succeeded, 3 abandoned, 1 cancelled)" \
    "$(total "$T/m2.$mode" skillrun_metrics_index_records)" 5
  is "$mode: none in progress" "$(total "$T/m2.$mode" skillrun_runs_in_progress)" 0

  # A dead run closed by the start of a run of its own id (refused as
  # execution_abandoned): counted once as abandoned, and the refusal.
  start_run "$W" k4
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id k4 "$B" \
    -- true >/dev/null 2>&1
  is "$mode: a run of a dead run's id is refused" "$?" 123
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m3.$mode" 2>&1
  check "$mode: ... the dead run, closed by it, is counted" \
    sample "$T/m3.$mode" "$abandoned 4"
  is "$mode: ... and so is the refusal" \
    "$(total "$T/m3.$mode" skillrun_metrics_index_records)" 7

  # A run whose id was replayed while it lived, then killed: the
  # refusal's index line (execution_replayed) names its id but is not its
  # line; gc used to take it for one and never count the dead run.
  start_run "$W" k5
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id k5 "$B" \
    -- true >/dev/null 2>&1
  is "$mode: a run of a live run's id is refused" "$?" 123
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc5.$mode" 2>&1
  is "$mode: ... --gc closes the live run once it is killed" \
    "$(tail -n 1 "$T/gc5.$mode")" "gc: 1 dead run(s) cleaned under $(realpath "$W")"
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m5.$mode" 2>&1
  check "$mode: ... and counts it as abandoned, once" \
    sample "$T/m5.$mode" "$abandoned 5"
  is "$mode: ... beside the refusal" \
    "$(total "$T/m5.$mode" skillrun_metrics_index_records)" 9
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >/dev/null 2>&1
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m6.$mode" 2>&1
  is "$mode: ... and another --gc counts nothing again" \
    "$(total "$T/m6.$mode" skillrun_metrics_index_records)" 9
done

# root's --gc over a user's own workspace root: the user's dead run goes
# into the user's index; root makes no index of its own there.
if [[ " $MODES " == *" user "* ]] && needs_root "root's --gc over a user's root"; then
  for has_index in yes no; do
    U=$(user_workspace)
    if [ $has_index = yes ]; then
      as_user "$SKILLRUN" --workspace-root "$U" --execution-id done1 "$B" \
        -- true >/dev/null 2>&1
    fi
    pre=("${AS_USER[@]}")
    start_run "$U" k1
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    "$SKILLRUN" --gc --workspace-root "$U" >"$T/gc-root.$has_index" 2>&1
    is "user's root, index $has_index: root's --gc closes the user's dead run" \
      "$(tail -n 1 "$T/gc-root.$has_index")" \
      "gc: 1 dead run(s) cleaned under $(realpath "$U")"
    if [ $has_index = yes ]; then
      as_user "$SKILLRUN" --metrics --workspace-root "$U" >"$T/m-root" 2>&1
      check "... and counts it in the user's index" sample "$T/m-root" "$abandoned 1"
      is "... which stays the user's" "$(stat -c %u "$U/.metrics" "$U/.metrics/runs.log" | sort -u)" \
        "$USER_UID"
    else
      check "user's root without an index: root makes none" not test -e "$U/.metrics"
    fi
  done
  # The user's index is theirs to shape: one they hold locked, or a FIFO,
  # must not hold root's --gc up.
  for shape in locked fifo; do
    U=$(user_workspace)
    as_user "$SKILLRUN" --workspace-root "$U" --execution-id done1 "$B" \
      -- true >/dev/null 2>&1
    if [ $shape = fifo ]; then
      as_user sh -c 'rm "$1" && mkfifo -m 600 "$1"' - "$U/.metrics/runs.log"
    else
      # One process that holds it, and goes with its pid: the plain
      # command, not the as_user function, so that $! is that process
      # and not a subshell around it.
      "${AS_USER[@]}" sh -c 'exec 9<>"$1" && flock 9 && exec sleep 60' - \
        "$U/.metrics/runs.log" &
      holder=$!
      bg_pids+=("$holder")
    fi
    pre=("${AS_USER[@]}")
    start_run "$U" k1
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    t0=$(date +%s%N)
    timeout 30 "$SKILLRUN" --gc --workspace-root "$U" >"$T/gc-$shape" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    is "user's index $shape: root's --gc closes the dead run" "$rc:$(tail -n 1 "$T/gc-$shape")" \
      "0:gc: 1 dead run(s) cleaned under $(realpath "$U")"
    check "... promptly (${ms} ms)" [ "$ms" -lt 5000 ]
    if [ $shape != fifo ]; then
      kill "$holder"
      wait "$holder" 2>/dev/null
      check "... its holder is gone, and the lock with it" flock -n "$U/.metrics/runs.log" true
    fi
  done
fi

# A dead run whose record --gc cannot close (its run directory made
# read-only by its owner, so no metadata.json can be written there): --gc
# says so and exits 125 after cleaning the rest, as systemd-tmpfiles does;
# it used to exit 0.  The unprivileged user's runs only: modes do not hold
# root back.
for mode in $MODES; do
  if [ "$mode" = root ]; then
    pass "# SKIP root: no run directory is read-only to root"
    continue
  fi
  W=$(mode_workspace "$mode")
  if [ "$mode" = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  start_run "$W" ro1
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  "${pre[@]}" chmod 500 "$W/default/ro1"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$T/gc-ro.$mode" 2>"$T/gc-ro.$mode.err"
  is "$mode: --gc that cannot close a dead run's record exits 125" "$?" 125
  check "$mode: ... naming the run on stdout" grep -q "cannot close the record of default/ro1" "$T/gc-ro.$mode"
  check "$mode: ... and saying so on stderr" grep -q "1 dead run(s) under .* could not be closed" "$T/gc-ro.$mode.err"
  "${pre[@]}" chmod 700 "$W/default/ro1"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >/dev/null 2>&1
  is "$mode: ... once it can, --gc closes it and exits 0" "$?" 0
  is "$mode: ... its record ends abandoned" "$(last "$W/default/ro1/audit.jsonl")" "$(printf 'execution_completed\tabandoned')"
  # The first --gc closed its ledger (only metadata.json failed); the
  # second finds it closed.  Counted once all the same, by the first.
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$W" >"$T/m-ro.$mode" 2>&1
  is "$mode: ... and is counted abandoned once in the runs index" \
    "$(total "$T/m-ro.$mode" "$abandoned")" 1
done

finish
