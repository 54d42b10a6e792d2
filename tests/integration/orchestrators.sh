#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The two example orchestrators of skillrun-integration(7),
# examples/integration/orchestrator/run-skill.sh (sh and jq) and
# run_skill.py (Python, standard library only), against a run that
# succeeds, one refused, one that times out, one that hits its memory
# limit, one whose program is missing, a usage error (no stream at all),
# a worker stopped with SIGTERM (passed on: the run is cancelled) and one
# killed with its process group (the run stops for its lost stream).
# Each reads everything from the audit stream: the test checks what they
# report against the run directory, which they never look into.  As root
# and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"

O=$TOP_SRCDIR/examples/integration/orchestrator
T=$(tmpdir)
cp -r "$TOP_SRCDIR/examples/hello" "$T/hello"
cp "$O/run-skill.sh" "$O/run_skill.py" "$T/"
echo "notes for the request" >"$T/notes.txt"
# mkskill NAME ENTRYPOINT [METADATA-LINE]...: a bundle whose entrypoint is
# the case.
mkskill() {
  local dir=$T/$1 entry=$2
  shift 2
  mkdir -p "$dir/scripts"
  {
    printf -- '---\nname: %s\ndescription: A case for the orchestrators.\n' "${dir##*/}"
    printf 'metadata:\n  sandbox.entrypoint: %s\n' "$entry"
    for l; do printf '  %s\n' "$l"; done
    printf -- '---\n'
  } >"$dir/SKILL.md"
}
mkskill sleeper "sleep 30" "sandbox.timeout: 1s"
mkskill napper "sleep 60"
mkskill hog "python3 scripts/hog.py" "sandbox.memory: 64M"
printf 'chunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n' >"$T/hog/scripts/hog.py"
mkskill broken "scripts/missing.sh"
# Enough long names that execution_completed's list is cut, and two files
# whose escaped paths were the same text: a Latin-1 name and one spelled
# with a backslash, which is escaped too now (\x5c); both carry
# path_base64, their raw bytes.
mkskill latin "python3 scripts/many.py"
cat >"$T/latin/scripts/many.py" <<'EOF'
import os
os.chdir("/workspace/outputs")
for i in range(300):
    open("%03d" % i + "n" * 250, "w").write("filler")
