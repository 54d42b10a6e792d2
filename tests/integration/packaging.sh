#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The release tarball is what distributions build from: every file git
# tracks is in it (make's DISTFILES, a directory there standing for every
# file below it), but those kept out on purpose, listed below with the
# reason.  A file the README links to, a test or the build reads and that
# is missing from EXTRA_DIST works in a git checkout and is lost to
# everyone who builds from `make dist`.  TAP; needs TOP_SRCDIR and
# TOP_BUILDDIR, and git with the source tree a git checkout (a skip
# otherwise: the tarball's own tree has no history to compare with).

set -u
. "$(dirname "$0")/lib.sh"
tmp=$(tmpdir)

command -v git >/dev/null 2>&1 || skip_all "git is not installed"
# The top of a checkout, not a tarball unpacked inside one (make
# distcheck's, below an in-tree build); git also refuses a checkout of
# another user's (safe.directory).
top=$(git -C "$TOP_SRCDIR" rev-parse --show-toplevel 2>/dev/null)
[ -n "$top" ] && [ "$(cd -P "$top" && pwd)" = "$(cd -P "$TOP_SRCDIR" && pwd)" ] ||
  skip_all "the source tree is not the top of a git checkout this user's git reads (a tarball's?)"
git -C "$TOP_SRCDIR" -c core.quotepath=off ls-files | sort -u >"$tmp/git" ||
  skip_all "git ls-files failed in the source tree"
[ -s "$tmp/git" ] || skip_all "git ls-files lists nothing"

# Kept out of the tarball on purpose:
#   .gitignore, m4/.gitkeep  what git alone needs
#   debian/*                 the Debian packaging: a Debian source package
#                            brings its own debian/ (dpkg-source 3.0
#                            (quilt)), so upstream tarballs leave it out
#   tests/package/deb.sh     builds that debian/ from a git clone of HEAD
kept_out() {
  case $1 in
  .gitignore | m4/.gitkeep | debian/* | tests/package/deb.sh) return 0 ;;
  esac
  return 1
}

# DISTFILES as make has it, with this build's $(srcdir)/ prefix taken off
# (what automake's distdir does).  MAKEFLAGS: not the jobserver of the
# make running the suite.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory -C "$TOP_BUILDDIR" \
  -f Makefile -f - print-distfiles >"$tmp/make.out" 2>"$tmp/make.err" <<'EOF'
print-distfiles:
	@echo '$(srcdir)'; for f in $(DISTFILES); do echo "$$f"; done
EOF
is "make prints DISTFILES" "$?" 0
srcdir=$(head -n 1 "$tmp/make.out")
tail -n +2 "$tmp/make.out" | while IFS= read -r f; do
  case $f in "$srcdir"/*) f=${f#"$srcdir"/} ;; esac
  printf '%s\n' "$f"
done | sort -u >"$tmp/dist"
check "DISTFILES names at least 100 files (got $(wc -l <"$tmp/dist"))" \
  test "$(wc -l <"$tmp/dist")" -ge 100

# A git file is shipped when DISTFILES names it or a directory above it.
missing=
n=0
while IFS= read -r f; do
  n=$((n + 1))
  kept_out "$f" && continue
  grep -qxF -- "$f" "$tmp/dist" && continue
  d=$f shipped=0
  while [ "${d%/*}" != "$d" ]; do
    d=${d%/*}
    if grep -qxF -- "$d" "$tmp/dist"; then
      shipped=1
      break
    fi
  done
  [ $shipped = 1 ] || missing="$missing $f"
done <"$tmp/git"
check "git tracks at least 300 files (got $n)" test "$n" -ge 300
is "every file git tracks is in make dist's tarball (but those kept out)" "$missing" ""

# The list of those kept out names only files that exist: a stale entry
# would hide the next file given that name.
for f in .gitignore m4/.gitkeep debian/control tests/package/deb.sh; do
  check "$f, kept out of the tarball, is tracked" grep -qxF -- "$f" "$tmp/git"
done

finish
