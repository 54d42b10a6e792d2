# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the shell TAP tests.  Source it; then call `plan N`,
# `ok COND-EXIT-STATUS TEXT` style helpers below, and `finish` at the end.
# shellcheck shell=bash

set -u
: "${SKILLRUN:?SKILLRUN must name the built binary (make check sets it)}"
: "${TOP_SRCDIR:?}"
JQ=${JQ:-jq}
PYTHON3=${PYTHON3:-python3}
NOBODY=${SKILLRUN_TEST_USER:-65534}

_tap_n=0
_tap_failed=0
# One root per test script, made here and not in a $(...) subshell, so the
# EXIT trap knows it; tmpdir hands out directories below it.
_test_root=$(mktemp -d "${TMPDIR:-/tmp}/skillrun-test.XXXXXX") || exit 99
chmod 755 "$_test_root"

_tap_planned=0
plan() { echo "1..$1"; _tap_planned=1; }
pass() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() {
  _tap_n=$((_tap_n + 1))
  _tap_failed=$((_tap_failed + 1))
  echo "not ok $_tap_n - $*"
}
# check TEXT CMD...: passes when CMD succeeds.
check() {
  local text=$1
  shift
  if "$@"; then pass "$text"; else fail "$text"; fi
}
# is TEXT GOT WANT
is() {
  if [ "$2" = "$3" ]; then pass "$1"; else
    fail "$1"
    echo "#   got:  '$2'"
    echo "#   want: '$3'"
  fi
}
# not CMD...: succeeds when CMD fails (for check, which runs its words).
not() { ! "$@"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
diag() { echo "# $*"; }

# A private temp dir, world-traversable so that an unprivileged run and a
# root run's sandbox uid can reach bundles and workspaces below it.
tmpdir() {
  local d
  d=$(mktemp -d "$_test_root/d.XXXXXX")
  chmod 755 "$d"
  echo "$d"
}
# Only the test's own shell cleans up: a background subshell (a racing
# writer, a listener) that is killed must not remove the test's files.
_test_pid=$$
cleanup() {
  [ "${BASHPID:-$$}" = "$_test_pid" ] || return 0
  chmod -R u+rwX "$_test_root" 2>/dev/null
  rm -rf "$_test_root"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# mkbundle DIR [DESCRIPTION]: a minimal valid skill named after DIR.
mkbundle() {
  local dir=$1 name
  name=$(basename "$dir")
  mkdir -p "$dir"
  cat >"$dir/SKILL.md" <<EOS
---
name: $name
description: ${2:-A test skill.}
---
# $name
EOS
}

# as_user CMD...: run as the unprivileged test user with no groups.
as_user() { setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- "$@"; }

# A workspace root the unprivileged user owns.
user_workspace() {
  local d
  d=$(tmpdir)
  chown "$NOBODY:$NOBODY" "$d"
  echo "$d"
}

# audit_ok FILE: every line parses with jq and the chain verifies.
audit_ok() {
  [ -s "$1" ] || return 1
  "$JQ" -e . "$1" >/dev/null 2>&1 || return 1
  "$SKILLRUN" --verify-audit "$1" >/dev/null
}
# event FILE NAME: the last event NAME as compact JSON (empty if none).
event() { "$JQ" -c "select(.event == \"$2\")" "$1" | tail -n 1; }
field() { event "$1" "$2" | "$JQ" -r "$3"; }

# schema_check: every audit line and metadata.json the script's runs left
# under its temp root validates against schema/ (tests/schema-check.py, one
# python3 for the whole script): one TAP result, or one `not ok` per problem
# naming FILE:LINE and the schema error.  Run by finish, before the root is
# removed.  A file made invalid on purpose is listed in SCHEMA_SKIP.
SCHEMA_SKIP=()
schema_check() {
  local out rc summary line args=() n=0
  for line in ${SCHEMA_SKIP[@]+"${SCHEMA_SKIP[@]}"}; do args+=(--skip "$line"); done
  out=$("$PYTHON3" "$TOP_SRCDIR/tests/schema-check.py" --scan "$_test_root" \
    ${args[@]+"${args[@]}"} 2>&1)
  rc=$?
  summary=${out##*$'\n'}
  if [ "$rc" -eq 0 ]; then
    pass "schema: $summary"
  elif [ "$rc" -eq 1 ]; then
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      n=$((n + 1))
      # A '#' would start a TAP directive: "# TODO" would hide the failure.
      [ "$n" -gt 50 ] || fail "schema: ${line//#/\\#}"
    done <<<"${out%"$summary"}"
    [ "$n" -le 50 ] || diag "... and $((n - 50)) more problems"
    [ "$n" -gt 0 ] || fail "schema: invalid, but no problem named: $summary"
    diag "$summary"
  else
    while IFS= read -r line; do diag "$line"; done <<<"$out"
    fail "schema: cannot validate (tests/schema-check.py exited $rc)"
  fi
}

finish() {
  schema_check
  [ "$_tap_planned" = 1 ] || echo "1..$_tap_n"
  if [ "$_tap_failed" -gt 0 ]; then exit 1; fi
  exit 0
}

# check_run_audits LABEL W PREFIX: every audit file $W/a.N of the runs made
# with --execution-id PREFIXN parses with jq and its chain verifies, and the
# run directory's audit.jsonl is the same bytes.  Two TAP results.
check_run_audits() {
  local label=$1 w=$2 prefix=$3 f i c bad=0 copies=0
  for f in "$w"/a.*; do
    i=${f##*.}
    [ -s "$f" ] || continue
    audit_ok "$f" || { bad=$((bad + 1)); diag "audit does not verify: $f"; }
    c="$w/default/$prefix$i/audit.jsonl"
    if [ -f "$c" ] && ! cmp -s "$f" "$c"; then copies=$((copies + 1)); diag "copy differs: $c"; fi
  done
  is "$label: every run's audit parses with jq and verifies" "$bad" 0
  is "$label: every run directory's audit.jsonl equals the stream" "$copies" 0
}

# Whether the sandbox can be built at all here (root or userns).
sandbox_possible() {
  [ "$(id -u)" -eq 0 ] || [ -r /proc/sys/kernel/unprivileged_userns_clone ] ||
    unshare -U true 2>/dev/null
}
