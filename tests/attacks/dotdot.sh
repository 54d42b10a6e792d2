#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite: a ".." on a path the caller gives, out of
# another user's directory.  Every path skillrun opens for the caller is
# walked one component at a time from descriptors, and ".." is opened
# from the directory reached so far: it is that directory's parent at
# the moment of the step, not the one the path names.  The directory's
# owner can move it (rename needs write access to the directory moved),
# between two steps of the walk, under a directory of theirs whose
# ".." chain leads wherever they like: the rest of the path then names a
# file they made (an --input, a profile, a trust file of theirs) or one
# of the caller's the caller did not mean to pass.  That is what another
# user's symbolic link on the path does, which the walk already refuses
# (ownership.sh).  So a ".." is taken only out of a directory of the
# caller's or root's, like systemd's chase() with CHASE_SAFE: refused
# with the same exit status as such a link, naming its owner.  Owning
# it is not needed to move it: writing it and its parent is (a shared
# drop directory, mode 0777, of the caller's own); so a ".." is also
# refused out of a directory others may write, unless the directory it
# reaches is one nobody else owns or may write (they could not have put
# it there).  The race itself is not run (one step of a walk is not a
# window a test can hit every time), but its relative-path form needs
# none: a caller whose shell sits in a directory another user moves
# walks "../.." from wherever it now is.  What is asserted is that no
# path with such a ".." is walked, for each kind of path the walker
# serves, and that a ".." that cannot have been moved still is.  As root
# and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller against another local user (files chowned,
# setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

OTHER=$((NOBODY - 1)) # another unprivileged uid, for the user mode

n=0
# try MODE ROOT [SKILLRUN-OPTION...]: one run in workspace root ROOT.
try() {
  local mode=$1 w=$2 pre=()
  shift 2
  n=$((n + 1))
  [ "$mode" = user ] && pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)
  ERR=$T/o$n.err AUDIT=$T/o$n.audit
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "o$n" --audit-file "$AUDIT" \
    "$@" "$B" -- /bin/true >/dev/null 2>"$ERR"
  rc=$?
}
chmod 777 "$T" # the audit and error files of both modes

