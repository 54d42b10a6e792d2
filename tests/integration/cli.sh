#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The real binary's command line: --help and --version, and usage errors
# (exit 125, "skillrun: MSG" plus one hint line on stderr, nothing on
# stdout).  TAP; needs SKILLRUN.

set -u

# TAP helpers, the temporary root and its cleanup: lib.sh.
. "$(dirname "$0")/lib.sh"
tmp=$(tmpdir)

runs=0
run() { # run ARGS...: sets rc, output in $tmp/out and $tmp/err
  "$SKILLRUN" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  # Each run's stdout stays, for finish's schema check of audit lines.
  runs=$((runs + 1))
  cp "$tmp/out" "$tmp/out.$runs"
}
lines() { wc -l <"$1" | tr -d ' '; }
show_stderr() { sed 's/^/# stderr: /' "$tmp/err"; }

# A usage error: 125, exactly two lines on stderr (the message, then the
# hint, never the whole help), nothing on stdout.
usage_error() { # DESCRIPTION EXPECTED-SUBSTRING ARGS...
  desc=$1
  want=$2
  shift 2
  run "$@"
  check "$desc: exits 125 (got $rc)" test "$rc" -eq 125
  check "$desc: two lines on stderr (got $(lines "$tmp/err"))" \
    test "$(lines "$tmp/err")" -eq 2
  check "$desc: first line is 'skillrun: ...$want...'" \
    sh -c 'head -n 1 "$1" | grep -q "^skillrun: .*$2"' sh "$tmp/err" "$want"
  check "$desc: second line is the --help hint" \
    sh -c 'sed -n 2p "$1" | grep -qF "Try '"'"'skillrun --help'"'"' for more information."' \
    sh "$tmp/err"
  check "$desc: nothing on stdout" test ! -s "$tmp/out"
  if [ "$rc" -ne 125 ] || [ "$(lines "$tmp/err")" -ne 2 ]; then
    show_stderr
  fi
}

# --help
run --help
check "--help exits 0 (got $rc)" test "$rc" -eq 0
check "--help writes to stdout" test -s "$tmp/out"
check "--help writes nothing to stderr" test ! -s "$tmp/err"
# One line per option and the short rules; the rest is skillrun(1)'s.  Was
# 40; 44 made room for --stdin, --label and --metrics (issue 18).
check "--help fits in 44 lines (got $(lines "$tmp/out"))" \
  test "$(lines "$tmp/out")" -le 44
check "--help starts with the usage line" \
  grep -q '^Usage: skillrun \[OPTION\]\.\.\. BUNDLE \[-- COMMAND \[ARG\]\.\.\.\]' \
  "$tmp/out"
check "--help names skillrun(1) and the exit statuses" \
  sh -c 'grep -q "skillrun(1)" "$1" && grep -q 123 "$1" && grep -q 124 "$1" &&
         grep -q 125 "$1" && grep -q "128+N" "$1"' sh "$tmp/out"
cp "$tmp/out" "$tmp/help"
run -h
check "-h prints the same text as --help" cmp -s "$tmp/out" "$tmp/help"

# --version
run --version
check "--version exits 0 (got $rc)" test "$rc" -eq 0
check "--version starts with 'skillrun VERSION'" \
  sh -c 'head -n 1 "$1" | grep -Eq "^skillrun [0-9]+\.[0-9]+"' sh "$tmp/out"
for lib in libseccomp libcap libmnl OpenSSL libyaml jansson libunistring libmagic libsystemd; do
  check "--version names $lib" grep -q "^$lib " "$tmp/out"
done
run -V
check "-V exits 0 (got $rc)" test "$rc" -eq 0

# Usage errors.
usage_error "unknown long option" "unrecognized option '--no-such-option'" \
  --no-such-option bundle
usage_error "unknown short option" "unrecognized option '-Z'" -Z bundle
usage_error "missing BUNDLE" "missing BUNDLE"
usage_error "missing BUNDLE with options" "missing BUNDLE" --memory 64M
usage_error "bad --memory value" "invalid --memory value 'lots'" \
  --memory lots bundle
# Below a limit's minimum: a usage error like a malformed value, before
# the bundle is read (it once wrote an audit stream, copied and hashed the
# bundle, and counted an error run; the bundle named need not exist).
usage_error "--memory below its minimum" \
  "invalid --memory value '4M': below the minimum 8MiB" --memory 4M /no/such/bundle
usage_error "--pids below its minimum" \
  "invalid --pids value '2': below the minimum 4" --pids 2 /no/such/bundle
usage_error "--memory without a value" \
  "option '--memory' requires an argument" bundle --memory
usage_error "-- without a command" "-- must be followed by a command" \
  bundle --
usage_error "two modes" "cannot be combined" --digest --explain bundle
# An option the mode does not read is refused, never ignored.
usage_error "a limit with --digest" \
  "option '--timeout' has no effect with '--digest'" --digest --timeout 5s bundle
usage_error "an input with --metrics" \
  "option '--input' has no effect with '--metrics'" --metrics --input "$tmp/x"
usage_error "--tier in a run" "option '--tier' is only used with '--sign'" \
  --tier official bundle
usage_error "an option given twice" "given twice" \
  --pids 5 --pids 6 bundle

