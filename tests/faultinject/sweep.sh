#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault-injection sweep: runs skillrun once per call of each chosen libc
# function with that call failing (faultinject.so, in the supervisor only),
# and prints one line for every run that breaks skillrun(1)'s promises for
# a run that ends badly:
#   - its exit status is one EXIT STATUS lists for this run (0, 123, 125;
#     nothing killed by a signal) and, when not 0, stderr has one line;
#   - no sanitizer report, no crash;
#   - a run that made its run directory ends, in audit.jsonl and on the
#     stream, with execution_completed, its ledger verifies, and it has a
#     metadata.json;
#   - nothing is left: no process, no mount, no tmpfs staging, no cgroup
#     leaf of the run.
#
# Usage: sweep.sh SKILLRUN FAULTINJECT_SO WORKDIR [FUNC...]
#   make tests/faultinject/faultinject.so
#   tests/faultinject/sweep.sh src/skillrun tests/faultinject/faultinject.so /tmp/fi
#   SWEEP_MODE=user SWEEP_SKILL=outputs tests/faultinject/sweep.sh ...
# For malloc, build the shim with its allocator wrappers (not for an ASan
# build) and sweep every Nth call:
#   cc -DFI_MALLOC -shared -fPIC -o /tmp/fim.so tests/faultinject/faultinject.c -ldl
#   SWEEP_STEP=7 tests/faultinject/sweep.sh src/skillrun /tmp/fim.so /tmp/fi malloc
# ENOSPC on a small workspace file system: enospc.sh.  As root, the whole
# sweep (four runs: root and user, true and outputs) takes a few minutes.
# Environment: SWEEP_MODE root|user (user: uid 65534 through setpriv, when
# run as root), SWEEP_SKILL true|outputs, SWEEP_ERRNO (default 5, EIO),
# SWEEP_STEP (every Nth call, default 1), SWEEP_MAX (last N, default all),
# SWEEP_MATCH (count only the calls on a path containing it, as
# SKILLRUN_FI_MATCH: "default:fi-" for a run's own marker and staging),
# SWEEP_AFTER (count only once a path containing it was opened, as
# SKILLRUN_FI_AFTER), SWEEP_MAX with it for the calls of one phase,
# SWEEP_LAST (only the last calls of a clean run's count), SWEEP_ARGS
# (more options for every run, split on blanks: "--conf FILE", "-p FILE");
# SKILLRUN_FI_TIMES passes through (a call that keeps failing from the Nth
# on: expect what cannot be removed to be left, and on the record).
# Prints "ok FUNC N" for a clean run with SWEEP_VERBOSE=1; exits 1 when any
# run broke a promise.
set -u
SKILLRUN=$1 SO=$2 WORK=$3
shift 3
FUNCS=${*:-write pwrite read openat mkdirat fstatfs ftruncate fallocate linkat renameat unlinkat clone3}
MODE=${SWEEP_MODE:-root}
SKILL=${SWEEP_SKILL:-true}
ERRNO=${SWEEP_ERRNO:-5}
STEP=${SWEEP_STEP:-1}
NOBODY=${SKILLRUN_TEST_USER:-65534}
JQ=${JQ:-jq}

mkdir -p "$WORK" && chmod 755 "$WORK" || exit 99
WORK=$(cd -P "$WORK" && pwd)
B=$WORK/bundle/fi-skill
mkdir -p "$B"
printf -- '---\nname: fi-skill\ndescription: fault injection.\n---\n# fi-skill\n' >"$B/SKILL.md"
chmod -R a+rX "$WORK/bundle"
cp "$SKILLRUN" "$WORK/skillrun" && cp "$SO" "$WORK/faultinject.so" || exit 99
chmod 755 "$WORK/skillrun" "$WORK/faultinject.so"
W=$WORK/ws-$MODE-$SKILL-$$
OUT=$WORK/out-$MODE-$SKILL
mkdir -p "$W" "$OUT"
pre=(env)
if [ "$MODE" = user ] && [ "$(id -u)" = 0 ]; then
  chown "$NOBODY:$NOBODY" "$W" "$OUT"
  pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- env)