for mode in root user; do
  if [ $mode = user ]; then me=$NOBODY other=$OTHER; else me=0 other=$NOBODY; fi
  [ "$mode" = user ] && pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --) || pre=()
  # P holds the other user's directory A (with A/sub) and the caller's S
  # side by side: "$A/sub/../../s/..." names the caller's S through it.
  P=$(tmpdir)
  A=$P/a
  S=$P/s
  mkdir -p "$A/sub" "$S/sub" "$S/profiles"
  chown -R "$other" "$A"
  echo "the caller's data" >"$S/data"
  printf 'include default\n' >"$S/profiles/dd.profile"
  chown -R "$me" "$S"
  chmod 755 "$S" "$S/profiles"
  chmod 644 "$S/data" "$S/profiles/dd.profile"
  W=$(tmpdir)
  chown "$me" "$W"
  through="$A/sub/../../s" # S, through ".." out of A/sub and A

  try $mode "$W" --input "$through/data"
  is "$mode: an --input through \"..\" out of uid $other's directory is refused (123)" "$rc" 123
  check "$mode: ... saying why" \
    grep -q "is reached through \"..\" out of a directory of uid $other, who can move it" "$ERR"
  is "$mode: ... recorded as input_rejected (input_invalid)" \
    "$(field "$AUDIT" input_rejected .reason)" input_invalid
  # From a working directory of theirs, with a relative path.
  (cd "$A/sub" && try $mode "$W" --input ../../s/data && echo "$rc" >"$T/rel.rc")
  n=$((n + 1)) # the subshell's execution id
  is "$mode: ... and a relative one from their working directory (123)" "$(cat "$T/rel.rc")" 123
  # Out of the caller's own directory, or root's, ".." is walked as before.
  try $mode "$W" --input "$S/sub/../data"
  is "$mode: ... while one out of the caller's own directory is copied" "$rc" 0
  try $mode "$W" --input "/usr/..$S/data"
  is "$mode: ... and one out of a directory of root's" "$rc" 0
  # Out of another user's directory that cannot have been moved: its
  # parent is the caller's, and nobody else may write it.
  mkdir "$S/theirs"
  chown "$other" "$S/theirs"
  try $mode "$W" --input "$S/theirs/../data"
  is "$mode: ... and one out of uid $other's directory in one nobody else may write" "$rc" 0

  # The caller's own drop directory D, mode 0777 in a shared 0777 one,
  # with F beside it: the other user may move both (they may write them
  # and their parent) and does, F under a directory of theirs and D under
  # F, while the caller's shell sits in D.  "../../data" from D then
  # reads their file, not the caller's $H/data.
  H=$P/home
  mkdir -p "$H/shared/D" "$H/shared/F" "$P/att"
  echo "the caller's data" >"$H/data"
  echo "the other user's data" >"$P/att/data"
  chown -R "$me" "$H"
  chmod 755 "$H"
  chmod 777 "$H/shared" "$H/shared/D" "$H/shared/F"
  chown -R "$other" "$P/att"
  chmod 755 "$P/att"
  chmod 644 "$H/data" "$P/att/data"
  (cd "$H/shared/D" && try $mode "$W" --input ../../data && echo "$rc" >"$T/rel.rc")
  n=$((n + 1)) ERR=$T/o$((n)).err
  is "$mode: from the caller's shared 0777 directory, ../../data is refused (123)" "$(cat "$T/rel.rc")" 123
  check "$mode: ... saying why" \
    grep -q "is reached through \"..\" out of a directory others may write (mode 0777) and so move" "$ERR"
  ( cd "$H/shared/D" &&
    setpriv --reuid="$other" --regid="$other" --clear-groups -- \
      sh -c 'mv "$1/shared/F" "$2/F" && mv "$1/shared/D" "$2/F/D"' sh "$H" "$P/att" &&
    try $mode "$W" --input ../../data && echo "$rc" >"$T/rel.rc" )
  n=$((n + 1))
  is "$mode: ... and after uid $other moved it (123)" "$(cat "$T/rel.rc")" 123

  try $mode "$through/ws" --tenant acme
  is "$mode: a workspace root through that \"..\" is refused (125)" "$rc" 125
  check "$mode: ... naming the directory and its owner" \
    grep -q "workspace root $through/ws: \"..\" out of $A/sub, a directory of uid $other" "$ERR"
  is "$mode: ... and nothing was made" "$(ls "$S")" "$(printf 'data\nprofiles\nsub\ntheirs')"

  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --audit-file "$through/made.audit" \
    "$B" -- /bin/true >/dev/null 2>"$T/af-$mode.err"
  is "$mode: an --audit-file through that \"..\" is refused (125)" "$?" 125
  check "$mode: ... naming the directory" \
    grep -q "cannot create audit file $through/made.audit: \"..\" out of $A/sub" "$T/af-$mode.err"
  is "$mode: ... and no file was made" "$(ls "$S")" "$(printf 'data\nprofiles\nsub\ntheirs')"

  try $mode "$W" -p "$through/profiles/dd.profile"
  is "$mode: a profile through that \"..\" is refused (125)" "$rc" 125
  check "$mode: ... saying why" grep -q "reached through \"..\" out of a directory of uid $other" "$ERR"
  try $mode "$W" -p "$S/sub/../profiles/dd.profile"
  is "$mode: ... while the same profile by a path of the caller's is used" "$rc" 0
  # A profile search directory through it is skipped, like one that
  # cannot be searched, and the message says why.
  SKILLRUN_PROFILE_PATH="$through/profiles" try $mode "$W" -p dd
  is "$mode: -p NAME with the search directory through that \"..\" is not found (125)" "$rc" 125
  check "$mode: ... whose message says it was not walked" \
    grep -q "$through/profiles/dd.profile (through \"..\" out of a directory another user may move, not walked)" "$ERR"

  K=$(tmpdir)
  openssl genpkey -algorithm ed25519 -out "$K/sign.key" 2>/dev/null
  mkdir "$K/signed"
  printf -- '---\nname: signed\ndescription: A test skill.\nmetadata:\n  version: 1.0.0\n---\n' \
    >"$K/signed/SKILL.md"
  chown -R "$me" "$K"
  chmod 600 "$K/sign.key"
  "${pre[@]}" "$SKILLRUN" --sign "$K/sign.key" --tier official --signature "$through/made.sig" \
    "$K/signed" >/dev/null 2>"$T/sg-$mode.err"
  is "$mode: --sign's --signature through that \"..\" is refused (125)" "$?" 125
  check "$mode: ... naming the directory" grep -q "\"..\" out of $A/sub, a directory of uid $other" "$T/sg-$mode.err"
  is "$mode: ... and no statement was made" "$(ls "$S")" "$(printf 'data\nprofiles\nsub\ntheirs')"
done
host_unchanged dotdot
finish
