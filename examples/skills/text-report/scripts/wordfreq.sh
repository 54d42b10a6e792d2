# SPDX-License-Identifier: GPL-2.0-or-later
# wordfreq.sh FILE [COUNT]: the COUNT (10) most frequent words of FILE,
# lowercased, as "N word" lines.  Run with sh: it is not executable.
set -eu
[ $# -ge 1 ] || { echo "usage: sh wordfreq.sh FILE [COUNT]" >&2; exit 2; }
tr -cs 'A-Za-z' '\n' <"$1" | tr 'A-Z' 'a-z' | grep -v '^$' | sort | uniq -c |
  sort -k1,1nr -k2,2 | head -n "${2:-10}" | awk '{print $1, $2}'
