#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The bundle digest (skillrun-bundle(5)): `skillrun --digest` against the
# independent Python implementation on random bundles, sensitivity to one
# byte / one mode bit / one added file / one rename, refusals, and
# `--digest --verbose` records that hash to the printed digest.
#
# Env: SKILLRUN (binary), TOP_SRCDIR, PYTHON3.
set -u

: "${SKILLRUN:?}" "${TOP_SRCDIR:?}"
PYTHON3=${PYTHON3:-python3}
REF="$TOP_SRCDIR/tests/bundle_digest.py"
N_RANDOM=6

# Below the suite's directory (lib.sh), where leaks.sh looks for leftovers.
T=$(mktemp -d "${SKILLRUN_SUITE_DIR:-${TMPDIR:-/tmp}}/digest.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM

n=0

ok() {
  n=$((n + 1))
  echo "ok $n - $1"
}
not_ok() {
  n=$((n + 1))

  echo "not ok $n - $1"
  shift
  for l in "$@"; do echo "# $l"; done
}

rand() { # rand MAX -> 0..MAX-1
  r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' \n')
  echo $((r % $1))
}

# Prints only the hex digest of `skillrun --digest DIR` ("sha256:<hex>  DIR").
sr_digest() {
  out=$("$SKILLRUN" --digest "$1" 2>"$T/err") || return 1
  case $out in
  "sha256:"*"  $1") ;;
  *)
    echo "unexpected output: $out" >&2
    return 1
    ;;
  esac
  echo "${out%%  *}"
}
py_digest() {
  "$PYTHON3" "$REF" "$1"
}

# agrees DESCRIPTION DIR: one test, skillrun's digest of DIR against the
# reference's.
agrees() {
  a_got=$(sr_digest "$2") || a_got="error: $(cat "$T/err")"
  a_want=$(py_digest "$2") || a_want="reference failed"
  if [ "$a_got" = "$a_want" ] && [ -n "$a_want" ]; then
    ok "$1"
  else
    not_ok "$1" "skillrun: $a_got" "python:   $a_want"
  fi
}

# A random bundle: nested dirs, empty dirs, sizes across the 128 KiB read
# chunk, various modes, names with spaces and UTF-8, and names that sort
# across directory boundaries ("a", "a-b", "a.b", "a/...").
gen_bundle() {
  d=$1
  mkdir -p "$d"
  printf -- '---\nname: rnd\ndescription: random bundle\n---\n' >"$d/SKILL.md"
  printf '%s\n' "$d" >"$T/dirs"
  count=$(($(rand 30) + 10))
  gi=0
  while [ "$gi" -lt "$count" ]; do
    gi=$((gi + 1))
    ndirs=$(wc -l <"$T/dirs")
    parent=$(sed -n "$(($(rand "$ndirs") + 1))p" "$T/dirs")
    case $(rand 9) in
    0) name="a" ;;
    1) name="a-b" ;;
    2) name="a.b" ;;
    3) name="with space $gi" ;;
    4) name=$(printf 'caf\303\251 %s' "$gi") ;;
    5) name="Z$gi" ;;
    6) name="_$gi" ;;
    7) name=$(printf '\342\202\254%s' "$gi") ;;
    *) name="f$gi" ;;
    esac
    p="$parent/$name"
    [ -e "$p" ] && continue
    case $(rand 10) in
    0 | 1 | 2)
      mkdir "$p"
      printf '%s\n' "$p" >>"$T/dirs"
      ;;
    *)
      case $(rand 6) in
      0) size=0 ;;
      1) size=1 ;;
      2) size=131072 ;;
      3) size=$((131072 + $(rand 70000))) ;;
      *) size=$(rand 5000) ;;
      esac
      head -c "$size" /dev/urandom >"$p"
      case $(rand 5) in
      0) chmod 755 "$p" ;;
      1) chmod 700 "$p" ;;
      2) chmod 610 "$p" ;;
      3) chmod 600 "$p" ;;
      *) chmod 644 "$p" ;;
      esac
      ;;
    esac
  done
}

