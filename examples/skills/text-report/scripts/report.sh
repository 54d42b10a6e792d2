#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# report.sh REPORT.md FILE...: a Markdown report on each FILE, from the
# template next to this skill's scripts.
set -eu
[ $# -ge 2 ] || { echo "usage: report.sh REPORT.md FILE..." >&2; exit 2; }
out=$1
shift
template=templates/report.md.tmpl
[ -r "$template" ] || { echo "report.sh: run me from the skill's directory ($template)" >&2; exit 2; }
{
  echo "# Text report"
  echo
  for f; do
    set -- $(wc -l -w -c <"$f")
    top=$(sh scripts/wordfreq.sh "$f" 3 | awk '{printf "%s%s (%s)", sep, $2, $1; sep=", "}')
    sed -e "s|@FILE@|$(basename "$f")|" -e "s|@LINES@|$1|" -e "s|@WORDS@|$2|" \
      -e "s|@BYTES@|$3|" -e "s|@TOP@|$top|" "$template"
  done
} >"$out"
echo "$out"
