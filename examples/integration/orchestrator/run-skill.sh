#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# run-skill.sh BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]...
#
# What an orchestrator's worker does for one request
# (skillrun-integration(7), ORCHESTRATORS), with sh and jq: run the bundle
# only if it has the digest the orchestrator pinned, under the tenant and
# execution id the orchestrator knows it by, with the audit stream kept
# apart on fd 3, and report the outcome as one JSON line on stdout:
#   {"execution_id":..., "status":..., "exit_code":..., "reason":...,
#    "run_dir":..., "artifacts":[{"path":..., "size":..., "sha256":...,
#    "mode":...}], "audit":...}
# (and "path_base64", the name's raw bytes, where "path" is escaped).
# Everything comes from the audit stream, nothing from the run directory's
# layout: the run directory from execution_started, the status and the
# artifacts from execution_completed (the artifact_committed events when
# its list was cut), the reason from the event that says why (the refusal
# of the bundle or of an input, the failure, the limit, the command that
# could not be executed).
# Without execution_completed (skillrun could not even start) the status
# comes from the exit status.  A usage error (exit status 125) writes no
# stream at all: status error, reason usage, "audit" null.  A stream whose
# chain does not verify is reported as such.  The audit file stays where
# the JSON line says: the worker ships it to its collector, then removes
# it.  SIGTERM, SIGINT or SIGHUP sent to this worker is passed on to
# skillrun, which cancels the run with its record (status cancelled, exit
# status 128+N); the worker waits for it and reports that outcome.  One
# that comes before skillrun is started stops the worker: nothing runs,
# and the line says cancelled, with no run.  A worker killed outright
# (SIGKILL to its process group) takes the stream's reader with it, and
# skillrun stops the run for its lost stream.  Exits with skillrun's exit
# status.  Needs jq and setsid(1) (util-linux).
# SKILLRUN (default skillrun) and SKILLRUN_WORKSPACE_ROOT (default:
# skillrun's, skillrun(1) FILES) may be set.
set -u
[ $# -ge 4 ] || { echo "usage: $0 BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]..." >&2; exit 2; }
for tool in jq setsid; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$0: needs $tool" >&2; exit 2; }
done
# No job control, even when started with sh -m or from an interactive
# shell: a background job would then lead a process group of its own,
# and setsid(1) would fork instead of exec, its pid not skillrun's.
set +m
SKILLRUN=${SKILLRUN:-skillrun}
bundle=$1 digest=$2 tenant=$3 id=$4
shift 4

# The inputs, each as -i PATH, after the fixed options.
n=$#
for f; do
  set -- "$@" -i "$f"
done
shift "$n"
if [ -n "${SKILLRUN_WORKSPACE_ROOT:-}" ]; then
  set -- --workspace-root "$SKILLRUN_WORKSPACE_ROOT" "$@"
fi

# A relative bundle path starting with "-" must not pass for an option.
case $bundle in
/* | ./* | ../*) ;;
*) bundle=./$bundle ;;
esac

# A worker stopped with SIGTERM, SIGINT or SIGHUP (Popen.terminate(), a
# supervisor's stop) passes the signal on to skillrun, which cancels the
# run and records it, and reports that like any outcome: stopping only
# the worker would leave the run going on, unreported.  skillrun runs in
# the background so that a trap can run while the worker waits for it,
# and in a session of its own (setsid(1), which execs it: $! stays its
# pid) so that a signal sent to the worker's process group (Ctrl-C,
# timeout(1)) reaches it once, from the worker: the same signal twice
# would cut the skill's kill-grace short (skillrun(1), EXIT STATUS).
child='' pending='' trapped=''
# shellcheck disable=SC2317 # run by the traps below
forward() {
  trapped=1
  if [ -n "$child" ]; then
    kill -s "$1" "$child" 2>/dev/null
  else
    pending=$1 pending_n=$2
  fi
}
trap 'forward TERM 15' TERM
trap 'forward INT 2' INT
trap 'forward HUP 1' HUP

audit=$(mktemp "${TMPDIR:-/tmp}/skillrun-audit.XXXXXX") || exit 125
# The stream reaches the file through a FIFO read by a process of this
# worker's group: skillrun, in a session of its own, is not killed with
# the group, but loses the stream's reader with it and stops the run.
pipe=$(mktemp -d "${TMPDIR:-/tmp}/skillrun-stream.XXXXXX") || { rm -f "$audit"; exit 125; }
mkfifo -m 600 "$pipe/stream" || { rm -rf "$audit" "$pipe"; exit 125; }
# Stopped before skillrun started: nothing runs.
if [ -n "$pending" ]; then
  rm -rf "$audit" "$pipe"
  rc=$((128 + pending_n))
  jq -nc --arg id "$id" --argjson rc "$rc" '{execution_id: $id,
    status: "cancelled", exit_code: $rc, reason: null, run_dir: null,
    artifacts: [], audit: null}'
  exit "$rc"
fi
cat "$pipe/stream" >"$audit" &
reader=$!
# No -- COMMAND: the manifest's entrypoint runs.
setsid "$SKILLRUN" --expect-sha256 "$digest" --tenant "$tenant" \
  --execution-id "$id" --audit-fd 3 "$@" "$bundle" \
  3>"$pipe/stream" </dev/null >/dev/null &
child=$!
# A signal that came while skillrun was being started.
[ -z "$pending" ] || kill -s "$pending" "$child" 2>/dev/null
# A trapped signal cuts wait short (status above 128): wait again for
# skillrun's own status, which the shell keeps for a second wait when the
# first one did see it.
while :; do
  trapped=''
  wait "$child"
  rc=$?
  [ -n "$trapped" ] || break
done
# Its pid is not to be signalled any more: a signal from here on only
# finds the report under way.
child=''
# The reader has the stream once skillrun's end of it is closed.
while ! wait "$reader"; do [ -n "$trapped" ] || break; trapped=''; done
rm -rf "$pipe"

# Lines that do not parse (a stream cut short) are left out here; the
# chain check below reports them.
jq -cR 'fromjson? // empty' "$audit" | jq -cs \
  --arg id "$id" --argjson rc "$rc" --arg audit "$audit" '
  def ev(e): map(select(.event == e)) | last;
  ev("execution_completed") as $done
  | {execution_id: $id,
     status: ($done.status //
              ({"123": "refused", "124": "timeout", "125": "error"}[$rc | tostring]
               // "unknown")),
     exit_code: $rc,
     reason: (ev("bundle_rejected").reason // ev("input_rejected").reason
              // ev("error").reason
              // (ev("layer_failed") | if . then "layer_failed:\(.layer)" else null end)
              // ev("limit_exceeded").limit // $done.exec_error),
     run_dir: ev("execution_started").run_dir,
     artifacts: (if $done.artifacts.truncated == false then $done.artifacts.list
                 else [.[] | select(.event == "artifact_committed")
                       | {path, path_base64, size, sha256, mode}
                       | with_entries(select(.value != null))] end),
     audit: $audit}' >"$audit.json"
# A usage error writes no stream at all (skillrun(1), EXIT STATUS 125):
# nothing to verify or to keep.  A chain that does not verify is
# reported, whatever the run did.
if [ "$rc" -eq 125 ] && [ ! -s "$audit" ]; then
  rm -f "$audit"
  jq -c '.reason = "usage" | .audit = null' "$audit.json"
elif ! "$SKILLRUN" --verify-audit "$audit" >/dev/null 2>&1; then
  jq -c '.status += ",audit_invalid"' "$audit.json"
else
  cat "$audit.json"
fi
rm -f "$audit.json"
exit "$rc"