open(b"caf\xe9", "w").write("the Latin-1 name")
open(b"caf\\xe9", "w").write("the name with a backslash")
EOF
chmod -R a+rX "$T"
digest() { "$SKILLRUN" --digest "$T/$1" | cut -d' ' -f1; }

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  for orch in run-skill.sh run_skill.py; do
    k=0
    # o BUNDLE DIGEST [INPUT]...: the orchestrator's JSON line in $out, its
    # exit status in $rc; request id $orch-$mode-$k.
    o() {
      local b=$1 d=$2
      shift 2
      k=$((k + 1))
      id=${orch%%.*}-$k
      out=$("${pre[@]}" env SKILLRUN="$SKILLRUN" SKILLRUN_WORKSPACE_ROOT="$W" \
        TMPDIR="$W" "$T/$orch" "$T/$b" "$d" acme "$id" "$@" 2>/dev/null)
      rc=$?
    }
    j() { "$JQ" -r "$1" <<<"$out"; }
    # The stream it kept is the run directory's copy, and verifies.
    kept() {
      local a
      a=$(j .audit)
      check "$mode: $orch: $1: the stream it kept verifies" audit_ok "$a"
      check "$mode: $orch: $1: ... and is the run's audit.jsonl" \
        cmp -s "$a" "$W/acme/$id/audit.jsonl"
    }

    o hello "$(digest hello)" "$T/notes.txt"
    is "$mode: $orch: ok: exit 0" "$rc" 0
    is "$mode: $orch: ok: status, reason" "$(j '[.status, .reason] | @tsv')" "succeeded	"
    is "$mode: $orch: ok: the run directory from execution_started" \
      "$(j .run_dir)" "$(cd "$W/acme/$id" 2>/dev/null && pwd -P)"
    is "$mode: $orch: ok: the artifact, as harvested" \
      "$(j '.artifacts[] | "\(.path) \(.size) \(.sha256) \(.mode)"')" \
      "hello.txt $(stat -c %s "$W/acme/$id/outputs/hello.txt") $(sha256sum <"$W/acme/$id/outputs/hello.txt" | cut -d' ' -f1) 0644"
    kept ok

    o hello "sha256:$(printf '%064d' 0)"
    is "$mode: $orch: refused: exit 123" "$rc" 123
    is "$mode: $orch: refused: status, reason" "$(j '[.status, .reason] | @tsv')" \
      "refused	digest_mismatch"
    is "$mode: $orch: refused: no artifacts" "$(j '.artifacts | length')" 0
    kept refused
    # A refused --input: the reason is input_rejected's (skillrun(1), EXIT
    # STATUS 123), not bundle_rejected's.
    o hello "$(digest hello)" "$T/no-such-input"
    is "$mode: $orch: refused input: exit 123" "$rc" 123
    is "$mode: $orch: refused input: status, reason" "$(j '[.status, .reason] | @tsv')" \
      "refused	input_invalid"
    kept "refused input"

    o sleeper "$(digest sleeper)"
    is "$mode: $orch: timeout: exit 124" "$rc" 124
    is "$mode: $orch: timeout: status, reason" "$(j '[.status, .reason] | @tsv')" "timeout	wall"
    kept timeout

    o hog "$(digest hog)"
    # The whole run's memory, whatever enforces it (a cgroup, else the
    # supervisor's sampler): the run is stopped, and the stream says why.
    by=$("$JQ" -r 'select(.event == "policy_resolved") | .policy.limits.memory.enforced_by' "$(j .audit)")
    is "$mode: $orch: memory ($by): exit 137" "$rc" 137
    is "$mode: $orch: memory ($by): status, reason" "$(j '[.status, .reason] | @tsv')" "oom	memory"
    kept memory

    o latin "$(digest latin)"
    is "$mode: $orch: a cut list: exit 0, every artifact" \
      "$rc $(j '.artifacts | length')" "0 302"
    is "$mode: $orch: ... two names once shown alike are shown apart, with their raw bytes" \
      "$(j '.artifacts[] | select(.path == "caf\\xe9" or .path == "caf\\x5cxe9") | "\(.path) \(.path_base64 // "-") \(.size)"' | LC_ALL=C sort | tr '\n' ' ')" \
      "caf\\x5cxe9 $(printf 'caf\\xe9' | base64) 25 caf\\xe9 $(printf 'caf\351' | base64) 16 "
    check "$mode: $orch: ... and no other entry has a null path_base64" \
      not grep -q '"path_base64":null' <<<"$out"

    o broken "$(digest broken)"
    is "$mode: $orch: missing program: exit 127" "$rc" 127
    is "$mode: $orch: missing program: status, reason" "$(j '[.status, .reason] | @tsv')" "failed	ENOENT"
    kept "missing program"

    # A malformed digest is a usage error, which writes no stream at all
    # (skillrun(1), EXIT STATUS 125): no stream to verify, not one that
    # fails to, and no file to ship.
    before=$(find "$W" -maxdepth 1 -name 'skillrun-audit.*' | wc -l)
    o hello "sha256:0000"
    is "$mode: $orch: usage error: exit 125, status error, reason usage, no audit" \
      "$rc $(j '[.status, .reason, .audit] | tojson')" '125 ["error","usage",null]'
    is "$mode: $orch: ... and it leaves no file behind" \
      "$(find "$W" -maxdepth 1 -name 'skillrun-audit.*' | wc -l)" "$before"

    # The worker stopped with SIGTERM, sent to its own pid (as
    # Popen.terminate() or a supervisor's KillMode=process does) while the
    # skill runs: it passes the signal on, skillrun cancels the run with
    # its record, and the worker reports that and exits with its status.
    k=$((k + 1))
    id=${orch%%.*}-$k
    "${pre[@]}" env SKILLRUN="$SKILLRUN" SKILLRUN_WORKSPACE_ROOT="$W" \
      TMPDIR="$W" "$T/$orch" "$T/napper" "$(digest napper)" acme "$id" \
      >"$T/$id.out" 2>/dev/null &
    worker=$!
    wait_running "$W/acme/$id/audit.jsonl"
    # skillrun's own pid, from its stream: /proc says whether it is left.
    spid=$(field "$W/acme/$id/audit.jsonl" execution_started .pid)
    kill -TERM "$worker"
    wait "$worker"
    rc=$?
    out=$(cat "$T/$id.out")
    is "$mode: $orch: SIGTERM: exit 143, the cancelled run reported" \
      "$rc $(j '[.status, .exit_code] | @tsv')" "143 cancelled	143"
    check "$mode: $orch: ... no skillrun of the run is left" \
      test -n "$spid" -a ! -e "/proc/$spid"
    is "$mode: $orch: ... audit.jsonl ends with execution_completed cancelled" \
      "$(last "$W/acme/$id/audit.jsonl")" "execution_completed	cancelled"
    kept SIGTERM
    # A worker that did not pass it on left the run going: stop it here.
    if [ -n "$spid" ] && [ -e "/proc/$spid" ]; then
      kill -TERM "$spid"
      for _ in $(seq 100); do [ -e "/proc/$spid" ] || break; sleep 0.1; done
    fi

    # The worker killed outright with its process group (timeout -s KILL,
    # supervisord's killasgroup): skillrun, in a session of its own, is
    # not in that group, but the stream's reader is, and the run stops for
    # the stream it lost, within a second or so, its record whole; it used
    # to run to the skill's end (60 s), unreported.
    k=$((k + 1))
    id=${orch%%.*}-$k
    setsid "${pre[@]}" env SKILLRUN="$SKILLRUN" SKILLRUN_WORKSPACE_ROOT="$W" \
      TMPDIR="$W" "$T/$orch" "$T/napper" "$(digest napper)" acme "$id" \
      >/dev/null 2>&1 &
    worker=$!
    wait_running "$W/acme/$id/audit.jsonl"
    spid=$(field "$W/acme/$id/audit.jsonl" execution_started .pid)
    kill -KILL -- "-$worker"
    wait "$worker"
    for _ in $(seq 100); do [ -e "/proc/$spid" ] || break; sleep 0.1; done
    check "$mode: $orch: SIGKILL to the worker's group: skillrun is gone within 10 s" \
      test -n "$spid" -a ! -e "/proc/$spid"
    is "$mode: $orch: ... audit.jsonl ends with execution_completed error" \
      "$(last "$W/acme/$id/audit.jsonl")" "execution_completed	error"
    is "$mode: $orch: ... for the stream it lost (audit_write)" \
      "$(field "$W/acme/$id/audit.jsonl" error .reason)" audit_write
    if [ -n "$spid" ] && [ -e "/proc/$spid" ]; then
      kill -TERM "$spid"
      for _ in $(seq 100); do [ -e "/proc/$spid" ] || break; sleep 0.1; done
    fi
  done
done

# A stream that does not verify is reported as such: a skillrun that adds
# a line of its own to the stream once the run is over.
W=$(tmpdir)
cat >"$T/bad-skillrun" <<EOF
#!/bin/bash
for a; do [ "\$a" = --verify-audit ] && exec "$SKILLRUN" "\$@"; done
fd= prev=
for a; do [ "\$prev" = --audit-fd ] && fd=\$a; prev=\$a; done
"$SKILLRUN" "\$@"
rc=\$?
printf '%s\n' '{"schema":"skillrun.audit/1","event":"forged"}' >>"/proc/self/fd/\$fd"
exit \$rc
EOF
chmod 755 "$T/bad-skillrun"
for orch in run-skill.sh run_skill.py; do
  out=$(SKILLRUN="$T/bad-skillrun" SKILLRUN_WORKSPACE_ROOT="$W" TMPDIR="$W" \
    "$T/$orch" "$T/hello" "$(digest hello)" acme "bad-${orch%%.*}" 2>/dev/null)
  is "$orch: a stream that does not verify: audit_invalid" \
    "$("$JQ" -r .status <<<"$out")" "succeeded,audit_invalid"
  SCHEMA_SKIP+=("$("$JQ" -r .audit <<<"$out")")
done
finish
