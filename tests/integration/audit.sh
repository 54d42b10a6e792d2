#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# skillrun --verify-audit on the fixtures of tests/data/audit (written by
# gen.py, an implementation of the chain independent of src/audit.c): ok
# (exit 0), incomplete (exit 2: no final execution_completed, or a last line
# cut off) and tampered (exit 1) told apart; a file that cannot be read is
# exit 125.
# Env: SKILLRUN, TESTDATA, JQ, PYTHON3 (set by `make check`).
set -u

: "${SKILLRUN:?}" "${TESTDATA:?}"
JQ=${JQ:-jq}
PYTHON3=${PYTHON3:-python3}
D=$TESTDATA/audit
# Below the suite's directory (lib.sh), where leaks.sh looks for leftovers.
T=$(mktemp -d "${SKILLRUN_SUITE_DIR:-${TMPDIR:-/tmp}}/audit.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT INT TERM

n=0
failed=0
ok() {
  n=$((n + 1))
  echo "ok $n - $1"
}
not_ok() {
  n=$((n + 1))
  failed=1
  echo "not ok $n - $1"
  shift
  for line in "$@"; do
    echo "# $line"
  done
}

# SHA-256 of the last line of a file (with its '\n'), computed in Python.
last_line_sha() {
  "$PYTHON3" -c 'import hashlib,sys
data = open(sys.argv[1], "rb").read()
print(hashlib.sha256(data.splitlines(True)[-1]).hexdigest())' "$1"
}

# Runs --verify-audit FILE; sets rc, out, err.
verify() {
  "$SKILLRUN" --verify-audit "$1" >"$T/out" 2>"$T/err"
  rc=$?
  out=$(cat "$T/out")
  err=$(cat "$T/err")
}

nbad=$(grep -c '^bad-' "$D/bad.list")
nshort=$(grep -c '^incomplete-' "$D/incomplete.list")
echo "1..$((13 + nbad + nshort))"

# 1: the good file verifies and the head is the hash of its last line; the
# output says the chain is not anchored (what that leaves unproven is in
# skillrun(1) AUDIT ANCHORING).
want=$(last_line_sha "$D/good.jsonl")
verify "$D/good.jsonl"
# It names the run, since another run's ledger verifies as well.
good_ok="ok: 7 events, head sha256:$want, not anchored, run acme/0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0, status succeeded, exit 0"
if [ "$rc" -eq 0 ] && [ "$out" = "$good_ok" ]; then
  ok "good.jsonl verifies, head sha256:$want, naming its run and how it ended"
else
  not_ok "good.jsonl verifies, naming its run and how it ended" "exit $rc" "stdout: $out" "stderr: $err" \
    "want: $good_ok"
fi

# 2: what the verifier accepts, jq parses line by line, with the schema.
if "$JQ" -e -s 'length == 7 and all(.[]; .schema == "skillrun.audit/1")' \
  "$D/good.jsonl" >/dev/null 2>&1; then
  ok "good.jsonl: 7 objects for jq, all skillrun.audit/1"
else
  not_ok "good.jsonl parsed by jq"
fi

# 3: a forged-looking payload stayed inside its line.
if [ "$("$JQ" -r 'select(.seq == 4) | .message' "$D/good.jsonl" | tail -n 1)" \
  = '{"event":"forged"}' ] && [ "$(wc -l <"$D/good.jsonl")" -eq 7 ]; then
  ok "a newline and a JSON object in a field stay one escaped line"
else
  not_ok "escaped payload round-trips"
fi

# 4: a stream cut at a line boundary is a valid chain, but not a whole
# run's: incomplete (exit 2), whichever lines went.
for keep in 6 3; do
  head -n $keep "$D/good.jsonl" >"$T/short.jsonl"
  verify "$T/short.jsonl"
  if [ "$rc" -eq 2 ] && [ -z "$out" ] &&
    [ "${err#*short.jsonl:$keep: the last event is not execution_completed}" != "$err" ]; then
    ok "the first $keep lines: incomplete (exit 2) at line $keep"
  else
    not_ok "the first $keep lines: incomplete" "exit $rc" "stdout: $out" "stderr: $err"
  fi
done

# 6: the last line edited: the chain alone cannot tell (nothing chains to
# it), so the verdict is "ok, not anchored"; with a key the anchor tells
# (tests/integration/trust.sh).  An edit that breaks the line is seen.
sed '7s/"duration_ms":1520/"duration_ms":1/' "$D/good.jsonl" >"$T/last.jsonl"
verify "$T/last.jsonl"
if [ "$rc" -eq 0 ] && [ "${out%, not anchored, run *}" != "$out" ]; then
  ok "the last line edited: ok, not anchored (only an anchor proves it)"
else
  not_ok "the last line edited, unanchored" "exit $rc" "stdout: $out" "stderr: $err"
fi
sed '7s/"seq":6,/"seq":6,"seq":7,/' "$D/good.jsonl" >"$T/last2.jsonl"
verify "$T/last2.jsonl"
if [ "$rc" -eq 1 ] && [ "${err#*last2.jsonl:7:}" != "$err" ]; then
  ok "the last line given a second seq: tampered (exit 1) at line 7"
else
  not_ok "the last line broken" "exit $rc" "stdout: $out" "stderr: $err"
fi

# 6b: the ok line says how the run ended, as the last line says it (an
# anchor proves that; without one, so does nothing): a status and exit
# status skillrun does not write are "-", as is a null exit status (an
# abandoned run's).
for edit in '"failed","exit_code":3|status failed, exit 3' \
  '"timeout","exit_code":null|status timeout, exit -' \
  '"forged\\n","exit_code":256|status -, exit -' \
  '"abandoned","exit_code":-1|status abandoned, exit -'; do
  sed "7s/\"succeeded\",\"exit_code\":0/${edit%%|*}/" "$D/good.jsonl" >"$T/how.jsonl"
  verify "$T/how.jsonl"
  if [ "$rc" -eq 0 ] && [ "${out%, not anchored, run acme/*, ${edit#*|}}" != "$out" ] &&
    [ "${out%, ${edit#*|}}" != "$out" ]; then
    ok "the last line's ${edit%%|*}: ok, ${edit#*|}"
  else
    not_ok "the last line's ${edit%%|*}" "exit $rc" "stdout: $out" "stderr: $err"
  fi
done

# 7: a file that cannot be read is none of the three: exit 125.
verify "$T/does-not-exist.jsonl"
if [ "$rc" -eq 125 ] && [ -z "$out" ] && [ -n "$err" ]; then
  ok "a missing file fails (exit $rc) with a message"
else
  not_ok "missing file" "exit $rc" "stdout: $out" "stderr: $err"
fi

# 8: "-" is a file name, and the message says how to give standard input
# (skillrun(1): FILE may be /dev/stdin).
err=$(cd "$T" && "$SKILLRUN" --verify-audit - <"$D/good.jsonl" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -eq 125 ] && [ "$err" = "skillrun: cannot open -: No such file or directory (read standard input as /dev/stdin)" ]; then
  ok "'-' fails (exit $rc) and names /dev/stdin"
else
  not_ok "'-' names /dev/stdin" "exit $rc" "stderr: $err"
fi

# 9..: every bad fixture is tampered (exit 1), every incomplete one
# incomplete (exit 2), each naming FILE:LINE.
fixtures() { # LIST WANT-RC WORD
  while read -r name line; do
    case $name in '#'*) continue ;; esac
    verify "$D/$name"
    case $err in
    *"$3: "*"$name:$line:"*) where=yes ;;
    *) where=no ;;
    esac
    if [ "$rc" -eq "$2" ] && [ "$where" = yes ] && [ -z "$out" ]; then
      ok "$name: exit $2, $3: $name:$line: ${err##*"$name:$line: "}"
    else
      not_ok "$name: exit $2 naming $3: $name:$line:" "exit $rc" "stdout: $out" \
        "stderr: $err"
    fi
  done <"$D/$1"
}
fixtures bad.list 1 tampered
fixtures incomplete.list 2 incomplete

exit $failed
