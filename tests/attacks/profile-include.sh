#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, profiles named by a path (skillrun.profile(5),
# SEARCH PATH): `include PATH` and `-p PATH` never use another local
# user's profile.  Before the fix a path was opened as is, relative to the
# caller's working directory, without the owner and mode checks a profile
# found by name gets: root's /etc/skillrun/profiles/site.profile saying
# `include ./site-local.profile`, run from a directory others share
# (sticky, world-writable), read the site-local.profile another user had
# planted there, whose env-keep handed root's secret environment to the
# skill.  Now a relative include is resolved against the directory of the
# file that includes it, and every profile opened by a path must belong to
# the caller or root and be writable by nobody else, in directories nobody
# else may write, or the run stops (125) naming the file, its owner and
# the including line, and the skill never runs.  As root and as an
# unprivileged user.
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

# A directory everyone shares, as /tmp: sticky and world-writable.
SHARED=$T/shared
mkdir -p "$SHARED"
chmod 1777 "$SHARED"

# prof FILE OWNER MODE LINE...: FILE, with the lines, owned by OWNER.
prof() {
  local f=$1 o=$2 m=$3
  shift 3
  mkdir -p "$(dirname "$f")"
  printf '%s\n' "$@" >"$f"
  chown "$o" "$f"
  chmod "$m" "$f"
}

n=0
# try MODE DIR ENV... -- SKILLRUN-ARGS...: one run from the working
# directory DIR with the secret in the caller's environment, whose skill
# writes what it sees of it to outputs/ran; sets $rc, $AUDIT, $ERR and
# $RAN (the secret when the skill saw it, "empty" when it ran without,
# "no" when it never ran).
try() {
  local mode=$1 dir=$2 w pre=() env=()
  shift 2
  while [ "$1" != -- ]; do
    env+=("$1")
    shift
  done
  shift
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(); fi
  AUDIT=$w/i$n.audit ERR=$w/i$n.err
  (cd "$dir" && timeout 60 env "${env[@]}" SR_TEST_SECRET="$SECRET" "${pre[@]}" "$SKILLRUN" --workspace-root "$w" \
    --execution-id "i$n" --audit-file "$AUDIT" "$@" "$B" -- \
    /bin/sh -c 'printf "%s" "${SR_TEST_SECRET:-empty}" >/workspace/outputs/ran' >/dev/null 2>"$ERR")
  rc=$?
  RAN=no
  [ -e "$w/default/i$n/outputs/ran" ] && RAN=$(cat "$w/default/i$n/outputs/ran")
}

