#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Docs are tested artifacts: every long option that `skillrun --help` prints
# is documented in skillrun(1) and offered by both shell completions, the man
# page and the completions name no option --help does not know, every limit
# of the binary's table is documented where each of its layers is (and
# listed by the JSON Schemas), the reasons and layers the sources can give
# an error are the audit schema's lists, every man page renders without
# warnings, the pages and completions made from .in files name the
# directories --help names, and each completion offers, with a mode, an
# option or a BUNDLE on the line, just what the binary takes there.  TAP; needs SKILLRUN, JQ, PYTHON3, TOP_SRCDIR
# and TOP_BUILDDIR, and zsh for what the zsh completion offers (a skip
# without it).

set -u

: "${TOP_SRCDIR:?TOP_SRCDIR must point at the source tree}"
: "${TOP_BUILDDIR:?TOP_BUILDDIR must point at the build tree}"

# Made from their .in files in the build tree (Makefile.am).
MAN1="$TOP_BUILDDIR/man/skillrun.1"
MAN_PROFILE="$TOP_BUILDDIR/man/skillrun.profile.5"
MAN_SKILL="$TOP_SRCDIR/man/skillrun-skill.5"
BASH_COMP="$TOP_BUILDDIR/completions/bash/skillrun"
ZSH_COMP="$TOP_BUILDDIR/completions/zsh/_skillrun"

# TAP helpers, the temporary root and its cleanup: lib.sh.
. "$(dirname "$0")/lib.sh"
tmp=$(tmpdir)

long_options() { # FILE: sorted unique --long-options in it
  grep -o -- '--[a-z][a-z0-9-]*' "$1" | sort -u
}

# roff spells --memory as \-\-memory or \fB\-\-memory\fR.
normalise_roff() {
  sed -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\f\[[^]]*\]//g' \
    -e 's/\\-/-/g' -e 's/\\&//g' "$1"
}

# Whole-word match, so --log does not count as --log-cap.
has_option() { # OPTION FILE
  grep -Eq -- "(^|[^a-z0-9-])$1([^a-z0-9-]|\$)" "$2"
}

"$SKILLRUN" --help >"$tmp/help" 2>"$tmp/help.err"
rc=$?
check "--help exits 0 (got $rc)" test "$rc" -eq 0
long_options "$tmp/help" >"$tmp/help.opts"
count=$(wc -l <"$tmp/help.opts")
# A broken --help must not make every check below pass vacuously.
check "--help names at least 20 long options (got $count)" \
  test "$count" -ge 20

normalise_roff "$MAN1" >"$tmp/man1"
# The OPTIONS section only: from ".SH OPTIONS" to the next ".SH".
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$tmp/man1" >"$tmp/man1.options"
check "skillrun(1) has an OPTIONS section" test -s "$tmp/man1.options"

for opt in $(cat "$tmp/help.opts"); do
  check "$opt (from --help) is in the OPTIONS of skillrun(1)" \
    has_option "$opt" "$tmp/man1.options"
  check "$opt (from --help) is in the bash completion" \
    has_option "$opt" "$BASH_COMP"
  check "$opt (from --help) is in the zsh completion" \
    has_option "$opt" "$ZSH_COMP"
done

# The reverse: nothing documented or completed that the binary lacks.
for opt in $(long_options "$tmp/man1.options"); do
  check "$opt (from skillrun(1) OPTIONS) is in --help" \
    has_option "$opt" "$tmp/help"
done
for opt in $(long_options "$BASH_COMP"); do
  check "$opt (from the bash completion) is in --help" \
    has_option "$opt" "$tmp/help"
done
for opt in $(long_options "$ZSH_COMP"); do
  check "$opt (from the zsh completion) is in --help" \
    has_option "$opt" "$tmp/help"
done

# ---------------------------------------------------------------- limits
# The limit table as the binary sees it: the keys of --explain's "limits"
# (a conf path that does not exist: the built-in caps, whatever this host's
# skillrun.conf says).  Which layers may set each one is asked of the binary
# too: --KEY VALUE either parses or is an unknown option, and SKILL.md's
# sandbox.KEY either parses or is an unknown sandbox key.
# An empty conf of root's stands for "no conf" (a --conf that does not
# exist is an error); an ordinary user's own conf would be refused, so
# without root the host's default path is used (absent on a build host).
NOCONF=()
if [ "$(id -u)" -eq 0 ]; then
  install -m 0644 /dev/null "$tmp/empty.conf"
  NOCONF=(--conf "$tmp/empty.conf")
fi
PLAIN="$tmp/plain"
PROBE="$tmp/probe"
mkbundle "$PLAIN"
mkbundle "$PROBE"
"$SKILLRUN" "${NOCONF[@]}" --explain "$PLAIN" >"$tmp/explain.json" 2>"$tmp/explain.err"
rc=$?
check "--explain of a plain bundle exits 0 (got $rc)" test "$rc" -eq 0
"$JQ" -r '.limits | keys[]' "$tmp/explain.json" >"$tmp/limits" 2>/dev/null
count=$(wc -l <"$tmp/limits")
check "--explain names at least 10 limits (got $count)" test "$count" -ge 10

