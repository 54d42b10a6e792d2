#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, an owner the user namespace does not map taken
# for the caller.  The caller is uid 65534 (nobody, the kernel's overflow
# uid) and runs skillrun in a user namespace that maps it to itself
# (unshare -U --map-user=65534, a rootless container's user).  There every
# file of a user the namespace does not map shows as uid 65534 too, so a
# profile another local user wrote, in a directory of theirs that
# SKILLRUN_PROFILE_PATH names (sudo -E carries it), passed as the
# caller's own and decided what the skill got; outside the namespace the
# same profile is refused as another user's.  The kernel now tells the
# caller's files from an unmapped owner's (O_NOATIME is refused to whoever
# does not own a file): the run stops (125, config_invalid) in one line
# saying the profile's owner is outside the user namespace, and the skill
# never runs.  Likewise a workspace root of another user's, which showed
# as the caller's and took the run's directory.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play uid $NOBODY and another local user"
sandbox_possible || skip_all "user namespaces are not available"
skip_modes
case " $MODES " in
*" user "*) ;;
*) skip_all "runs as uid $NOBODY: ${_user_skip:-not here}" ;;
esac
overflow=$(cat /proc/sys/kernel/overflowuid 2>/dev/null)
[ "$overflow" = "$USER_UID" ] ||
  skip_all "the test user (uid $USER_UID) is not the overflow uid ($overflow)"
unshare --help 2>/dev/null | grep -q -- --map-user= ||
  skip_all "unshare(1) has no --map-user (util-linux 2.38)"
as_user unshare -U --map-user="$USER_UID" --map-group="$USER_UID" true 2>/dev/null ||
  skip_all "uid $USER_UID cannot make a user namespace"

OTHER=$((USER_UID - 1))
T=$(tmpdir)
B=$T/owner-skill
mkbundle "$B"
chmod -R a+rX "$T"
W=$(user_workspace)
# The other user's directory of profiles, and its profile.
P=$T/other-profiles
mkdir -m 755 "$P"
printf '# theirs\n' >"$P/theirs.profile"
chmod 644 "$P/theirs.profile"
chown -R "$OTHER:$OTHER" "$P"

# try ID [WRAPPER...]: a run as the test user with the other's profile.
try() {
  local id=$1
  shift
  rc=0
  as_user env SKILLRUN_PROFILE_PATH="$P" "$@" "$SKILLRUN" -p theirs \
    --workspace-root "$W" --execution-id "$id" "$B" -- sh -c 'echo ran' \
    >"$T/$id.audit" 2>"$T/$id.err" || rc=$?
}

try plain
is "outside a user namespace: another user's profile is refused (125)" "$rc" 125

try mapped unshare -U --map-user="$USER_UID" --map-group="$USER_UID"
is "mapped to itself: another user's profile is refused (125)" "$rc" 125
[ "$rc" -eq 125 ] || diag "stderr: $(cat "$T/mapped.err")"
is "mapped to itself: one line on stderr" "$(wc -l <"$T/mapped.err")" 1
check "mapped to itself: it says the owner is outside the user namespace" \
  grep -q "theirs.profile is owned by a user outside this user namespace" "$T/mapped.err"
is "mapped to itself: the stream ends in an error" "$(last "$T/mapped.audit")" \
  "$(printf 'execution_completed\terror')"
check "mapped to itself: the skill never ran" not test -s "$W/default/mapped/logs/stdout.log"

# The other user's shared workspace root (sticky, as /tmp): as its owner
# they may rename or replace whatever a run makes there.  It showed as the
# caller's own too, and the run went on in it.
S=$T/other-root
mkdir -m 1777 "$S"
chown "$OTHER:$OTHER" "$S"
# in_theirs ID [WRAPPER...]: a run as the test user in that root.
in_theirs() {
  local id=$1
  shift
  rc=0
  as_user "$@" "$SKILLRUN" --workspace-root "$S" --execution-id "$id" "$B" -- \
    sh -c 'echo ran' >"$T/$id.audit" 2>"$T/$id.err" || rc=$?
}

in_theirs ws-plain
is "outside a user namespace: another user's workspace root is refused (125)" "$rc" 125
in_theirs ws-mapped unshare -U --map-user="$USER_UID" --map-group="$USER_UID"
is "mapped to itself: another user's workspace root is refused (125)" "$rc" 125
[ "$rc" -eq 125 ] || diag "stderr: $(cat "$T/ws-mapped.err")"
is "mapped to itself: one line on stderr" "$(wc -l <"$T/ws-mapped.err")" 1
check "mapped to itself: it says the owner is outside the user namespace" \
  grep -q "workspace root $S is owned by a user outside this user namespace" "$T/ws-mapped.err"
is "mapped to itself: the stream ends in an error" "$(last "$T/ws-mapped.audit")" \
  "$(printf 'execution_completed\terror')"
check "mapped to itself: no run directory in their root" not test -e "$S/default"

finish
