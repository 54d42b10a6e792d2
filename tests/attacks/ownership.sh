#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the workspace is owned, not trusted (issue 14,
# item 2): the workspace root, the tenant directory and the run directory
# are checked the way doas(1) checks its configuration: owned by the
# caller (or root), not writable by group or others; a shared root needs
# the sticky bit.  Another user who pre-creates a tenant directory (and so
# could rename a run's directory under it later) or the run markers'
# directory .active is refused by name; so is a symbolic link of theirs on
# the workspace root's path, which would send the runs into any directory
# of the caller's or root's, or on an --input's, --audit-file's or
# --sign's --signature path.  A profile search directory reached through
# such a link (another user's $HOME after su) is skipped, not followed,
# and the search goes on.  As root and as an unprivileged user; a
# refused run leaves nothing behind, not even its line in the runs index
# of a workspace root it was refused.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
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
# planted MODE NAME: a new workspace root $W of the caller's ($me) in
# which another user ($other) made NAME first; then one run in it, for
# tenant acme.
planted() {
  W=$(tmpdir)
  chown "$me" "$W"
  mkdir "$W/$2"
  chown "$other" "$W/$2"
  try "$1" "$W" --tenant acme
}

for mode in root user; do
  if [ $mode = user ]; then me=$NOBODY other=$OTHER; else me=0 other=$NOBODY; fi
  owner_name=$(getent passwd "$other" | cut -d: -f1)

  # A tenant directory another user made first.
  planted $mode acme
  is "$mode: a tenant directory of uid $other is refused (125)" "$rc" 125
  check "$mode: ... the message names the path and its owner" \
    grep -q "tenant directory $W/acme belongs to uid $other${owner_name:+ ($owner_name)}" "$ERR"
  is "$mode: ... and nothing was made in it" "$(ls -A "$W/acme")" ""
  is "$mode: ... recorded as an error (workspace)" "$(field "$AUDIT" error .reason)" workspace

  # A tenant directory of the caller's that others may write.
  mkdir "$W/open"
  chown "$me" "$W/open"
  chmod 777 "$W/open"
  try $mode "$W" --tenant open
  is "$mode: a tenant directory writable by others is refused (125)" "$rc" 125
  check "$mode: ... saying so" grep -q "tenant directory $W/open is writable by others (mode 0777)" "$ERR"
  # A group others are in ("nogroup", not uid $NOBODY's own: its name
  # differs).
  chmod 770 "$W/open"
  chgrp "$NOBODY" "$W/open"
  try $mode "$W" --tenant open
  is "$mode: ... and one its group may write, a group others are in (125)" "$rc" 125
  check "$mode: ... saying so" grep -q "is writable by its group (mode 0770)" "$ERR"
  # Its owner's private group (Debian's umask 002), as for a profile:
  # root's group 0 where nobody else is in it.
  if [ $mode = root ] && root_group_private; then
    chgrp 0 "$W/open"
    try $mode "$W" --tenant open
    is "$mode: ... while one its owner's private group may write is used" "$rc" 0
    G=$(tmpdir)
    chmod 2775 "$G"
    try $mode "$G"
    is "$mode: ... and so is such a workspace root (mode 2775)" "$rc" 0
  elif [ $mode = root ]; then
    pass "# SKIP $mode: group 0 has members here, so it is no private group"
    pass "# SKIP $mode: group 0 has members here, so it is no private group"
  fi

  # A workspace root of another user's.
  W=$(tmpdir)
  chown "$other" "$W"
  try $mode "$W"
  is "$mode: a workspace root of uid $other is refused (125)" "$rc" 125
  check "$mode: ... naming its owner" grep -q "workspace root $W belongs to uid $other" "$ERR"
  # Not even the refused run's line in the runs index (.metrics): the
  # directory is not the caller's to fill, and its owner's own runs could
  # not count in an index another user made there.
  is "$mode: ... and nothing was made in it" "$(ls -A "$W")" ""

  # A workspace root in a directory of another user's (or one others may
  # write): its owner can rename the root away and put a directory of
  # theirs at the run_dir path the audit names (the fresh-eyes finding: a
  # root in /tmp/proj, which another user made first, mode 0777).
  # Refused, and one still to be made is not made there.
  P=$(tmpdir)
  chown "$other" "$P"
  chmod 777 "$P"
  try $mode "$P/ws"
  is "$mode: a workspace root to be made in a directory of uid $other is refused (125)" "$rc" 125
  check "$mode: ... naming the directory and its owner" \
    grep -q "workspace root $P/ws is in directory $P of uid $other, who can rename or replace it" "$ERR"
  is "$mode: ... recorded as an error (workspace)" "$(field "$AUDIT" error .reason)" workspace
  is "$mode: ... and nothing was made there" "$(ls -A "$P")" ""
  mkdir "$P/ws"
  chown "$me" "$P/ws"
  try $mode "$P/ws"
  is "$mode: ... one of the caller's already there is refused too (125)" "$rc" 125
  check "$mode: ... naming the directory" grep -q "workspace root $P/ws is in directory $P of uid $other" "$ERR"
  is "$mode: ... and nothing was made in it" "$(ls -A "$P/ws")" ""
  # Two levels above: a directory of the caller's that others may write
  # (as root, one of root's: the administrator's layout, whatever its
  # mode, as a Kubernetes emptyDir is 0777).
  Q=$(tmpdir)
  mkdir -p "$Q/a/ws"
  chown -R "$me" "$Q"
  chmod 777 "$Q"
  try $mode "$Q/a/ws"
  if [ $mode = user ]; then
    is "$mode: a workspace root below a directory of the caller's others may write is refused (125)" "$rc" 125
    check "$mode: ... naming that directory" \
      grep -q "workspace root $Q/a/ws is in directory $Q, writable by others (mode 0777)" "$ERR"
    chmod 1777 "$Q"
    try $mode "$Q/a/ws"
    is "$mode: ... and accepted once it is sticky (as /tmp)" "$rc" 0
  else
    is "$mode: a workspace root below a directory of root's others may write is accepted" "$rc" 0
  fi

  # A marker directory (.active) another user made: they could remove a
  # live run's marker, or plant one.
  planted $mode .active
  is "$mode: a .active of uid $other is refused (125)" "$rc" 125
  check "$mode: ... naming it and its owner" \
    grep -q "run marker directory $W/.active belongs to uid $other" "$ERR"
  is "$mode: ... before the run directory was made" "$(ls -A "$W/acme")" ""

  # A shared root: writable by everyone, only with the sticky bit.
  W=$(tmpdir)
  chmod 777 "$W"
  try $mode "$W" --tenant t-$mode
  is "$mode: a 0777 workspace root is refused (125)" "$rc" 125
  check "$mode: ... saying that a shared root needs the sticky bit" \
    grep -q "writable by others (mode 0777); a shared root needs the sticky bit" "$ERR"
  is "$mode: ... and nothing was made in it" "$(ls -A "$W")" ""
  chmod 1777 "$W"
  try $mode "$W" --tenant t-$mode
  is "$mode: a 1777 (sticky) workspace root is accepted" "$rc" 0
  is "$mode: ... the tenant directory is the caller's, 0700" "$(stat -c %u:%a "$W/t-$mode")" "$me:700"
  is "$mode: ... and so is the run directory" "$(stat -c %u:%a "$W/t-$mode/o$n")" "$me:700"

  # A symbolic link another user planted on the workspace root's path (in
  # a directory of theirs, or a shared one they may write): it would send
  # the caller's runs, and the directories made for them, into any
  # directory of the caller's or root's it names (/etc, say), which
  # passes every ownership check.  Refused before anything is made.
  V=$(tmpdir) # the caller's own directory the link names
  chown "$me" "$V"
  A=$(tmpdir) # a directory of the other user's
  chown "$other" "$A"
  ln -s "$V" "$A/ws"
  chown -h "$other" "$A/ws"
  try $mode "$A/ws" --tenant acme
  is "$mode: a workspace root through a link of uid $other is refused (125)" "$rc" 125
  check "$mode: ... naming the link and its owner" \
    grep -q "symbolic link $A/ws belongs to uid $other" "$ERR"
  is "$mode: ... recorded as an error (workspace)" "$(field "$AUDIT" error .reason)" workspace
  try $mode "$A/ws/new" --tenant acme
  is "$mode: ... a root to be made below that link is refused (125)" "$rc" 125
  is "$mode: ... and nothing was made where the link points" "$(ls -A "$V")" ""
  # A link of the caller's own is followed as before.
  ln -s "$V" "$V.mine"
  chown -h "$me" "$V.mine"
  try $mode "$V.mine/new" --tenant acme
  is "$mode: ... a root through a link of the caller's own is accepted" "$rc" 0
  is "$mode: ... and made where the link points" "$(stat -c %u "$V/new/acme")" "$me"
  rm -f "$V.mine"
  # --metrics and --gc do not go through the other user's link either: it
  # would have the runs of the root it names counted, or cleaned, as this
  # root's.
  [ "$mode" = user ] && pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --) || pre=()
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$A/ws/new" >"$T/m-$mode.prom" 2>"$T/m-$mode.err"
  is "$mode: --metrics through a link of uid $other is refused (125)" "$?" 125
  check "$mode: ... naming the link" grep -q "symbolic link $A/ws belongs to uid $other" "$T/m-$mode.err"
  is "$mode: ... and counts no run" "$(grep -c '^skillrun_runs_total' "$T/m-$mode.prom")" 0
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$A/ws/new" >/dev/null 2>"$T/g-$mode.err"
  is "$mode: --gc through that link is refused (125)" "$?" 125
  check "$mode: ... naming the link" grep -q "symbolic link $A/ws belongs to uid $other" "$T/g-$mode.err"
  "${pre[@]}" "$SKILLRUN" --metrics --workspace-root "$V/new" >"$T/m-$mode.prom" 2>&1
  is "$mode: ... while --metrics of the root itself works" "$?" 0

  # The same link on an --input's path: the other user could point it at
  # a directory of the caller's, and have a file only the caller may read
  # copied in for the skill (the last component alone was opened without
  # following a link).
  S=$(tmpdir)
  chown "$me" "$S"
  chmod 700 "$S"
  echo "the caller's secret" >"$S/data"
  chown "$me" "$S/data"
  chmod 600 "$S/data"
  ln -s "$S" "$A/in"
  chown -h "$other" "$A/in"
  try $mode "$V/new" --input "$A/in/data"
  is "$mode: an --input through a link of uid $other is refused (123)" "$rc" 123
  check "$mode: ... saying why" grep -q "reached through a symbolic link of uid $other" "$ERR"
  is "$mode: ... recorded as input_rejected (input_invalid)" \
    "$(field "$AUDIT" input_rejected .reason)" input_invalid
  # And with a slash after the link: openat(2) follows a last link before
  # a slash whatever O_NOFOLLOW says, and the other user's directory was
  # opened without a look at whose link led there.
  try $mode "$V/new" --input "$A/in/"
  is "$mode: an --input of the link with a slash after it is refused (123)" "$rc" 123
  check "$mode: ... saying whose link it is" grep -q "reached through a symbolic link of uid $other" "$ERR"
  ln -s "$S" "$S.mine"
  chown -h "$me" "$S.mine"
  try $mode "$V/new" --input "$S.mine/data"
  is "$mode: ... one through a link of the caller's own is copied" "$rc" 0
  rm -f "$S.mine"
  # And on --audit-file's: the file would be made in the caller's
  # directory the link names (root's /etc/sudoers.d, say).
  "${pre[@]}" "$SKILLRUN" --workspace-root "$V/new" --audit-file "$A/in/made.audit" \
    "$B" -- /bin/true >/dev/null 2>"$T/af-$mode.err"
  is "$mode: an --audit-file through a link of uid $other is refused (125)" "$?" 125
  check "$mode: ... naming the link" grep -q "symbolic link $A/in belongs to uid $other" "$T/af-$mode.err"
  is "$mode: ... and no file was made where it points" "$(ls -A "$S")" data
  # And on --sign's --signature OUT: the same, for a signed statement.
  K=$(tmpdir)
  openssl genpkey -algorithm ed25519 -out "$K/sign.key" 2>/dev/null
  mkdir "$K/signed"
  printf -- '---\nname: signed\ndescription: A test skill.\nmetadata:\n  version: 1.0.0\n---\n' \
    >"$K/signed/SKILL.md"
  chown -R "$me" "$K"
  chmod 600 "$K/sign.key"
  "${pre[@]}" "$SKILLRUN" --sign "$K/sign.key" --tier official --signature "$A/in/made.sig" \
    "$K/signed" >/dev/null 2>"$T/sg-$mode.err"
  is "$mode: --sign through a link of uid $other is refused (125)" "$?" 125
  check "$mode: ... naming the link" grep -q "symbolic link $A/in belongs to uid $other" "$T/sg-$mode.err"
  is "$mode: ... and no statement was made where it points" "$(ls -A "$S")" data
  "${pre[@]}" "$SKILLRUN" --sign "$K/sign.key" --tier official --signature "$K/made.sig" \
    "$K/signed" >/dev/null 2>"$T/sg-$mode.err"
  is "$mode: ... while one made in the caller's own directory is written" "$?" 0

  # A trust file (--signature) through the same link: refused (123) with
  # one line saying why, and no strerror(ENOLINK) ("Link has been
  # severed", the code that carries the refusal) tacked on, in the
  # message or on the record.
  echo "not a statement" >"$S/token"
  chown "$me" "$S/token"
  try $mode "$V/new" --signature "$A/in/token"
  is "$mode: a --signature through a link of uid $other is refused (123)" "$rc" 123
  check "$mode: ... saying why" grep -q "reached through a symbolic link of uid $other" "$ERR"
  check "$mode: ... and nothing else" not grep -q "severed" "$ERR" "$AUDIT"

  # A profile search directory reached through that link: another user's
  # $HOME (or $XDG_CONFIG_HOME) that su(1) or sudo -E carried over, with a
  # link of theirs on the way (~/.config to a dotfiles checkout).  It is
  # skipped, as one that cannot be searched is, not the end of the
  # search: the profile is found in the next directory, as it was before
  # the link was refused (the whole run was refused, 125).
  mkdir -p "$S/profiles" "$K/profiles"
  printf 'include default\n' >"$K/profiles/rv.profile"
  chown -R "$me" "$S/profiles" "$K/profiles"
  chmod 755 "$K" "$K/profiles"
  chmod 644 "$K/profiles/rv.profile"
  SKILLRUN_PROFILE_PATH="$A/in/profiles:$K/profiles" try $mode "$V/new" -p rv
  is "$mode: -p NAME with a search directory through a link of uid $other: found in the next one" "$rc" 0
  SKILLRUN_PROFILE_PATH="$A/in/profiles:$K/profiles" try $mode "$V/new" -p rv-none
  is "$mode: ... a name found nowhere is still an error (125)" "$rc" 125
  check "$mode: ... whose message says the link was not followed" \
    grep -q "$A/in/profiles/rv-none.profile (through a symbolic link of uid $other, not followed)" "$ERR"
  # The search does not go through the link to what it names, either: a
  # profile the caller keeps there is not used.
  printf 'include default\nnetwork none\n' >"$S/profiles/rv.profile"
  printf 'include default\nnetwork nonsense\n' >"$K/profiles/rv.profile"
  chown "$me" "$S/profiles/rv.profile" "$K/profiles/rv.profile"
  SKILLRUN_PROFILE_PATH="$A/in/profiles:$K/profiles" try $mode "$V/new" -p rv
  is "$mode: ... nor is the profile the link leads to used (the next one's error, 125)" "$rc" 125
  check "$mode: ... naming the next one" grep -q "$K/profiles/rv.profile" "$ERR"
done
host_unchanged ownership
finish