normalise_roff "$MAN_PROFILE" >"$tmp/man.profile"
normalise_roff "$MAN_SKILL" >"$tmp/man.skill"

# A valid value of a limit in the syntax every layer reads: its current
# value, in ms for durations.
limit_value() { # KEY
  "$JQ" -r --arg k "$1" \
    '.limits[$k] | if .unit == "ms" then "\(.value)ms" else "\(.value)" end' \
    "$tmp/explain.json"
}

# Prints flag, none, or what went wrong.
probe_flag() { # KEY VALUE
  local out rc
  out=$("$SKILLRUN" "${NOCONF[@]}" --explain "--$1" "$2" "$PLAIN" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    echo flag
  elif grep -qF -- "unrecognized option '--$1'" <<<"$out"; then
    echo none
  else
    echo "exit $rc: $out"
  fi
}

# Prints manifest, none, or what went wrong.
probe_manifest() { # KEY VALUE
  local out rc
  cat >"$PROBE/SKILL.md" <<EOS
---
name: probe
description: Sets one limit.
metadata:
  sandbox.$1: "$2"
---
EOS
  out=$("$SKILLRUN" "${NOCONF[@]}" --explain "$PROBE" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    echo manifest
  elif grep -qF -- "unknown sandbox key 'sandbox.$1'" <<<"$out"; then
    echo none
  else
    echo "exit $rc: $out"
  fi
}

n_flag=0
n_manifest=0
for key in $(cat "$tmp/limits"); do
  value=$(limit_value "$key")
  check "limit $key is in skillrun.profile(5)" has_option "$key" "$tmp/man.profile"

  how=$(probe_flag "$key" "$value")
  case $how in
  flag)
    n_flag=$((n_flag + 1))
    check "limit flag --$key is in --help" has_option "--$key" "$tmp/help"
    check "limit flag --$key is in the OPTIONS of skillrun(1)" \
      has_option "--$key" "$tmp/man1.options"
    check "limit flag --$key is in the bash completion" \
      has_option "--$key" "$BASH_COMP"
    check "limit flag --$key is in the zsh completion" \
      has_option "--$key" "$ZSH_COMP"
    ;;
  none) ;;
  *) fail "--$key $value: neither accepted nor an unknown option ($how)" ;;
  esac

  how=$(probe_manifest "$key" "$value")
  case $how in
  manifest)
    n_manifest=$((n_manifest + 1))
    check "SKILL.md key sandbox.$key is in skillrun-skill(5)" \
      has_option "sandbox\\.$key" "$tmp/man.skill"
    ;;
  none) ;;
  *) fail "sandbox.$key: $value: neither accepted nor an unknown key ($how)" ;;
  esac
done
# Probes that all answer "none" must not pass vacuously.
check "some limits have a command-line flag (got $n_flag)" test "$n_flag" -ge 1
check "some limits are SKILL.md keys (got $n_manifest)" test "$n_manifest" -ge 1

# The JSON Schemas list the limit keys too (policy_resolved's policy, and
# metadata.json): each list is the binary's, no more, no less.
schema_limits() { # FILE JSON-PATH
  "$JQ" -r --argjson p "$2" 'getpath($p) // [] | .[]' "$1" | sort
}
sort "$tmp/limits" >"$tmp/limits.sorted"
for spec in \
  'audit.schema.json ["$defs","limit_name","enum"]' \
  'audit.schema.json ["$defs","policy","properties","limits","required"]' \
  'metadata.schema.json ["properties","limits","required"]' \
  'metadata.schema.json ["properties","limits","propertyNames","enum"]'; do
  file=${spec%% *}
  path=${spec#* }
  schema_limits "$TOP_SRCDIR/schema/$file" "$path" >"$tmp/schema.limits"
  check "schema/$file $path lists exactly the binary's limits" \
    cmp -s "$tmp/schema.limits" "$tmp/limits.sorted"
done

# ---------------------------------------------------------------- reasons
# The reasons and layers the sources can give an error (tests/audit-reasons.py
# reads src/*.c) are the lists of audit.schema.json, no more, no less: an
# orchestrator that validates the stream never meets a valid run's reason the
# schema refuses, nor is promised one that cannot come.
AUDIT_SCHEMA=$TOP_SRCDIR/schema/audit.schema.json
"$PYTHON3" "$TOP_SRCDIR/tests/audit-reasons.py" "$TOP_SRCDIR/src" >"$tmp/reasons"
is "audit-reasons.py exits 0" "$?" 0
check "audit-reasons.py finds at least 20 reasons of each kind" \
  test "$(grep -c '^refused ' "$tmp/reasons")" -ge 20 -a \
  "$(grep -c '^failed ' "$tmp/reasons")" -ge 20 -a "$(grep -c '^layer ' "$tmp/reasons")" -ge 20
is "every reason of src/ is a literal audit-reasons.py can read" \
  "$(grep '^unresolved ' "$tmp/reasons")" ""
# SR_EXIT_FAILED reasons that never reach an audit stream:
#   audit_read  --verify-audit's and --gc's reading of a ledger (a run's own
#               clean-up of other runs ignores its failures)
#   gc          --gc (the same)
#   sign        --sign
#   capability  sr_capability_mint, which only the unit tests call: a run
#               verifies capabilities, never makes one
#   cancelled   a cancellation ends as status cancelled, with no error event
not_audited='audit_read|gc|sign|capability|cancelled'
code_list() { # KIND: the values of that kind, sorted
  sed -n "s/^$1 //p" "$tmp/reasons" | sort -u
}
schema_list() { # JQ-FILTER: the strings it selects, sorted
  "$JQ" -r "$1 | .[]" "$AUDIT_SCHEMA" | sort -u
}
# same_lists TEXT CODE SCHEMA: the two sorted lists are equal; otherwise
# what only one of them has.
same_lists() {
  is "$1" "$(comm -3 <(echo "$2") <(echo "$3") |
    sed 's/^\t/only in the schema: /; /^only/!s/^/only in src\/: /' | tr '\n' ' ')" ""
}
same_lists "the refusal reasons of src/ are those of bundle_rejected and input_rejected" \
  "$(code_list refused)" \
  "$(schema_list '[.["$defs"].refusal_reason.enum[], .["$defs"].input_rejected.properties.reason.enum[]]')"
