#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# subst-paths.sh MODE IN OUT: writes IN to OUT with @bindir@, @sysconfdir@,
# @datadir@, @localstatedir@ and @docdir@ replaced by the directories of
# this build, so that man pages, completions, the tmpfiles.d entry and the
# AppArmor profile name the paths the binary uses (Makefile.am passes them,
# fully expanded, in the environment).  MODE says how a value is written:
#   roff   "-" as "\-" and "\" as "\e" (a man page)
#   sh     inside double quotes: \ " $ ` escaped (a completion)
#   plain  as is; a value with white space or a backslash is refused
#          (a tmpfiles.d line, whose fields are split at white space)
# Fails when a placeholder is left, or one of the values is not absolute.
set -eu
mode=$1 in=$2 out=$3

for v in bindir sysconfdir datadir localstatedir docdir; do
  eval "val=\${$v:?$v must be set}"
  case $val in
  /*) ;;
  *) printf 'subst-paths.sh: %s %s is not an absolute path\n' "$v" "$val" >&2; exit 1 ;;
  esac
  if [ "$mode" = plain ]; then
    case $val in
    *[[:space:]\\]*)
      printf 'subst-paths.sh: %s %s: no white space or backslash in %s\n' "$v" "$val" "$out" >&2
      exit 1
      ;;
    esac
  fi
done

# awk, not sed: a path may hold any character sed gives a meaning to.
LC_ALL=C awk -v mode="$mode" -v src="$in" '
function esc(s,   r) {
  if (mode == "roff") { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s) }
  else if (mode == "sh") { gsub(/[\\"$`]/, "\\\\&", s) }
  return s
}
# Every occurrence of the literal key in line, replaced by the literal val.
function replace(line, key, val,   i, r) {
  r = ""
  while ((i = index(line, key)) > 0) {
    r = r substr(line, 1, i - 1) val
    line = substr(line, i + length(key))
  }
  return r line
}
BEGIN {
  if (mode != "roff" && mode != "sh" && mode != "plain") {
    print "subst-paths.sh: unknown mode " mode > "/dev/stderr"; exit 2
  }
  n = split("bindir sysconfdir datadir localstatedir docdir", names, " ")
  for (k = 1; k <= n; k++) val[names[k]] = esc(ENVIRON[names[k]])
}
{
  for (k = 1; k <= n; k++) $0 = replace($0, "@" names[k] "@", val[names[k]])
  if (match($0, /@[a-z_]+@/)) {
    printf "%s:%d: unknown placeholder %s\n", src, NR, substr($0, RSTART, RLENGTH) > "/dev/stderr"
    bad = 1
  }
  print
}
END { exit bad }
' "$in" >"$out.tmp" || { rm -f "$out.tmp"; exit 1; }
mv "$out.tmp" "$out"
