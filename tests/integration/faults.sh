#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault injection (skillrun(1) HOW A RUN ENDS): SIGTERM, SIGINT or SIGKILL
# at a random moment of a run, across the whole pipeline (verification,
# the staging copy of a small or a 200 MiB bundle, the sandbox, the
# collection), as root and as an unprivileged user; then --gc.  For every
# run: a run directory's ledger ends with execution_completed and verifies,
# its metadata.json holds the same status, a catchable signal gives 128 + N
# (or the run's own status when it was over first), only SIGKILL abandons;
# a run without a directory has a stream that is whole or incomplete, never
# tampered; nothing is left on disk, on a tmpfs or in the process table.
#
# Reproducible: SKILLRUN_FAULT_SEED (default 1515) seeds the choices;
# SKILLRUN_FAULT_RUNS (default 12) runs per user; CI runs more (.ci/run).
# The figures are printed as a diagnostic (README.md, "Reliability").
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

SEED=${SKILLRUN_FAULT_SEED:-1515}
RUNS=${SKILLRUN_FAULT_RUNS:-12}
RANDOM=$SEED
diag "seed $SEED, $RUNS runs per user"

T=$(tmpdir)
SMALL=$T/fault-small
mkbundle "$SMALL"
BIG=$T/fault-big
mkbundle "$BIG"
head -c 200M /dev/zero >"$BIG/blob"
chmod -R a+rX "$T"
# The skill sleeps a duration unique to this script (GNU sleep takes
# fractions), so that its processes are told from any other's.
NAP="0.3$$"

total_runs=0 total_kills=0 total_terminal=0 total_leftovers=0
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  declare -A sig_of=() rc_of=()
  kills=0
  for i in $(seq "$RUNS"); do
    bundle=$SMALL span=450
    if [ $((RANDOM % 4)) -eq 0 ]; then bundle=$BIG span=1800; fi
    case $((RANDOM % 3)) in 0) sig=TERM ;; 1) sig=INT ;; 2) sig=KILL ;; esac
    delay=$((RANDOM % span))
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "f$i" "$bundle" \
      -- /bin/sleep "$NAP" >"$W/s.$i" 2>/dev/null &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
    kill -$sig $pid 2>/dev/null && kills=$((kills + 1))
    wait $pid
    rc_of[$i]=$?
    sig_of[$i]=$sig
  done
  # gc leaves a cgroup leaf younger than 2 s alone (it may be a run
  # between mkdir and flock): the last killed run's must be older.
  sleep 2.1
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.out" 2>&1
  is "$mode: --gc after $RUNS runs exits 0" "$?" 0

  terminal=0 dirs=0 bad_chain=0 bad_meta=0 bad_status=0 bad_stream=0
  for i in $(seq "$RUNS"); do
    d=$W/default/f$i
    if [ -d "$d" ]; then
      dirs=$((dirs + 1))
      end=$(tail -n 1 "$d/audit.jsonl" 2>/dev/null | "$JQ" -r 'select(.event == "execution_completed") | "\(.status) \(.exit_code)"')
      if [ -n "$end" ]; then terminal=$((terminal + 1)); else diag "f$i: no final event"; fi
      if ! "$SKILLRUN" --verify-audit "$d/audit.jsonl" >/dev/null 2>"$W/v.$i"; then
        bad_chain=$((bad_chain + 1))
        diag "f$i: $(cat "$W/v.$i")"
      fi
      status=${end% *} code=${end#* }
      if [ "$("$JQ" -r .result.status "$d/metadata.json" 2>/dev/null)" != "$status" ]; then
        bad_meta=$((bad_meta + 1))
        diag "f$i: metadata.json does not say $status"
      fi
      # Only SIGKILL abandons; a caught signal's exit status is the record's.
      case ${sig_of[$i]}:$status in
      KILL:abandoned) ok=1 ;;
      *:abandoned) ok=0 ;;
      KILL:*) ok=1 ;; # the run was over before the kill
      *) [ "$code" = "${rc_of[$i]}" ] && ok=1 || ok=0 ;;
      esac
      case ${sig_of[$i]}:$status in
      TERM:cancelled) [ "$code" = 143 ] || ok=0 ;;
      INT:cancelled) [ "$code" = 130 ] || ok=0 ;;
      KILL:*) ;;
      *:cancelled | *:succeeded) ;;
      *) ok=0 ;;
      esac
      if [ $ok = 0 ]; then
        bad_status=$((bad_status + 1))
        diag "f$i: SIG${sig_of[$i]}, exit ${rc_of[$i]}, recorded $status $code:" \
          "$("$JQ" -r 'select(.event == "error" or .event == "layer_failed") | .message' "$d/audit.jsonl" 2>/dev/null | head -n 1)"
      fi
    else
      # Killed before its run directory existed: the stream may stop short,
      # but never breaks; a caught signal ends it whole, cancelled.
      "$SKILLRUN" --verify-audit "$W/s.$i" >/dev/null 2>&1
      v=$?
      if [ ! -s "$W/s.$i" ]; then
        v=2 # nothing was written yet
      fi
      case ${sig_of[$i]}:$v in
      KILL:0 | KILL:2 | *:0) ;;
      *:2) [ "$(tail -n 1 "$W/s.$i" | "$JQ" -r .event 2>/dev/null)" = "" ] || v=bad ;;
      *) v=bad ;;
      esac
      if [ "$v" = bad ]; then
        bad_stream=$((bad_stream + 1))
        diag "f$i: SIG${sig_of[$i]}, exit ${rc_of[$i]}, no run directory, stream: $(tail -c 200 "$W/s.$i")"
      fi
    fi
  done
  is "$mode: every run directory's ledger ends with execution_completed ($terminal of $dirs)" \
    "$terminal" "$dirs"
  is "$mode: ... and verifies" "$bad_chain" 0
  is "$mode: ... and metadata.json holds the same status" "$bad_meta" 0
  is "$mode: ... which follows from the signal and the exit status" "$bad_status" 0
  is "$mode: a run without a directory has a stream that is whole or stops short" "$bad_stream" 0

  hash=$(printf '%s' "$(realpath "$W")" | sha256sum | cut -c1-16)
  markers=$(ls -A "$W/.active" 2>/dev/null | wc -l)
  stagings=$(find "$W" -mindepth 3 -maxdepth 3 -name staging 2>/dev/null | wc -l)
  tmpfs=$(ls -d /dev/shm/skillrun-*/"$hash"-* /run/skillrun-staging/"$hash"-* 2>/dev/null | wc -l)
  sleep 0.5 # a sandbox's init dies with its supervisor, a moment later
  procs=$(pgrep -f -x "/bin/sleep $NAP" | wc -l)
  leftovers=$((markers + stagings + tmpfs + procs))
  [ "$markers" -eq 0 ] || diag "markers: $(ls -A "$W/.active")"
  is "$mode: nothing left (markers $markers, staging $stagings, tmpfs $tmpfs, processes $procs)" \
    "$leftovers" 0
  diag "$mode: $RUNS runs, $kills signals delivered, $dirs run directories, $terminal terminal records, $leftovers leftovers"
  total_runs=$((total_runs + RUNS)) total_kills=$((total_kills + kills))
  total_terminal=$((total_terminal + terminal)) total_leftovers=$((total_leftovers + leftovers))
  unset sig_of rc_of
done
diag "figures (seed $SEED): $total_runs runs, $total_kills kills, $total_terminal terminal records, $total_leftovers leftovers"
finish
