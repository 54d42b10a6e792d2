#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, profiles found by name (skillrun.profile(5),
# SEARCH PATH): another local user's profile is never used.  `-p NAME`
# searches directories the environment names ($XDG_CONFIG_HOME, $HOME),
# which su and sudo -E carry from one user to another; a profile there
# decides what the untrusted skill gets (env-keep, network, seccomp-allow).
# Before the fix root, with the XDG_CONFIG_HOME of the user it came from,
# ran `-p snoop` with that user's snoop.profile, whose env-keep handed
# root's secret environment to the skill.  Now a profile found by name
# must belong to the caller or root and be writable by nobody else, or the
# run stops (125) naming the file and its owner, and the skill never runs.
# As root and as an unprivileged user; a caller's own profile is used.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

# The other local user: for a root caller the test user, for the test
# user a uid that is neither (it need not exist).
OTHER=$((NOBODY - 1))
[ "$OTHER" -ne 0 ] || OTHER=$((NOBODY + 1))
SECRET="token-$$-$RANDOM"
# A throwaway user whose primary group is root's (removed at the end).
MEMBER=srpo$$
trap 'userdel "$MEMBER" 2>/dev/null; cleanup' EXIT

# home OWNER MODE: a home whose ~/.config/skillrun/profiles/snoop.profile
# (env-keep of the secret) belongs to OWNER with MODE; its path.
nh=0
home() {
  local h
  nh=$((nh + 1))
  h=$T/home$nh
  mkdir -p "$h/.config/skillrun/profiles"
  printf 'include default\nenv-keep SR_TEST_SECRET\n' >"$h/.config/skillrun/profiles/snoop.profile"
  chown -R "$1" "$h"
  chmod "$2" "$h/.config/skillrun/profiles/snoop.profile"
  chmod a+rx "$h" "$h/.config" "$h/.config/skillrun" "$h/.config/skillrun/profiles"
  echo "$h"
}

n=0
# try MODE ENV... -- SKILLRUN-ARGS...: one run with the secret in the
# caller's environment, whose skill writes what it sees of it to
# outputs/ran; sets $rc, $AUDIT, $ERR and $RAN (the secret when the skill
# saw it, "empty" when it ran without, "no" when it never ran).
try() {
  local mode=$1 w pre=() env=()
  shift
  while [ "$1" != -- ]; do
    env+=("$1")
    shift
  done
  shift
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(); fi
  AUDIT=$w/p$n.audit ERR=$w/p$n.err
  timeout 60 env "${env[@]}" SR_TEST_SECRET="$SECRET" "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "p$n" \
    --audit-file "$AUDIT" "$@" "$B" -- /bin/sh -c 'printf "%s" "${SR_TEST_SECRET:-empty}" >/workspace/outputs/ran' \
    >/dev/null 2>"$ERR"
  rc=$?
  RAN=no
  [ -e "$w/default/p$n/outputs/ran" ] && RAN=$(cat "$w/default/p$n/outputs/ran")
}