same_lists "the failure reasons of src/ (but those of other modes) are error's" \
  "$(code_list failed | grep -Evx "$not_audited")" \
  "$(schema_list '.["$defs"].failure_reason.enum')"
same_lists "the layers of src/ are layer_failed's" \
  "$(code_list layer)" "$(schema_list '.["$defs"].layer_failed.properties.layer.enum')"
# warning.reason is any string (a run without a cgroup says why in words),
# so the schema cannot list the reasons that are names: its description and
# skillrun(1)'s warning entry name each one the sources give.
sed -n '/^\.SH AUDIT EVENTS/,/^\.SH /p' "$MAN1" |
  sed -n '/^\.B warning$/,/^\.TP$/p' | sed 's/\\%//g' >"$tmp/man1.warning"
check "skillrun(1) AUDIT EVENTS has a warning entry" test -s "$tmp/man1.warning"
"$JQ" -r '.["$defs"].warning.description' "$AUDIT_SCHEMA" >"$tmp/schema.warning"
check "src/ gives warnings some reasons that are names (got $(code_list warning | wc -l))" \
  test "$(code_list warning | wc -l)" -ge 3
for reason in $(code_list warning); do
  check "warning reason $reason is in skillrun(1)'s warning entry" \
    grep -qw -- "$reason" "$tmp/man1.warning"
  check "warning reason $reason is in the schema's warning description" \
    grep -qw -- "$reason" "$tmp/schema.warning"
done

# render PAGE OUT: groff's warnings for PAGE (the rendering in OUT).
render() {
  if command -v man >/dev/null 2>&1; then
    LC_ALL=C MANWIDTH=80 man --warnings -l "$1" 2>&1 >"$2"
  else
    LC_ALL=C groff -man -ww -Tutf8 "$1" 2>&1 >"$2"
  fi
}

# Every man page renders without a single warning: the pages shipped as
# they are, and the .in pages made with the packaged directories (/usr,
# /etc, /var), so that the result does not depend on this build's prefix.
# th_fields PAGE: its .TH line's title|section|date|source|manual, with
# "date" for any date and "manual" for any manual name (awk splits the
# quoted arguments the way roff does).
th_fields() {
  awk '/^\.TH[ \t]/ {
    s = substr($0, 5); n = 0
    while (s != "") {
      sub(/^[ \t]+/, "", s)
      if (s == "") break
      if (substr(s, 1, 1) == "\"") {
        i = index(substr(s, 2), "\""); if (i == 0) i = length(s)
        a[++n] = substr(s, 2, i - 1); s = substr(s, i + 2)
      } else {
        i = match(s, /[ \t]/); if (i == 0) i = length(s) + 1
        a[++n] = substr(s, 1, i - 1); s = substr(s, i)
      }
    }
    printf "%s|%s|%s|%s|%s", a[1], a[2], (a[3] ~ /^[0-9][0-9-]*$/ ? "date" : "bad date \"" a[3] "\""),
      a[4], (a[5] != "" ? "manual" : "no manual")
    exit
  }' "$1"
}
version=$("$SKILLRUN" --version | sed -n '1s/^skillrun //p')
check "--version's first line names the release (got $version)" test -n "$version"

