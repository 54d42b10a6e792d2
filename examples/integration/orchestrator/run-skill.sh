#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# run-skill.sh BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]...
#
# What an orchestrator's worker does for one request
# (skillrun-integration(7), ORCHESTRATORS): run the bundle only if it has
# the digest the orchestrator pinned, under the tenant and execution id the
# orchestrator knows it by, with the audit stream kept apart on fd 3, and
# report the outcome as one JSON line on stdout:
#   {"execution_id":..., "status":..., "exit_code":..., "run_dir":...,
#    "artifacts":[{"path":..., "size":..., "sha256":...}], "audit":...}
# The status comes from the audit's execution_completed event, which tells
# a skill that itself exits 123-127 apart from skillrun's own statuses;
# without that event (skillrun could not even start), from the exit status.
# The audit file stays where the JSON line says: the worker ships it to
# its collector, then removes it.  Exits with skillrun's exit status.
# Needs jq.
# SKILLRUN (default skillrun) and SKILLRUN_WORKSPACE_ROOT (default: the
# caller's default workspace root, skillrun(1) FILES) may be set.
set -u
[ $# -ge 4 ] || { echo "usage: $0 BUNDLE DIGEST TENANT EXECUTION-ID [INPUT]..." >&2; exit 2; }
SKILLRUN=${SKILLRUN:-skillrun}
bundle=$1 digest=$2 tenant=$3 id=$4
shift 4
root=${SKILLRUN_WORKSPACE_ROOT:-}
if [ -z "$root" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    root=$("$SKILLRUN" --help | sed -n 's/^Runs started by root are kept in \(.*\)\.$/\1/p')
  else
    root=${XDG_STATE_HOME:-$HOME/.local/state}/skillrun/runs
  fi
fi

# The inputs, each as -i PATH, after the fixed options.
n=$#
for f; do
  set -- "$@" -i "$f"
done
shift "$n"

# A relative bundle path starting with "-" must not pass for an option.
case $bundle in
/* | ./* | ../*) ;;
*) bundle=./$bundle ;;
esac

audit=$(mktemp "${TMPDIR:-/tmp}/skillrun-audit.XXXXXX") || exit 125
# No -- COMMAND: the manifest's entrypoint runs.
"$SKILLRUN" --expect-sha256 "$digest" --tenant "$tenant" --execution-id "$id" \
  --workspace-root "$root" --audit-fd 3 "$@" "$bundle" \
  3>"$audit" </dev/null >/dev/null
rc=$?

# Lines that do not parse (a stream cut short) are left out here; the
# chain check below reports them.
events() { jq -cR 'fromjson? // empty' "$audit"; }
status=$(events | jq -r 'select(.event == "execution_completed") | .status' | tail -n 1)
if [ -z "$status" ]; then
  case $rc in
  123) status=refused ;;
  124) status=timeout ;;
  125) status=error ;;
  *) status=unknown ;;
  esac
fi
# A chain that does not verify is reported, whatever the run did.
if ! "$SKILLRUN" --verify-audit "$audit" >/dev/null 2>&1; then
  status="$status,audit_invalid"
fi
events | jq -cs --arg id "$id" --arg status "$status" --argjson rc "$rc" \
  --arg run_dir "$root/$tenant/$id" --arg audit "$audit" '{
    execution_id: $id, status: $status, exit_code: $rc, run_dir: $run_dir,
    artifacts: [.[] | select(.event == "artifact_committed")
                | {path, size, sha256}],
    audit: $audit}'
exit "$rc"