for mode in root user; do
  if [ "$mode" = user ]; then me=$NOBODY other=$OTHER; else me=0 other=$NOBODY; fi

  # The control: the caller's own profile, found by name, is used.
  h=$(home "$me" 644)
  try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
  is "$mode: the caller's own profile found by name is used (its env-keep)" "$rc:$RAN" "0:$SECRET"

  h=$(home "$other" 644)
  try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
  is "$mode: another user's profile found in \$XDG_CONFIG_HOME stops the run (125)" "$rc" 125
  check "$mode: ... naming the file and its owner" \
    grep -q "profile $h/.config/skillrun/profiles/snoop.profile belongs to uid $other" "$ERR"
  is "$mode: ... the skill never ran (nor saw the caller's secret)" "$RAN" no
  is "$mode: ... recorded as config_invalid" "$(field "$AUDIT" error .reason)" config_invalid
  is "$mode: ... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error

  # The same through ~/.config, with no XDG_CONFIG_HOME.
  try $mode -u XDG_CONFIG_HOME HOME="$h" -- -p snoop
  is "$mode: another user's profile found in \$HOME/.config stops the run (125)" "$rc:$RAN" 125:no

  # Through an include by name, from a profile the caller names itself.
  printf 'include snoop\n' >"$T/inc-$mode.profile"
  chown "$me" "$T/inc-$mode.profile"
  chmod 644 "$T/inc-$mode.profile"
  try $mode XDG_CONFIG_HOME="$h/.config" -- -p "$T/inc-$mode.profile"
  is "$mode: ... and when an include names it" "$rc:$RAN" 125:no
  check "$mode: ... naming the included file" \
    grep -q "snoop.profile belongs to uid $other" "$ERR"

  # The caller's own, but anyone may rewrite it.
  h=$(home "$me" 666)
  try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
  is "$mode: a profile found by name that others may write stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying so" grep -q "snoop.profile is writable by others (mode 0666)" "$ERR"

  # Group-writable: used where the group is the owner's own (root's
  # "root", with no other member here), refused where it is shared
  # (uid 65534's group is "nogroup").
  h=$(home "$me" 664)
  if [ "$mode" = root ]; then
    chgrp 0 "$h/.config/skillrun/profiles/snoop.profile"
    try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
    if root_group_private; then
      is "$mode: a profile its owner's own group may write is used" "$rc:$RAN" "0:$SECRET"
    else
      pass "# SKIP $mode: group 0 has members here, so it is no private group"
    fi
    # A user whose primary group is root's own is in that group without
    # being listed in it, and may write that profile: it is not used.
    # Before the fix only the listed members were looked at.
    if useradd -M -N -g 0 -d /nonexistent -s /usr/sbin/nologin "$MEMBER"; then
      check "$mode: ... $MEMBER, whose primary group is 0, may write it" \
        setpriv --reuid="$MEMBER" --regid=0 --init-groups -- sh -c ": >>'$h/.config/skillrun/profiles/snoop.profile'"
      try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
      is "$mode: ... so then it stops the run (125)" "$rc:$RAN" 125:no
      check "$mode: ... saying so" grep -q "snoop.profile is writable by its group (mode 0664)" "$ERR"
      userdel "$MEMBER" || diag "could not remove user $MEMBER"
    else
      fail "$mode: useradd $MEMBER"
    fi
    # Root's own group may write it, and through an access ACL uid
    # $NOBODY too: the mode's group bits (0664) are then the ACL's mask,
    # not the group's own write.  Before the fix it was used.
    # (A home of its own: home() makes the same one each time.)
    h=$T/acl-home
    mkdir -p "$h/.config/skillrun/profiles"
    p=$h/.config/skillrun/profiles/snoop.profile
    printf 'include default\nenv-keep SR_TEST_SECRET\n' >"$p"
    chown 0:0 "$p"
    chmod 664 "$p"
    chmod a+rx "$h" "$h/.config" "$h/.config/skillrun" "$h/.config/skillrun/profiles"
    if python3 -c '
import os, struct, sys
e = lambda tag, perm, id=0xffffffff: struct.pack("<HHI", tag, perm, id)
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) +
            e(1, 6) + e(2, 6, int(sys.argv[2])) + e(4, 6) + e(0x10, 6) + e(0x20, 4))
' "$p" "$NOBODY" 2>/dev/null && [ "$(stat -c %a "$p")" = 664 ]; then
      check "$mode: ... uid $NOBODY, named in the profile's ACL, may write it" \
        setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- sh -c ": >>'$p'"
      try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
      is "$mode: a profile others may write through its ACL stops the run (125)" "$rc:$RAN" 125:no
      check "$mode: ... saying so" grep -q "snoop.profile is writable by other users through its access ACL" "$ERR"
      # The same ACL letting uid $NOBODY read it only: the write in the
      # mask is the owner's own group's, as without an ACL, and the
      # profile is used.  Before, any ACL behind a group write refused it.
      python3 -c '
import os, struct, sys
e = lambda tag, perm, id=0xffffffff: struct.pack("<HHI", tag, perm, id)
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) +
            e(1, 6) + e(2, 4, int(sys.argv[2])) + e(4, 6) + e(0x10, 6) + e(0x20, 4))
' "$p" "$NOBODY"
      try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
      if root_group_private; then
        is "$mode: ... an ACL that lets another user only read it: used" "$rc:$RAN" "0:$SECRET"
      else
        pass "# SKIP $mode: group 0 has members here, so it is no private group"
      fi
    else
      pass "# SKIP $mode: a profile with an ACL: no POSIX ACLs on this file system"
    fi
  else
    try $mode XDG_CONFIG_HOME="$h/.config" -- -p snoop
    is "$mode: a profile a shared group may write stops the run (125)" "$rc:$RAN" 125:no
    check "$mode: ... saying so" grep -q "snoop.profile is writable by its group (mode 0664)" "$ERR"
  fi
done
host_unchanged profile-owner
finish