mkdir "$tmp/pkgman"
for t in "$TOP_SRCDIR"/man/*.in; do
  bindir=/usr/bin sysconfdir=/etc datadir=/usr/share localstatedir=/var \
    docdir=/usr/share/doc/skillrun \
    sh "$TOP_SRCDIR/data/subst-paths.sh" roff "$t" "$tmp/pkgman/$(basename "$t" .in)"
done
count=0
for page in "$TOP_SRCDIR"/man/*.[1-8] "$tmp"/pkgman/*.[1-8]; do
  [ -f "$page" ] || continue
  [ -f "$page.in" ] && continue # made in an in-tree build: checked below
  count=$((count + 1))
  name=${page##*/}
  warnings=$(render "$page" "$tmp/render")
  if [ -z "$warnings" ] && [ -s "$tmp/render" ]; then
    pass "$name renders without warnings"
  else
    fail "$name renders without warnings"
    printf '%s\n' "$warnings" | sed 's/^/# /'
  fi
  # whatis(1) and apropos(1) index a page by its NAME section.
  check "$name has a NAME section" grep -q '^\.SH NAME' "$page"
  # The header names the page, and the footer the date and the release
  # of the binary it documents (.TH TITLE SECTION DATE SOURCE MANUAL):
  # the same on every page, so that none is left behind by a release.
  is "$name's .TH: title, section, a date, source, manual" "$(th_fields "$page")" \
    "$(printf '%s' "${name%.*}" | tr '[:lower:]' '[:upper:]')|${name##*.}|date|skillrun $version|manual"
done
check "at least 5 man pages to render (got $count)" test "$count" -ge 5
# The pages made for this build render too; a long --prefix may leave a
# path too long to fit a line, which is all groff may say about them.
for page in "$TOP_BUILDDIR"/man/*.[1-8]; do
  [ -f "$TOP_SRCDIR/man/${page##*/}.in" ] || continue
  warnings=$(render "$page" "$tmp/render" | grep -v 'cannot \(adjust\|break\) line')
  if [ -z "$warnings" ] && [ -s "$tmp/render" ]; then
    pass "${page##*/} as built renders"
  else
    fail "${page##*/} as built renders"
    printf '%s\n' "$warnings" | sed 's/^/# /'
  fi
done

# Every mode of "... exclude each other" has a SYNOPSIS line of its own
# (--help and --version but print and exit).
modes=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$MAN1" | normalise_roff /dev/stdin |
  awk '/^\.BR? --[a-z-]+ ?,?$/ {l[n++] = $2} /exclude each other/ {for (i = 0; i < n; i++) print l[i]; exit}
    !/^\.BR? --/ && !/^and$/ {n = 0}' | tr -d ',' | grep -vx -e --help -e --version)
sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$MAN1" | normalise_roff /dev/stdin >"$tmp/synopsis"
check "skillrun(1) names the modes that exclude each other (got $(echo $modes))" \
  test "$(wc -w <<<"$modes")" -ge 5
for m in $modes; do
  check "skillrun(1) SYNOPSIS has a line for $m" grep -q "^\.B skillrun $m\$" "$tmp/synopsis"
done

# Every library --version says is opened only when needed is named where
# skillrun(1) describes --version.
sed -n '/^\.BR -V ", " --version$/,/^\.PP$/p' "$tmp/man1" >"$tmp/man1.version"
check "skillrun(1) describes --version" test -s "$tmp/man1.version"
dlibs=$("$SKILLRUN" --version | sed -n 's/^\(lib[a-z0-9]*\) .*, opened for .*/\1/p')
check "--version names libraries opened when needed (got $(echo $dlibs))" \
  test "$(wc -w <<<"$dlibs")" -ge 3
for lib in $dlibs; do
  check "skillrun(1) --version names $lib, which --version says is opened when needed" \
    has_option "$lib" "$tmp/man1.version"
done

# The plain-text option list at the top of skillrun(1) (for grep-based
# tools) is the --help list, no more, no less.
sed -n '1,/^\.TH/{/^\.\\"/p}' "$MAN1" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u >"$tmp/man1.comment"
check "skillrun(1)'s leading option list equals --help's" cmp -s "$tmp/man1.comment" "$tmp/help.opts"