for mode in root user; do
  if [ "$mode" = user ]; then me=$NOBODY other=$OTHER; else me=0 other=$NOBODY; fi
  S=$T/$mode
  mkdir -p "$S"

  # (a) The attack: the administrator's profile, found by name, includes
  # ./site-local.profile; the caller runs from the shared directory,
  # where the other user planted one that keeps the secret.
  prof "$S/sys/site.profile" 0 644 'include default' 'include ./site-local.profile'
  prof "$SHARED/site-local.profile" "$other" 644 'env-keep SR_TEST_SECRET'
  try $mode "$SHARED" SKILLRUN_PROFILE_PATH="$S/sys" -- -p site
  is "$mode: a relative include is not read from the working directory (125)" "$rc:$RAN" 125:no
  check "$mode: ... but next to the including file, naming both" \
    grep -q "$S/sys/site.profile:2: $S/sys/site-local.profile cannot be opened" "$ERR"
  is "$mode: ... recorded as config_invalid" "$(field "$AUDIT" error .reason)" config_invalid
  is "$mode: ... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error
  rm -f "$SHARED/site-local.profile"

  # The same file named by its absolute path is not used either.
  prof "$SHARED/site-local.profile" "$other" 644 'env-keep SR_TEST_SECRET'
  prof "$S/sys/abs.profile" 0 644 'include default' "include $SHARED/site-local.profile"
  try $mode "$T" SKILLRUN_PROFILE_PATH="$S/sys" -- -p abs
  is "$mode: another user's included profile stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... naming the including line, the file and its owner" \
    grep -q "$S/sys/abs.profile:2: profile $SHARED/site-local.profile belongs to uid $other" "$ERR"
  is "$mode: ... recorded as config_invalid" "$(field "$AUDIT" error .reason)" config_invalid
  rm -f "$SHARED/site-local.profile"

  # The caller's own file in the shared directory: nobody else may
  # replace it, but anyone may put another under a name it has not
  # taken, and the directory is the file's own (sr_check_dir_chain).
  prof "$SHARED/mine-$mode.profile" "$me" 644 'env-keep SR_TEST_SECRET'
  prof "$S/sys/mine.profile" 0 644 'include default' "include $SHARED/mine-$mode.profile"
  try $mode "$T" SKILLRUN_PROFILE_PATH="$S/sys" -- -p mine
  is "$mode: an included profile in a directory others may write stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying so" grep -q "profile $SHARED/mine-$mode.profile is in directory $SHARED, writable by others" "$ERR"

  # (b) A relative include next to the including file is used, from any
  # working directory, and one in a directory below it as well.
  prof "$S/sys2/site.profile" 0 644 'include default' 'include ./site-local.profile' 'include local/more.profile'
  prof "$S/sys2/site-local.profile" "$me" 644 'env-keep SR_TEST_SECRET'
  prof "$S/sys2/local/more.profile" 0 644 'hostname more'
  chmod 755 "$S/sys2/local"
  for dir in "$SHARED" / "$S/sys2"; do
    try $mode "$dir" SKILLRUN_PROFILE_PATH="$S/sys2" -- -p site
    is "$mode: a relative include next to the including file is used (working directory $dir)" "$rc:$RAN" "0:$SECRET"
  done
  # Also when the including file is itself named by a relative -p PATH,
  # which stays relative to the working directory.
  try $mode "$S" -- -p sys2/site.profile
  is "$mode: ... and when -p names the including file by a relative path" "$rc:$RAN" "0:$SECRET"
  try $mode "$S/sys2/local" -- -p ../site.profile
  is "$mode: ... or by one with .." "$rc:$RAN" "0:$SECRET"

  # (c) -p PATH of another user's file.
  prof "$S/other.profile" "$other" 644 'include default' 'env-keep SR_TEST_SECRET'
  try $mode "$T" -- -p "$S/other.profile"
  is "$mode: -p PATH of another user's profile stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... naming the file and its owner" \
    grep -q "profile $S/other.profile belongs to uid $other" "$ERR"
  check "$mode: ... with a hint for a path" grep -q "use a copy of your own" "$ERR"
  is "$mode: ... recorded as config_invalid" "$(field "$AUDIT" error .reason)" config_invalid
  try $mode "$S" -- -p ./other.profile
  is "$mode: ... also by a relative path" "$rc:$RAN" 125:no
  # The caller's own, by the same path, is used.
  chown "$me" "$S/other.profile"
  try $mode "$S" -- -p ./other.profile
  is "$mode: -p PATH of the caller's own profile is used" "$rc:$RAN" "0:$SECRET"

  # (d) An include of a file others may write: the caller's own,
  # world-writable; then group-writable by a group that is not the
  # owner's own (gid $((NOBODY - 1)), no user's primary group here).
  prof "$S/sys3/site.profile" 0 644 'include default' 'include ./site-local.profile'
  prof "$S/sys3/site-local.profile" "$me" 666 'env-keep SR_TEST_SECRET'
  try $mode "$T" SKILLRUN_PROFILE_PATH="$S/sys3" -- -p site
  is "$mode: an include of a world-writable profile stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying so, at the including line" \
    grep -q "$S/sys3/site.profile:2: profile $S/sys3/site-local.profile is writable by others (mode 0666)" "$ERR"
  chown "$me:$((NOBODY - 1))" "$S/sys3/site-local.profile"
  chmod 664 "$S/sys3/site-local.profile"
  try $mode "$T" SKILLRUN_PROFILE_PATH="$S/sys3" -- -p site
  is "$mode: an include of a group-writable profile stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying so" grep -q "profile $S/sys3/site-local.profile is writable by its group (mode 0664)" "$ERR"
  # And -p PATH of the same.
  try $mode "$T" -- -p "$S/sys3/site-local.profile"
  is "$mode: -p PATH of a group-writable profile stops the run (125)" "$rc:$RAN" 125:no
done
host_unchanged profile-include
finish
