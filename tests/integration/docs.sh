#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Docs are tested artifacts: every long option that `skillrun --help` prints
# is documented in skillrun(1) and offered by both shell completions, the man
# page and the completions name no option --help does not know, and every
# man page renders without warnings.  TAP; needs SKILLRUN and TOP_SRCDIR.

set -u

: "${TOP_SRCDIR:?TOP_SRCDIR must point at the source tree}"

MAN1="$TOP_SRCDIR/man/skillrun.1"
BASH_COMP="$TOP_SRCDIR/completions/bash/skillrun"
ZSH_COMP="$TOP_SRCDIR/completions/zsh/_skillrun"

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

# Every man page renders, without a single warning.
for page in "$TOP_SRCDIR"/man/*.[1-8]; do
  name=${page##*/}
  if command -v man >/dev/null 2>&1; then
    warnings=$(LC_ALL=C MANWIDTH=80 man --warnings -l "$page" 2>&1 >"$tmp/render")
  else
    warnings=$(LC_ALL=C groff -man -ww -Tutf8 "$page" 2>&1 >"$tmp/render")
  fi
  if [ -z "$warnings" ] && [ -s "$tmp/render" ]; then
    pass "$name renders without warnings"
  else
    fail "$name renders without warnings"
    printf '%s\n' "$warnings" | sed 's/^/# /'
  fi
  # whatis(1) and apropos(1) index a page by its NAME section.
  check "$name has a NAME section" grep -q '^\.SH NAME' "$page"
done

# The plain-text option list at the top of skillrun(1) (for grep-based
# tools) is the --help list, no more, no less.
sed -n '1,/^\.TH/{/^\.\\"/p}' "$MAN1" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u >"$tmp/man1.comment"
check "skillrun(1)'s leading option list equals --help's" cmp -s "$tmp/man1.comment" "$tmp/help.opts"

finish