# The directories of this build: what --help names is what the man pages
# and completions name, and no @placeholder@ is left in what was made.
conf=$(sed -n 's/^ *(default \(\/.*\/skillrun\/skillrun\.conf\))$/\1/p' "$tmp/help")
runs=$(sed -n 's/^Runs started by root are kept in \(\/.*\/skillrun\/runs\)\.$/\1/p' "$tmp/help")
check "--help names the platform configuration file ($conf)" test -n "$conf"
check "--help names root's workspace root ($runs)" test -n "$runs"
normalise_roff "$TOP_BUILDDIR/man/skillrun.profile.5" >"$tmp/man5"
check "skillrun(1) names $conf" grep -qF -- "$conf" "$tmp/man1"
check "skillrun(1) names $runs" grep -qF -- "$runs" "$tmp/man1"
check "skillrun.profile(5) names $conf" grep -qF -- "$conf" "$tmp/man5"
# The profile directories: those next to the conf and, in skillrun(1)'s
# FILES, in the datadir; the completions search the same ones.
sysconf=${conf%/skillrun/skillrun.conf}
datadir=$(sed -n 's/^\.I \(\/.*\)\/skillrun\/profiles\/$/\1/p' "$tmp/man1" | grep -vxF "$sysconf")
check "skillrun(1) FILES names one profile directory in the datadir ($datadir)" \
  test "$(printf '%s\n' "$datadir" | grep -c .)" -eq 1
for p in "$sysconf/skillrun/profiles" "$datadir/skillrun/profiles"; do
  check "skillrun.profile(5) names $p" grep -qF -- "$p" "$tmp/man5"
  check "the bash completion offers profiles in $p" grep -qF -- "\"$p\"" "$BASH_COMP"
  check "the zsh completion offers profiles in $p" grep -qF -- "\"$p\"" "$ZSH_COMP"
done
# The bash completion offers nothing for a value --help gives as a number
# or an id (not a file name): the directories of the current one would be
# wrong there.
mkdir -p "$tmp/cwd/some-dir"
for opt in $(grep -Eo -- '--[a-z0-9-]+ (N|ID|HEX|SIZE|DURATION|KEY=VALUE)( |$)' "$tmp/help" | cut -d' ' -f1); do
  got=$(cd "$tmp/cwd" && bash -c 'source "$1"; COMP_WORDS=(skillrun "$2" ""); COMP_CWORD=2
    _skillrun; printf "%s\n" "${COMPREPLY[@]}"' - "$BASH_COMP" "$opt" 2>/dev/null)
  is "the bash completion offers nothing after $opt" "$got" ""
done

# The bash completion runs in the user's own interactive shell, with its
# options: under failglob, noglob (set -f), nounset or an IFS of its own
# it offers what it offers under bash's defaults, and writes nothing to
# the terminal.  A profile directory without profiles comes first.
mkdir -p "$tmp/prof/empty" "$tmp/prof/p"
: >"$tmp/prof/p/mine.profile"
bash_offers_with() { # SETUP LINE: what the completion offers at the end of
  # LINE in a shell that ran SETUP, and what it wrote to stderr
  (cd "$tmp/cwd" && SKILLRUN_PROFILE_PATH=$tmp/prof/empty:$tmp/prof/p bash -c 'source "$1"
    read -r -a COMP_WORDS <<<"$3"
    [[ $3 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    eval "$2"
    _skillrun
    printf "%s\n" "${COMPREPLY[@]}" | sort' - "$BASH_COMP" "$1" "$2" 2>&1)
}
check "the bash completion offers the profile of the second directory of SKILLRUN_PROFILE_PATH" \
  grep -qx mine <<<"$(bash_offers_with : "skillrun --profile ")"
# A value attached to its short option, as getopt takes it (-pNAME,
# -vpNAME, -iPATH): the value completed, the word's head kept; and such a
# word counts as the options it holds, not as a BUNDLE.
is "the bash completion offers profile names after -p in the same word" \
  "$(bash_offers_with : "skillrun -pmi")" "-pmine"
is "... after -vp too" "$(bash_offers_with : "skillrun -vpmi")" "-vpmine"
is "... and files after -i in the same word" "$(bash_offers_with : "skillrun -isome")" "-isome-dir/"
is "the bash completion offers after -vpNAME what it offers after -v -p NAME" \
  "$(bash_offers_with : "skillrun -vpmine --")" "$(bash_offers_with : "skillrun -v -p mine --")"
# ... and the value in the next word after grouped flags (-vp NAME, -vi
# PATH) as after -p or -i alone.
is "the bash completion offers profile names after -vp" \
  "$(bash_offers_with : "skillrun -vp ")" "$(bash_offers_with : "skillrun -p ")"
is "... and files after -vi" \
  "$(bash_offers_with : "skillrun -vi ")" "$(bash_offers_with : "skillrun -i ")"
for line in "skillrun --profile " "skillrun --gc --" "skillrun --sign k --tier " "skillrun --" \
  "skillrun --conf $tmp/prof/" "skillrun --workspace-root $tmp/prof/"; do
  want=$(bash_offers_with : "$line")
  for setup in "shopt -s failglob" "set -f" "set -u" "IFS=:" "IFS=-"; do
    is "the bash completion offers the same under '$setup' after '$line'" \
      "$(bash_offers_with "$setup" "$line")" "$want"
  done
done

# Both completions offer, per mode, exactly the options the binary takes
# with it (skillrun(1), OPTIONS: a mode refuses every option it does not
# read), and, once an option is on the line, only the modes that take it
# and the options the binary takes with it there.  The binary is asked: a
# mode given the option and a sentinel it refuses names the option when it
# refuses that one too, the sentinel otherwise (src/cli.c checks them in
# the order of its option table, where the sentinels, --audit-key and
# --verbose, come last but for what the mode takes); nothing runs either
# way.
printf '%s\n' 'k' >"$tmp/k"
value_of() { # OPTION [2]: a value the parser accepts for it (another one
  # with 2), or nothing (a flag)
  case $1 in
  --expect-sha256) printf '%064d' 0 ;;
  --capability-fd | --audit-fd | --cpu-seconds) echo 3 ;;
  --pids) echo 8 ;;
  --label) echo "k${2-}=v" ;;
  --input) echo "/etc/hostname${2+:second}" ;;
  --memory | --log-cap) echo 16M ;;
  --timeout) echo 1s ;;
  --network) echo deny ;;
  --tier) echo official ;;
  --tenant | --execution-id) echo k ;;
  --profile | --conf | --signature | --capability | \
    --workspace-root | --cgroup-parent | --audit-file | --audit-key | --sign | --verify-audit)
    echo "$tmp/k" ;;
  esac
}
# takes MODE OPTION [OPTION2] ("run" for a run): 0 when the binary takes
# OPTION (and OPTION2 with it) in MODE, 1 when it refuses it (or the two
# together: given twice, options that cannot be combined), 2 when the
# answer is neither.
takes() {
  local m=$1 o=$2 sentinel msg
  local -a before=() bundle=() with=()
  case $m in run | --digest) sentinel=--audit-key ;; *) sentinel=--verbose ;; esac
  [ "$o" = "$sentinel" ] && return 1
  [ "$m" = run ] || read -r -a before <<<"$m $(value_of "$m")"
  [ -z "${3-}" ] || read -r -a with <<<"$3 $(value_of "$3" 2)"
  case $m in run | --explain | --digest | --sign) bundle=("$TOP_SRCDIR/examples/hello") ;; esac
  # shellcheck disable=SC2046
  msg=$(timeout 10 "$SKILLRUN" "${before[@]}" "$o" $(value_of "$o") "${with[@]}" \
    "$sentinel" $(value_of "$sentinel") "${bundle[@]}" 2>&1 </dev/null >/dev/null | head -n 1)
  case $msg in
  *"option '$o' "* | *"option '${3-$o}' "* | *"options '"*) return 1 ;;
  *"option '$sentinel' "*) return 0 ;;
  *) echo "# $m $o ${3-}: $msg" >&2; return 2 ;;
  esac
}
modes="--explain --digest --verify-audit --gc --metrics --sign --help --version"
plain=$(grep -vxF -e --help -e --version "$tmp/help.opts" | grep -vxF -f <(printf '%s\n' $modes))
# The binary's answer for each mode and option, once.
declare -A took
for m in run $modes; do
  for o in $plain; do
    takes "$m" "$o"
    took[$m $o]=$?
  done
