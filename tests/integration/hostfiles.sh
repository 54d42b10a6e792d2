#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The files installed for the host rather than for skillrun itself:
# - data/skillrun.conf, the commented skillrun.conf packages install as
#   /etc/skillrun/skillrun.conf: as shipped it changes nothing; each of its
#   example lines, uncommented, is accepted, and the limit lines show the
#   built-in caps they claim to;
# - the tmpfiles.d entry made for this build: systemd-tmpfiles creates the
#   directories the code expects with the modes it checks, and --clean
#   removes old run directories but keeps recent ones and the runs
#   directory itself (with the age shortened, so that the test can wait
#   for it).
# TAP; needs SKILLRUN, TOP_SRCDIR and TOP_BUILDDIR.  Root only: skillrun
# honours a skillrun.conf only when root owns it, and the tmpfiles.d entry
# makes root's directories.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: skillrun reads only a root-owned skillrun.conf"
T=$(tmpdir)
SAMPLE=$TOP_SRCDIR/data/skillrun.conf
B=$TOP_SRCDIR/examples/hello

# An empty conf of root's: the built-in caps, whatever this host's own
# skillrun.conf says (a --conf that does not exist is an error).
install -m 0644 /dev/null "$T/none.conf"
explain() { # CONF-OR-EMPTY: the resolved policy with that conf (and no other)
  if [ -n "$1" ]; then "$SKILLRUN" --conf "$1" --explain "$B"; else
    "$SKILLRUN" --conf "$T/none.conf" --explain "$B"; fi
}
explain "" >"$T/builtin.json" 2>"$T/err"
check "--explain without a conf" test -s "$T/builtin.json"

install -m 0644 "$SAMPLE" "$T/sample.conf"
explain "$T/sample.conf" >"$T/sample.json" 2>"$T/err"
is "the shipped skillrun.conf is accepted" "$?" 0
# The policy but the file read (platform), which it names.
check "the shipped skillrun.conf changes nothing" \
  cmp -s <("$JQ" -S 'del(.platform)' "$T/builtin.json") <("$JQ" -S 'del(.platform)' "$T/sample.json")
is "... and the policy names it" "$("$JQ" -r .platform "$T/sample.json")" "$T/sample.conf"
check "the shipped skillrun.conf raises no warning" \
  not grep -q . "$T/err"

# Every limit of the binary's table has its line, so that a new limit
# appears in the file administrators read.
missing=
for key in $("$JQ" -r '.limits | keys[]' "$T/builtin.json"); do
  grep -q "^#$key " "$SAMPLE" || missing="$missing $key"
done
check "the binary has limits to list" test -n "$("$JQ" -r '.limits | keys[]' "$T/builtin.json")"
is "the shipped skillrun.conf has a line for every limit" "$missing" ""

lines=$(grep -c '^#[a-z]' "$SAMPLE")
check "the shipped skillrun.conf has at least 15 example lines (got $lines)" test "$lines" -ge 15
grep '^#[a-z]' "$SAMPLE" | sed 's/^#//' | while IFS= read -r line; do
  key=${line%% *}
  printf '%s\n' "$line" >"$T/one.conf"
  chmod 0644 "$T/one.conf"
  if ! explain "$T/one.conf" >"$T/one.json" 2>"$T/err"; then
    echo "BAD $line: $(cat "$T/err")"
    continue
  fi
  # A limit line shows the built-in cap: the same cap and value result.
  if "$JQ" -e --arg k "$key" '.limits | has($k)' "$T/builtin.json" >/dev/null; then
    want=$("$JQ" -c --arg k "$key" '.limits[$k] | [.cap, .value]' "$T/builtin.json")
    got=$("$JQ" -c --arg k "$key" '.limits[$k] | [.cap, .value]' "$T/one.json")
    [ "$want" = "$got" ] || echo "BAD $line: cap and value $got, built-in $want"
  fi
  echo "OK $line"