fi
uid=$(if [ "$MODE" = user ] && [ "$(id -u)" = 0 ]; then echo "$NOBODY"; else id -u; fi)
case $SKILL in
true) cmd=(/bin/true) ;;
outputs) cmd=(/bin/sh -c 'echo out; echo err >&2; echo a >/workspace/outputs/a; mkdir /workspace/outputs/d; echo b >/workspace/outputs/d/b') ;;
*) echo "SWEEP_SKILL: true or outputs" >&2; exit 99 ;;
esac
MARK=skillrun-fi-$$
hash=$(printf '%s' "$W" | sha256sum | cut -c1-16)
bad=0

report() { # FUNC N TEXT
  echo "VIOLATION $MODE $SKILL $1 N=$2: $3"
  bad=1
}

run() { # FUNC N: one run, its id fi-FUNC-N
  local f=$1 n=$2 id=fi-$1-$2 rc lines d s p leaf
  rm -rf "${W:?}/default/$id"
  # shellcheck disable=SC2086 # SWEEP_ARGS: options, split on blanks
  "${pre[@]}" SKILLRUN_FI_FUNC="$f" SKILLRUN_FI_N="$n" SKILLRUN_FI_ERRNO="$ERRNO" \
    SKILLRUN_FI_MATCH="${SWEEP_MATCH:-}" SKILLRUN_FI_AFTER="${SWEEP_AFTER:-}" SKILLRUN_FI_COUNT="$OUT/count" SKILLRUN_FI_MARK=$MARK LD_PRELOAD="$WORK/faultinject.so" \
    ASAN_OPTIONS=verify_asan_link_order=0 \
    "$WORK/skillrun" --workspace-root "$W" --execution-id "$id" ${SWEEP_ARGS:-} "$B" -- "${cmd[@]}" \
    >"$OUT/stream" 2>"$OUT/stderr" </dev/null
  rc=$?
  [ "$n" = 0 ] && { od -An -tu8 -N8 "$OUT/count" | tr -d ' '; return 0; }
  local hit
  hit=$(od -An -tu8 -j8 -N8 "$OUT/count" | tr -d ' ')
  [ "$hit" = 1 ] || return 0 # fewer calls this time: nothing failed
  local v=""
  case $rc in 0 | 123 | 125) ;; *) v="$v exit $rc;" ;; esac
  lines=$(wc -l <"$OUT/stderr")
  if [ "$rc" != 0 ] && [ "$lines" != 1 ]; then v="$v $lines stderr lines;"; fi
  grep -q 'Sanitizer\|runtime error\|Segmentation\|Aborted\|core dumped' "$OUT/stderr" && v="$v sanitizer/crash;"
  d=$W/default/$id
  if [ -d "$d" ]; then
    # The last line of the ledger and of the stream (event, status) and
    # metadata.json's result.status, "-" for what is not there: one jq
    # (its start-up was most of the sweep's time).
    local facts
    facts=$(
      {
        tail -n1 "$d/audit.jsonl" 2>/dev/null | tr -d '\n'
        echo
        tail -n1 "$OUT/stream" | tr -d '\n'
        echo
        tr -d '\n' 2>/dev/null <"$d/metadata.json"
        echo
      } | $JQ -R -r '(fromjson? // {}) | if type != "object" then {} else . end |
        [.event // "-", .status // "-", (.result | objects | .status) // "-",
         # An execution_completed with every field its status requires
         # (schema/audit.schema.json): none was to be left out for want
         # of memory.
         (if .event != "execution_completed" or
             (.status | IN("refused", "error", "abandoned")) or
             (.status == "cancelled" and (has("skill_exit_code") | not)) or
             ([has("skill_exit_code", "signal", "cpu_usec", "memory_peak",
                   "pids_peak", "oom_kill", "measured_by", "logs",
                   "artifacts")] | all)
          then "whole" else "cut" end)] |
        map(if type == "string" then . else "-" end) | @tsv' 2>/dev/null | tr '\t\n' '  '
    )
    local l_event l_status l_whole s_event s_status s_whole m_status
    read -r l_event l_status _ l_whole s_event s_status _ s_whole _ _ m_status _ <<<"$facts"
    [ "$l_whole" = cut ] && v="$v audit.jsonl's execution_completed lacks a field;"
    [ "$s_whole" = cut ] && v="$v the stream's execution_completed lacks a field;"
    # One copy that cannot be written (the failed write was its) is given
    # up, with an error on stderr; the other goes on to execution_completed
    # (skillrun(1) AUDIT EVENTS).
    local ledger_ok=1 stream_ok=1
    if [ "$l_event" != execution_completed ]; then
      ledger_ok=0
      grep -q "to the run's audit.jsonl" "$OUT/stderr" || v="$v audit.jsonl not closed;"
    elif ! "$WORK/skillrun" --verify-audit "$d/audit.jsonl" >/dev/null 2>&1; then
      v="$v audit.jsonl does not verify;"
    fi
    if [ "$s_event" != execution_completed ]; then
      stream_ok=0
      grep -q "to the audit stream" "$OUT/stderr" || v="$v stream not closed;"
    fi
    [ $ledger_ok = 1 ] || [ $stream_ok = 1 ] || v="$v neither copy closed;"
    # A metadata.json that could not be written is --gc's to make.
    if [ "$m_status" = - ]; then
      "${pre[@]}" "$WORK/skillrun" --gc --workspace-root "$W" >/dev/null 2>&1
      $JQ -e .result.status "$d/metadata.json" >/dev/null 2>&1 || v="$v no metadata.json, even after --gc;"
    fi
    if [ $ledger_ok = 1 ]; then s=$l_status; else s=$s_status; fi
    if [ "$rc" = 0 ] && [ "$s" != succeeded ]; then v="$v exit 0 with status $s;"; fi
    if [ "$rc" != 0 ] && [ "$s" = succeeded ]; then v="$v exit $rc with status succeeded;"; fi
  else
    # No run directory: the stream is whole or incomplete, never tampered.
    if [ -s "$OUT/stream" ]; then
      "$WORK/skillrun" --verify-audit "$OUT/stream" >/dev/null 2>&1
      [ $? = 1 ] && v="$v stream tampered;"
    fi
    [ "$rc" = 0 ] && v="$v exit 0 without a run directory;"
  fi
  # Leftovers.
  for p in $(grep -lsz "SKILLRUN_FI_MARK=$MARK" /proc/[0-9]*/environ); do
    p=${p#/proc/}
    v="$v process ${p%/environ} left;"
  done
  grep -q "$W" /proc/self/mountinfo && v="$v mount left;"
  # Every base a run may stage in (skillrun(1) FILES): root's on a /run
  # that is a tmpfs, the user's XDG_RUNTIME_DIR, /dev/shm.
  for s in /run/skillrun-staging "${XDG_RUNTIME_DIR:-/nonexistent}/skillrun" \
    /dev/shm/skillrun-"$uid"; do
    s=$s/$hash-default:$id
    [ -e "$s" ] && v="$v staging $s left;"
  done
  for leaf in /sys/fs/cgroup/skillrun/run-default."$id".* /sys/fs/cgroup/*/skillrun/run-default."$id".*; do
    [ -d "$leaf" ] && { v="$v cgroup leaf $leaf left;"; rmdir "$leaf" 2>/dev/null; }
  done
  if [ -n "$v" ]; then
    report "$f" "$n" "rc=$rc$v stderr: $(head -c 300 "$OUT/stderr" | tr '\n' '|')"
    cp "$OUT/stream" "$OUT/stream.$f.$n"
    cp "$OUT/stderr" "$OUT/stderr.$f.$n"
  else
    [ -n "${SWEEP_VERBOSE:-}" ] && echo "ok $f $n rc=$rc $(head -c 120 "$OUT/stderr")"
    rm -rf "${W:?}/default/$id"
  fi
  return 0
}

for f in $FUNCS; do
  total=$(run "$f" 0)
  [ -n "$total" ] || total=0
  max=${SWEEP_MAX:-$total}
  [ "$max" -gt "$total" ] && max=$total
  first=1
  # SWEEP_LAST: the last calls only (the end of the run: its final
  # records), counted back from the clean run's total.
  if [ -n "${SWEEP_LAST:-}" ] && [ "$SWEEP_LAST" -lt "$max" ]; then first=$((max - SWEEP_LAST + 1)); fi
  echo "# $MODE $SKILL $f: $total calls"
  for ((n = first; n <= max; n += STEP)); do run "$f" "$n"; done
done
exit $bad