done
# A mode's SYNOPSIS line that names its options (not "[OPTION]...")
# names just those the binary takes with it.
n_syn=0
for m in $modes; do
  sed -n "/^\.B skillrun $m\$/,/^\.\(br\|SH\)/p" "$tmp/synopsis" >"$tmp/synopsis.mode"
  [ -s "$tmp/synopsis.mode" ] || continue
  grep -q OPTION "$tmp/synopsis.mode" && continue
  n_syn=$((n_syn + 1))
  got=$(sed 1d "$tmp/synopsis.mode" | grep -oE -- '(^|[ [])(--[a-z0-9-]+|-[a-zA-Z])' | tr -d ' [' |
    sed -e 's/^-v$/--verbose/' -e 's/^-p$/--profile/' -e 's/^-i$/--input/' | sort -u | tr '\n' ' ')
  want=
  for o in $plain; do
    [ "${took[$m $o]}" = 0 ] && want="$want$o"$'\n'
  done
  is "skillrun(1) SYNOPSIS of $m names the options the binary takes with it" \
    "$got" "$(printf '%s' "$want" | grep . | sort -u | tr '\n' ' ')"
done
check "some SYNOPSIS lines name their options (got $n_syn)" test "$n_syn" -ge 4
both() { # MODE OPTION OPTION2: the binary takes each in MODE
  [ "${took[$1 $2]}" = 0 ] && [ "${took[$1 $3]}" = 0 ]
}
# The questions: a command line whose last word is being completed, and
# the long options (but "--") the binary says fit there, sorted.
q_line=() q_text=() q_want=()
ask() { # LINE TEXT WANT
  q_line+=("$1") q_text+=("$2")
  q_want+=("$(printf '%s' "$3" | grep . | sort | tr '\n' ' ')")
}
for m in run $modes; do
  # A run is pinned by an option only a run takes.
  if [ $m = run ]; then line="--execution-id $tmp/k"; else line="$m $(value_of "$m")"; fi
  want=
  for o in $plain; do
    case " $line " in *" $o "*) continue ;; esac
    case ${took[$m $o]} in 0) want="$want$o"$'\n' ;; 2) want="$want?$o"$'\n' ;; esac
  done
  ask "skillrun $line --" "after $line, what the binary takes there" "$want"