# A fixed bundle with the orderings a per-directory sort gets wrong.
tricky="$T/tricky"
mkdir -p "$tricky/a/b" "$tricky/a b" "$tricky/empty" "$tricky/z/empty too"
printf 'skill\n' >"$tricky/SKILL.md"
printf 1 >"$tricky/a-b"
printf 2 >"$tricky/a/b/c"
printf 3 >"$tricky/a.b"
printf 4 >"$tricky/a0"
printf 5 >"$tricky/a b/x y"
printf 6 >"$tricky/$(printf 'caf\303\251')"
printf 7 >"$tricky/A"
chmod 755 "$tricky/a/b/c"

echo "1..$((N_RANDOM + 17))"

# 1..N: random bundles agree with the reference implementation
i=0
while [ "$i" -lt "$N_RANDOM" ]; do
  i=$((i + 1))
  b="$T/rnd$i"
  gen_bundle "$b"
  agrees "random bundle $i: skillrun and bundle_digest.py agree" "$b"
done

agrees "a-b / a.b / a/b / spaces / UTF-8 / empty dirs agree" "$tricky"

# A bundle big enough for --digest to hash in two parts on two threads,
# with a 9 MiB file read ahead on a third (bundle.c, sha256.c).
big="$T/big"
mkdir -p "$big/a/b" "$big/z"
printf -- '---\nname: big\ndescription: big bundle\n---\n' >"$big/SKILL.md"
head -c $((600 * 4096)) /dev/urandom | (cd "$big/a/b" && split -b 4096 -a 3 -d - f)
head -c $((9 * 1024 * 1024 + 7)) /dev/urandom >"$big/z/big"
agrees "601 files and a 9 MiB file (hashed on threads) agree" "$big"
rm -rf "$big"

# A root wide enough for its subtrees to be walked on two threads
# (bundle.c, walk_root: past 256 entries, with names left to share),
# names that sort differently per directory and globally among them.
wide="$T/wide"
mkdir -p "$wide/a"
printf -- '---\nname: wide\ndescription: wide bundle\n---\n' >"$wide/SKILL.md"
head -c $((300 * 64)) /dev/urandom | (cd "$wide/a" && split -b 64 -a 3 -d - f)
for d in b b-c b.c c d e f; do
  mkdir -p "$wide/$d/x"
  head -c $((30 * 32)) /dev/urandom | (cd "$wide/$d" && split -b 32 -a 2 -d - g)
  printf '%s' "$d" >"$wide/$d/x/y"
  chmod 755 "$wide/$d/g01"
done
agrees "a wide root (walked on two threads) agrees" "$wide"
rm -rf "$wide"

# The reference program printed in skillrun-bundle(5) computes the same
# digest (the man page is a tested artifact).
sed -n '/^\.SH COMPUTING/,/^\.EE/p' "$TOP_SRCDIR/man/skillrun-bundle.5" |
  sed -n '/^\.EX/,/^\.EE/p' | sed -e '1d' -e '$d' -e 's/\\e/\\/g' \
  >"$T/manref.py"
manref_ok=1
for b in "$tricky" "$T"/rnd*; do
  want=$(sr_digest "$b") || want="error"
  got=$("$PYTHON3" "$T/manref.py" "$b" 2>&1) || got="failed: $got"
  if [ "$got" != "$want" ]; then
    manref_ok=0
    break
  fi
done
if [ "$manref_ok" = 1 ] && [ -s "$T/manref.py" ]; then
  ok "the man page's Python reference agrees"
else
  not_ok "the man page's Python reference agrees" "$b" "man page: $got" \
    "skillrun: $want"
fi

# Sensitivity: each change must change the digest.
base=$(sr_digest "$tricky")
changed() { # changed TEXT: compares the current digest of $tricky with $base
  now=$(sr_digest "$tricky") || now="error"
  if [ -n "$base" ] && [ "$now" != "$base" ] && [ "$now" != error ]; then
    ok "$1 changes the digest"
  else
    not_ok "$1 changes the digest" "before: $base" "after:  $now"
  fi
}

printf 3 >"$tricky/a-b" # was "1": one byte differs, same size
changed "one changed byte"
printf 1 >"$tricky/a-b"

chmod +x "$tricky/a0"
changed "chmod +x"
chmod -x "$tricky/a0"

: >"$tricky/a/new-empty"
changed "an added empty file"
rm "$tricky/a/new-empty"

