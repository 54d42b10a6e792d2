#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# skillrun --verify-audit on the fixtures of tests/data/audit (written by
# gen.py, an implementation of the chain independent of src/audit.c).
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
echo "1..$((5 + nbad))"

# 1: the good file verifies and the head is the hash of its last line.
want=$(last_line_sha "$D/good.jsonl")
verify "$D/good.jsonl"
if [ "$rc" -eq 0 ] && [ "$out" = "ok: 7 events, head sha256:$want" ]; then
  ok "good.jsonl verifies, head sha256:$want"
else
  not_ok "good.jsonl verifies" "exit $rc" "stdout: $out" "stderr: $err" \
    "want: ok: 7 events, head sha256:$want"
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

# 4: dropping whole lines at the end keeps a valid chain, but the head
# changes: that is why the head is printed, to compare with a recorded one.
head -n 6 "$D/good.jsonl" >"$T/short.jsonl"
want6=$(last_line_sha "$T/short.jsonl")
verify "$T/short.jsonl"
if [ "$rc" -eq 0 ] && [ "$out" = "ok: 6 events, head sha256:$want6" ] &&
  [ "$want6" != "$want" ]; then
  ok "a cut at a line boundary verifies with another head"
else
  not_ok "cut at a line boundary" "exit $rc" "stdout: $out" "stderr: $err"
fi

# 5: a file that cannot be read is not "ok".
verify "$T/does-not-exist.jsonl"
if [ "$rc" -ne 0 ] && [ -z "$out" ] && [ -n "$err" ]; then
  ok "a missing file fails (exit $rc) with a message"
else
  not_ok "missing file" "exit $rc" "stdout: $out" "stderr: $err"
fi

# 6..: every bad fixture fails with exit 1 and names FILE:LINE.
while read -r name line; do
  case $name in bad-*) ;; *) continue ;; esac
  verify "$D/$name"
  case $err in
  *"$name:$line:"*) where=yes ;;
  *) where=no ;;
  esac
  if [ "$rc" -eq 1 ] && [ "$where" = yes ] && [ -z "$out" ]; then
    ok "$name: exit 1, $name:$line: ${err##*"$name:$line: "}"
  else
    not_ok "$name: exit 1 naming $name:$line:" "exit $rc" "stdout: $out" \
      "stderr: $err"
  fi
done <"$D/bad.list"

exit $failed