done
for o in $plain; do
  want=
  for m in $modes; do
    [ "${took[$m $o]}" = 0 ] && want="$want$m"$'\n'
  done
  # The options that go with it: those a mode takes with it, but given
  # twice or one that cannot be combined with it.
  for o2 in $plain; do
    for m in run $modes; do
      both "$m" "$o" "$o2" || continue
      takes "$m" "$o" "$o2"
      case $? in 0) want="$want$o2"$'\n' ;; 2) want="$want?$o2"$'\n' ;; esac
      break
    done
  done
  ask "skillrun $o $(value_of "$o") --" "after $o, the modes that take it and the options that go with it" "$want"
done
# After a BUNDLE, only the modes that take one (the others refuse it:
# "option '--gc' takes no BUNDLE") and what they take, and no second BUNDLE
# (none takes two): a completion offered every mode there, and
# directories again.
want=
for m in run $modes; do
  if [ "$m" != run ]; then
    # shellcheck disable=SC2046
    msg=$(timeout 10 "$SKILLRUN" "$m" $(value_of "$m") "$TOP_SRCDIR/examples/hello" \
      2>&1 </dev/null >/dev/null | head -n 1)
    case $msg in *"takes no BUNDLE"*) continue ;; esac
    want="$want$m"$'\n'
  fi
  for o in $plain; do
    [ "${took[$m $o]}" = 0 ] && want="$want$o"$'\n'
  done
done
ask "skillrun $TOP_SRCDIR/examples/hello --" "after a BUNDLE, the modes that take one and what they take" \
  "$(printf '%s' "$want" | sort -u)"
# Not an option: no word but options (zsh offers them when nothing else
# fits), asked in a directory that has one (some-dir).
after_bundle="skillrun $TOP_SRCDIR/examples/hello "
# Two options: the modes that take both and what they take, the same in
# both completions, for each pair some mode takes.
pairs=()
for o in $plain; do
  for o2 in $plain; do
    [[ $o < $o2 ]] || continue
    for m in run $modes; do
      both "$m" "$o" "$o2" || continue
      pairs+=("skillrun $o $(value_of "$o") $o2 $(value_of "$o2") --")
      break
    done
  done
done
check "some pairs of options share a mode (got ${#pairs[@]})" test "${#pairs[@]}" -ge 50