mv "$tricky/a.b" "$tricky/a.c"
changed "a rename"
mv "$tricky/a.c" "$tricky/a.b"

now=$(sr_digest "$tricky")
if [ -n "$base" ] && [ "$now" = "$base" ]; then
  ok "undoing every change restores the digest"
else
  not_ok "undoing every change restores the digest" "$base" "$now"
fi

# --verbose: the records, then the digest line; the records hash to it.
"$SKILLRUN" --digest --verbose "$tricky" >"$T/verbose" 2>"$T/err"
rc=$?
last=$(tail -n 1 "$T/verbose")
sed '$d' "$T/verbose" >"$T/records"
hashed="sha256:$("$PYTHON3" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$T/records")"
if [ "$rc" = 0 ] && [ "$last" = "$base  $tricky" ] && [ "$hashed" = "$base" ]; then
  ok "--digest --verbose: records hash to the printed digest"
else
  not_ok "--digest --verbose: records hash to the printed digest" \
    "rc=$rc last=$last" "hash of records: $hashed" "digest: $base"
fi

"$PYTHON3" "$REF" --verbose "$tricky" | sed '$d' >"$T/records.py"
if cmp -s "$T/records" "$T/records.py"; then
  ok "--verbose records equal the reference's records"
else
  not_ok "--verbose records equal the reference's records" \
    "$(diff "$T/records" "$T/records.py" | head -n 10)"
fi

if grep -q '^d 0755 0 - z/empty too/$' "$T/records" &&
  grep -q '^d 0755 0 - empty/$' "$T/records"; then
  ok "empty directories have records"
else
  not_ok "empty directories have records"
fi

# A bundle path with a newline, a carriage return and a backslash: one
# line, escaped as sha256sum(1) escapes such a name (a leading backslash),
# so that a name cannot print a line of its own.
cr=$(printf '\r')
odd="$T/odd
sha256:0000  forged\\ ${cr}x"
cp -R "$tricky" "$odd"
want=$(sr_digest "$tricky")
"$SKILLRUN" --digest "$odd" >"$T/out" 2>"$T/err"
rc=$?
lines=$(wc -l <"$T/out")
exp=$(printf '\\%s  %s/odd\\nsha256:0000  forged\\\\ \\rx' "$want" "$T")
if [ "$rc" = 0 ] && [ "$lines" = 1 ] && [ "$(cat "$T/out")" = "$exp" ]; then
  ok "a path with a newline, CR and backslash: one line, escaped as sha256sum does"
else
  not_ok "a path with a newline, CR and backslash: one line, escaped as sha256sum does" \
    "rc=$rc, $lines lines" "got:  $(od -c "$T/out" | head -n 8)" "want: $exp"
fi
rm -rf "$odd"

# Standard output that cannot be written (a full disk): exit 125 and one
# line saying so, not a silent failure.
"$SKILLRUN" --digest "$tricky" >/dev/full 2>"$T/err"
rc=$?
if [ "$rc" = 125 ] && grep -q "cannot write the digest to standard output: No space left" "$T/err"; then
  ok "an unwritable stdout: exit 125, saying so"
else
  not_ok "an unwritable stdout: exit 125, saying so" "rc=$rc" "stderr: $(cat "$T/err")"
fi

# Refusals: exit 123, the offending path on stderr, nothing on stdout.
refused() { # refused TEXT NEEDLE
  "$SKILLRUN" --digest "$tricky" >"$T/out" 2>"$T/err"
  rc=$?
  if [ "$rc" = 123 ] && grep -qF -- "$2" "$T/err" && ! [ -s "$T/out" ]; then
    ok "$1 refused (123, path named)"
  else
    not_ok "$1 refused (123, path named)" "rc=$rc" "stderr: $(cat "$T/err")" \
      "stdout: $(cat "$T/out")"
  fi
}

ln -s ../../SKILL.md "$tricky/a/b/link"
refused "a symlink inside" "a/b/link"
rm "$tricky/a/b/link"

mkfifo "$tricky/a b/fifo"
refused "a FIFO inside" "a b/fifo"
rm "$tricky/a b/fifo"

mv "$tricky/SKILL.md" "$tricky/README.md"
refused "a bundle without SKILL.md" "SKILL.md"
mv "$tricky/README.md" "$tricky/SKILL.md"

exit 0
