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
# comes from the exit status.  A stream whose chain does not verify is
# reported as such.  The audit file stays where the JSON line says: the
# worker ships it to its collector, then removes it.  Exits with
# skillrun's exit status.  Needs jq.
# SKILLRUN (default skillrun) and SKILLRUN_WORKSPACE_ROOT (default:
# skillrun's, skillrun(1) FILES) may be set.
set -u
[ $# -ge 4 ] || { echo "usage: $0 BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]..." >&2; exit 2; }
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

audit=$(mktemp "${TMPDIR:-/tmp}/skillrun-audit.XXXXXX") || exit 125
# No -- COMMAND: the manifest's entrypoint runs.
"$SKILLRUN" --expect-sha256 "$digest" --tenant "$tenant" --execution-id "$id" \
  --audit-fd 3 "$@" "$bundle" 3>"$audit" </dev/null >/dev/null
rc=$?

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
# A chain that does not verify is reported, whatever the run did.
if ! "$SKILLRUN" --verify-audit "$audit" >/dev/null 2>&1; then
  jq -c '.status += ",audit_invalid"' "$audit.json"
else
  cat "$audit.json"
fi
rm -f "$audit.json"
exit "$rc"