# bash_answers DIR LINE...: what the bash completion offers at the end of
# each LINE (see ask), in DIR/1, DIR/2, ...
bash_answers() {
  local dir=$1
  shift
  mkdir "$dir" && (cd "$tmp/cwd" && bash -c 'source "$1"; dir=$2; shift 2; n=0
    for line in "$@"; do
      n=$((n + 1))
      read -r -a COMP_WORDS <<<"$line"
      [[ $line == *" " ]] && COMP_WORDS+=("")
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
      COMPREPLY=()
      _skillrun
      printf "%s\n" "${COMPREPLY[@]}" | grep . >"$dir/$n"
    done' - "$BASH_COMP" "$dir" "$@" 2>/dev/null)
}
# zsh_answers DIR LINE...: the same of the zsh completion (an interactive
# zsh in a pseudo-terminal: tests/zsh-complete.zsh).
zsh_answers() {
  local dir=$1
  shift
  mkdir "$dir" && (cd "$tmp/cwd" && zsh -f "$TOP_SRCDIR/tests/zsh-complete.zsh" \
    "$TOP_BUILDDIR/completions/zsh" "$dir" "$@")
}
long_offers() { # FILE: the long options (but "--") in an answer, sorted
  grep -x -- '--[a-z0-9-]*' "$1" | grep -vx -- '--' | sort | tr '\n' ' '
}
shells=bash
questions=("${q_line[@]}" "$after_bundle" "${pairs[@]}")
bash_answers "$tmp/bash" "${questions[@]}"
if ! command -v zsh >/dev/null 2>&1; then
  pass "# SKIP the zsh completion's offers: zsh is not installed"
elif ! zsh -fc 'zmodload zsh/zpty && zmodload zsh/zselect' 2>/dev/null; then
  pass "# SKIP the zsh completion's offers: this zsh has no zsh/zpty or zsh/zselect"
else
  zsh_answers "$tmp/zsh" "${questions[@]}"
  rc=$?
  is "tests/zsh-complete.zsh answers the questions" "$rc" 0
  [ "$rc" -eq 0 ] && shells="bash zsh"
  # Whatever terminal the tests were started from (zsh has no line
  # editor with TERM=emacs): the same answers.
  TERM=emacs zsh_answers "$tmp/zsh-emacs" "$after_bundle"
  is "tests/zsh-complete.zsh answers under TERM=emacs too" "$?" 0
  is "... the same answer" "$(cat "$tmp/zsh-emacs/1" 2>/dev/null)" \
    "$(cat "$tmp/zsh/$((${#q_line[@]} + 1))")"
  # A value attached to its short option, as in bash above (zsh offers
  # the value; its line editor keeps the word's head).
  SKILLRUN_PROFILE_PATH=$tmp/prof/empty:$tmp/prof/p zsh_answers "$tmp/zsh-attached" \
    "skillrun -pmi" "skillrun -vpmi" "skillrun -isome"
  is "the zsh completion offers profile names after -p in the same word" \
    "$(cat "$tmp/zsh-attached/1" 2>/dev/null)" mine
  is "... after -vp too" "$(cat "$tmp/zsh-attached/2" 2>/dev/null)" mine
  is "... and files after -i in the same word" \
    "$(cat "$tmp/zsh-attached/3" 2>/dev/null)" some-dir
fi
for sh in $shells; do
  for i in "${!q_line[@]}"; do
    is "the $sh completion offers, ${q_text[i]}" "$(long_offers "$tmp/$sh/$((i + 1))")" "${q_want[i]}"
  done
  is "the $sh completion offers no second BUNDLE, nor a command, after a BUNDLE" \
    "$(grep -v '^-' "$tmp/$sh/$((${#q_line[@]} + 1))")" ""
done
if [ "$shells" = "bash zsh" ]; then
  differ=
  for i in "${!pairs[@]}"; do
    n=$((${#q_line[@]} + i + 2))
    [ "$(long_offers "$tmp/bash/$n")" = "$(long_offers "$tmp/zsh/$n")" ] ||
      differ="$differ${pairs[i]#skillrun }; "
  done
  is "the zsh completion offers what the bash one does after each of ${#pairs[@]} pairs of options" \
    "$differ" ""
fi

for f in "$TOP_BUILDDIR"/man/*.[1-8] "$BASH_COMP" "$ZSH_COMP"; do
  [ -f "$f.in" ] || [ -f "$TOP_SRCDIR/${f#"$TOP_BUILDDIR"/}.in" ] || continue
  check "${f##*/} has no @placeholder@ left" not grep -Eq '@[a-z_]+@' "$f"
done

# The skill's environment: every SKILLRUN_* variable the sandbox sets
# (src/run-prepare.c) is named in skillrun(1), THE SANDBOX, and in
# skillrun-skill(5), the page a skill's author reads, which also says that
# the inputs directory holds the bundle's old path (a skill that takes
# every file of its inputs trips on it).
skill_env=$(grep -o 'push_env(run, "SKILLRUN_[A-Z_]*"' "$TOP_SRCDIR/src/run-prepare.c" |
  grep -o 'SKILLRUN_[A-Z_]*' | sort -u)
check "src/run-prepare.c sets at least 6 SKILLRUN_* variables (got $(echo $skill_env))" \
  test "$(echo "$skill_env" | wc -w)" -ge 6
normalise_roff "$MAN_SKILL" >"$tmp/skill5"
missing1= missing5=
for v in $skill_env; do
  grep -qw -- "$v" "$tmp/man1" || missing1="$missing1 $v"
  grep -qw -- "$v" "$tmp/skill5" || missing5="$missing5 $v"
done
is "skillrun(1) names every SKILLRUN_* variable of the sandbox" "$missing1" ""
is "skillrun-skill(5) names every SKILLRUN_* variable of the sandbox" "$missing5" ""
check "skillrun-skill(5) says the inputs directory holds 'bundle', a symbolic link" \
  grep -qF "symbolic link to the bundle's directory" "$tmp/skill5"

# Every duration suffix the parser takes (src/util.c, sr_parse_duration_ms)
# is named where each page lists them.
dur_units=$(sed -n '/^int sr_parse_duration_ms/,/^}/p' "$TOP_SRCDIR/src/util.c" |
  grep -o '{"[a-z]*", [0-9]*}' | grep -o '"[a-z]*"' | tr -d '"' | grep . | sort -u)
check "src/util.c takes at least 5 duration suffixes (got $(echo $dur_units))" \
  test "$(echo "$dur_units" | wc -w)" -ge 5
grep -A1 'Durations take' "$tmp/man1" >"$tmp/dur1"
normalise_roff "$MAN_PROFILE" | grep -A1 'Durations take' >"$tmp/dur5"
sed -n '/^\.B sandbox\.timeout$/,/^for example$/p' "$tmp/skill5" | tr '\n/' '  ' >"$tmp/durskill"
for f in dur1 dur5 durskill; do
  missing=
  for u in $dur_units; do
    grep -Eq "(^|[^a-z])$u([^a-z]|$)" "$tmp/$f" || missing="$missing $u"
  done
  is "the duration suffixes the parser takes are all named ($f)" "$missing" ""
done

finish