done >"$T/lines"
is "every example line of skillrun.conf is accepted" "$(grep -c '^BAD' "$T/lines")" 0
grep '^BAD' "$T/lines" | sed 's/^/# /'
is "every example line was tried" "$(grep -c '^OK' "$T/lines")" "$lines"
check "a misspelt key is refused (so the check above can fail)" \
  sh -c 'printf "memroy 1G\n" >"$1" && ! "$2" --conf "$1" --explain "$3" >/dev/null 2>&1' \
  sh "$T/one.conf" "$SKILLRUN" "$B"

# What its header tells administrators of a copy that is not root's alone
# is what skillrun does: the run stops (125, config_invalid), it is not
# ignored.
install -m 0664 "$SAMPLE" "$T/gw.conf"
"$SKILLRUN" --conf "$T/gw.conf" "$B" >"$T/gw.jsonl" 2>"$T/err"
is "a group-writable skillrun.conf stops the run" "$?" 125
check "  with a config_invalid error event" grep -q '"reason":"config_invalid"' "$T/gw.jsonl"
check "the shipped skillrun.conf says so (exit status 125, config_invalid)" \
  sh -c 'sed -n "1,12p" "$1" | tr "\n" " " | grep -q "125 and a config_invalid"' sh "$SAMPLE"
check "  and does not claim such a file is ignored" \
  not sh -c 'sed -n "1,12p" "$1" | grep -qi "ignores it"' sh "$SAMPLE"

# ---- tmpfiles.d
TF=$TOP_BUILDDIR/data/tmpfiles.d/skillrun.conf
if ! command -v systemd-tmpfiles >/dev/null 2>&1; then
  diag "systemd-tmpfiles is missing (Debian package systemd): tmpfiles.d checks skipped"
  finish
fi
check "the tmpfiles.d entry was made for this build" test -f "$TF"
runs=$(sed -n 's/^Runs started by root are kept in \(\/.*\)\.$/\1/p' <("$SKILLRUN" --help))
check "the tmpfiles.d entry ages out $runs" grep -q "^d $runs 0711 root root 30d\$" "$TF"
R=$T/root
mkdir "$R"
systemd-tmpfiles --create --root="$R" "$TF" 2>"$T/err"
is "systemd-tmpfiles --create accepts the entry" "$?" 0
check "systemd-tmpfiles --create says nothing" not grep -q . "$T/err"
mode() { stat -c '%a %U:%G' "$1" 2>/dev/null; }
is "/run/skillrun: 0700 root's (uid pool)" "$(mode "$R/run/skillrun")" "700 root:root"
is "/run/skillrun-staging: 0711 root's" "$(mode "$R/run/skillrun-staging")" "711 root:root"
is "$runs: 0711 root's" "$(mode "$R$runs")" "711 root:root"
is "${runs%/runs}: 0711 root's" "$(mode "$R${runs%/runs}")" "711 root:root"

# Retention, with 30d made 2s: a run unchanged since goes, a recent one,
# the tenant holding it and the runs directory stay.
sed 's/ 30d$/ 2s/' "$TF" >"$T/short.conf"
mkdir -p "$R$runs/default/old/logs" "$R$runs/default/old/outputs"
echo log >"$R$runs/default/old/logs/stdout.log"
echo '{}' >"$R$runs/default/old/audit.jsonl"
sleep 3
mkdir -p "$R$runs/default/new/logs"
echo '{}' >"$R$runs/default/new/audit.jsonl"
systemd-tmpfiles --clean --root="$R" "$T/short.conf" 2>"$T/err"
is "systemd-tmpfiles --clean succeeds" "$?" 0
check "--clean removes a run directory unchanged for longer than the age" \
  test ! -e "$R$runs/default/old"
check "--clean keeps a recent run directory" test -f "$R$runs/default/new/audit.jsonl"
check "--clean keeps the runs directory" test -d "$R$runs"
finish