# A hostile id is a refusal (123), not a usage error: one line, no hint,
# and on the record, where the id itself is null.
for bad in "--tenant ../x" "--execution-id a/b" "--tenant" "--execution-id"; do
  # shellcheck disable=SC2086 # the option and its value
  case $bad in
  --tenant | --execution-id) run "$bad" "" bundle ;;
  *) run $bad bundle ;;
  esac
  what=${bad%% *}
  if [ "$rc" -eq 123 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
    grep -q "invalid \(tenant\|execution\) id" "$tmp/err"; then
    pass "a bad id ($bad) is refused with 123 and one line"
  else
    fail "a bad id ($bad) is refused with 123 and one line (got $rc)"
    show_stderr
  fi
  is "... audited: started, rejected (invalid_id), completed (refused)" \
    "$("$JQ" -r '[.event, .reason // .status // .run_dir] | @tsv' "$tmp/out" | tr '\n' ' ')" \
    "execution_started	 bundle_rejected	invalid_id execution_completed	refused "
  key=$([ "$what" = --tenant ] && echo tenant_id || echo execution_id)
  is "... the invalid $key is null in every event" \
    "$("$JQ" -r "select(.$key != null) | .event" "$tmp/out")" ""
  check "... and the stream verifies" sh -c '"$1" --verify-audit "$2" >/dev/null' sh "$SKILLRUN" "$tmp/out"
done
run --digest --tenant ../x bundle
check "a bad id with --digest is refused with 123 (got $rc)" test "$rc" -eq 123
usage_error "an abbreviated option" "unrecognized option '--mem'" \
  --mem 64M bundle
# Typos get the nearest option by edit distance.
usage_error "a mistyped option" \
  "unrecognized option '--memroy' (did you mean '--memory'?)" --memroy 64M bundle
usage_error "another mistyped option" \
  "unrecognized option '--timout' (did you mean '--timeout'?)" --timout 5s bundle
# ... and profile keys, with the file and line.
printf '# a profile\nmemroy 1G\n' >"$tmp/typo.profile"
run --explain -p "$tmp/typo.profile" bundle
check "a mistyped profile key exits 125 (got $rc)" test "$rc" -eq 125
check "... naming file:line and the nearest key" \
  grep -qF "typo.profile:2: unknown key 'memroy' (did you mean 'memory'?)" "$tmp/err"
# ... also at the end of a path of 1,500 bytes: a message too long for
# its 1 KiB is cut in its middle, never at its end, which says what is
# wrong (it was cut at the end: a part of the path, nothing else).
long="$tmp/$(printf 'd%.0s' $(seq 60))"
long="$long$(printf "/${long##*/}%.0s" $(seq 24))"
mkdir -p "$long"
cp "$tmp/typo.profile" "$long/typo.profile"
run --explain -p "$long/typo.profile" bundle
check "a mistyped key in a profile of a 1.5 KB path exits 125 (got $rc)" test "$rc" -eq 125
check "... the message still names file:line and the key, cut in its middle" \
  grep -qE "^skillrun: $tmp/d+/d+.*[.]{3}[d/]*/typo[.]profile:2: unknown key 'memroy' \(did you mean 'memory'\?\)\$" "$tmp/err"
check "... in one line of at most 1 KiB" \
  test "$(wc -l <"$tmp/err")" -eq 1 -a "$(wc -c <"$tmp/err")" -le 1050
run --workspace-root "$tmp/ws-long" "$long/nothing-here" -- /bin/true
check "a bundle of a 1.5 KB path that is not there exits 125 or 123 (got $rc)" \
  test "$rc" -eq 125 -o "$rc" -eq 123
check "... its message ends with the reason" grep -qE "No such file or directory\$" "$tmp/err"

# A path the caller gives is quoted in one line of stderr, whatever bytes
# it holds: a newline or a terminal escape in it is shown as '?' (as in
# option values), never a second line or an escape sequence.
mkbundle "$tmp/b"
nl=$'\n'
esc=$'\033'
bad="$tmp/no${esc}[2J${nl}skillrun: forged"
mkdir "$tmp/ws"
for args in "--digest|$bad" "--workspace-root|$tmp/ws|$bad|--|/bin/true" \
  "--verify-audit|$bad" "--conf|$bad|--explain|$tmp/b" "-p|$bad|--explain|$tmp/b" \
  "--audit-file|$bad/x|$tmp/b|--|/bin/true" \
  "--workspace-root|$tmp/ws|--signature|$bad|$tmp/b|--|/bin/true" \
  "--workspace-root|$tmp/ws|--capability|$bad|$tmp/b|--|/bin/true" \
  "--audit-key|$bad|--verify-audit|$tmp/help"; do
  words=()
  while IFS= read -r -d '|' w; do words+=("$w"); done <<<"$args|"
  run "${words[@]}"
  what=${words[0]}
  [ "$what" != --workspace-root ] || what=${words[2]}
  [ "${what#/}" = "$what" ] || what=BUNDLE
  if [ "$rc" -ne 0 ] && [ "$(lines "$tmp/err")" -eq 1 ] &&
    grep -q '^skillrun: .*no?\[2J?skillrun: forged' "$tmp/err" &&
    ! grep -q "$esc" "$tmp/err"; then
    pass "$what with a newline and an escape in its path: one line on stderr (exit $rc)"
  else
    fail "$what with a newline and an escape in its path: one line on stderr (exit $rc)"
    sed 's/^/# stderr: /' "$tmp/err" | cat -v
  fi
done

# "--" hands the rest to the command untouched: a bogus option after it is
# not a usage error (whatever else then happens to the missing bundle).
run /nonexistent-bundle -- sh -c 'echo --no-such-option'
if grep -q "unrecognized option" "$tmp/err"; then
  fail "options after -- are not parsed by skillrun"
  show_stderr
else
  pass "options after -- are not parsed by skillrun"
fi

finish
