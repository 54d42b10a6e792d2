#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the directories that hold trust material.
# skillrun.conf, the keys it names and a profile found by name were each
# checked on the opened file (root's, or the caller's, and not writable by
# others), but not the directory it was in.  In a directory another local
# user could write (theirs, or a 0777 one), they swapped two of root's
# keys (community.pub and official.pub), each still root's, 0644 and no
# symbolic link: a bundle signed with the community key then ran as tier
# official.  The same rename put a lax skillrun.conf of root's over the
# strict one (no signature required), a lax profile over the one the
# caller named, or another hosts file over the network-hosts one.  Now every directory from the file's up to / must belong
# to root (or, for a profile, the caller) and be writable by nobody else,
# as OpenSSH's StrictModes wants; a sticky one above the file's own (/tmp)
# is fine.  Another stops the run (125, config_invalid or key_invalid)
# naming the directory, and the skill never runs.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
command -v openssl >/dev/null || skip_all "openssl command line not found"
. "$(dirname "$0")/common.sh"

OTHER=$((NOBODY - 1))
[ "$OTHER" -ne 0 ] || OTHER=$((NOBODY + 1))
AS_OTHER=(setpriv --reuid="$OTHER" --regid="$OTHER" --clear-groups --)

PRIV=$T/private
mkdir -m 700 "$PRIV"
for k in official community; do
  openssl genpkey -algorithm ed25519 -out "$PRIV/$k.key" 2>/dev/null
  openssl pkey -in "$PRIV/$k.key" -pubout -out "$PRIV/$k.pub" 2>/dev/null
done
chmod 600 "$PRIV"/*.key
# keydir DIR MODE [OWNER]: DIR with root's official.pub and community.pub.
keydir() {
  mkdir -p "$1"
  cp "$PRIV/official.pub" "$PRIV/community.pub" "$1/"
  chmod 644 "$1"/*.pub
  chmod "$2" "$1"
  [ -z "${3:-}" ] || chown "$3" "$1"
}
conf() { # conf PATH LINES...: a root-owned 0644 conf
  printf '%s\n' "${@:2}" >"$1"
  chmod 644 "$1"
}
keyconf() { # keyconf PATH KEYDIR
  conf "$1" "require-signature yes" "trust-key official $2/official.pub" \
    "trust-key community $2/community.pub"
}

# Mallory publishes community skills with the community key, and signs
# hers as official with it.
M=$T/mallory-skill
mkdir -p "$M"
printf -- '---\nname: mallory-skill\ndescription: A test skill.\nmetadata:\n  version: "1.0"\n---\n# m\n' >"$M/SKILL.md"
"$SKILLRUN" --sign "$PRIV/community.key" --tier official --signature "$M.sig" "$M" >/dev/null 2>&1 ||
  {
    echo "Bail out! cannot sign the test bundle"
    exit 99
  }
chmod -R a+rX "$M" "$M.sig"

# A skill that asks for the allowlist, and a profile that permits it.
NB=$T/net-skill
mkdir -p "$NB"
printf -- '---\nname: net-skill\ndescription: A test skill.\nmetadata:\n  sandbox.network: allowlist\n---\n# n\n' >"$NB/SKILL.md"
printf 'network allowlist\nnetwork-allow allowed.test:8080\n' >"$T/allow.profile"
chmod -R a+rX "$NB" "$T/allow.profile"

# try MODE CONF BUNDLE [ARGS...]: try_conf (common.sh), ids t1, t2...
try() { try_conf t "$@"; }
# swap DIR: another user swaps root's official.pub and community.pub in DIR.
swap() {
  "${AS_OTHER[@]}" sh -c 'cd "$1" && mv official.pub x.pub && mv community.pub official.pub && mv x.pub community.pub' \
    sh "$1" 2>/dev/null
}
refused() { # refused MODE TEXT REASON DIR: the run stopped, naming DIR
  is "$1: $2 stops the run (125), the skill never ran" "$rc:$RAN" 125:no
  check "$1: ... naming the directory" grep -q "is in directory $4[ ,]" "$ERR"
  is "$1: ... recorded as $3" "$(field "$AUDIT" error .reason)" "$3"
  is "$1: ... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error
}

for mode in root user; do
  # The control: root's keys in root's directory; Mallory's bundle is
  # refused, and stays refused even when another user tries the swap.
  D=$T/$mode-safe
  keydir "$D" 755
  keyconf "$T/$mode-safe.conf" "$D"
  swap "$D"
  try $mode "$T/$mode-safe.conf" "$M"
  is "$mode: keys in root's 0755 directory: the swap fails, Mallory's bundle is refused (123)" \
    "$rc:$RAN" 123:no

  # A directory anyone may write (root's, 0777): the swap.
  D=$T/$mode-open
  keydir "$D" 777
  keyconf "$T/$mode-open.conf" "$D"
  swap "$D"
  try $mode "$T/$mode-open.conf" "$M"
  refused $mode "keys in a 0777 directory another user swapped" key_invalid "$D"
  check "$mode: ... saying it is writable by others" grep -q "writable by others (mode 0777)" "$ERR"

  # The other user's own directory, keys root's: the swap.
  D=$T/$mode-theirs
  keydir "$D" 755 "$OTHER"
  keyconf "$T/$mode-theirs.conf" "$D"
  swap "$D"
  try $mode "$T/$mode-theirs.conf" "$M"
  refused $mode "keys in another user's directory" key_invalid "$D"
  check "$mode: ... and whose it is" grep -q "is in directory $D of uid $OTHER" "$ERR"

  # A directory above, writable by others: they could put another
  # directory of keys in its place.  Checked up to /.
  D=$T/$mode-above
  keydir "$D/keys" 755
  chmod 777 "$D"
  keyconf "$T/$mode-above.conf" "$D/keys"
  try $mode "$T/$mode-above.conf" "$M"
  refused $mode "a 0777 directory above the keys'" key_invalid "$D"

  # A sticky one above, as /tmp: nobody may rename what is not theirs.
  D=$T/$mode-sticky
  keydir "$D/keys" 755
  chmod 1777 "$D"
  keyconf "$T/$mode-sticky.conf" "$D/keys"
  try $mode "$T/$mode-sticky.conf" "$M"
  is "$mode: a sticky 1777 directory above the keys' is fine (Mallory's bundle: 123)" \
    "$rc:$RAN" 123:no
  # Not as the keys' own: a name missing there is anyone's to take.
  chmod 1777 "$D/keys"
  try $mode "$T/$mode-sticky.conf" "$M"
  refused $mode "a sticky 1777 directory holding the keys" key_invalid "$D/keys"

  # skillrun.conf itself: another user renames root's lax conf (no
  # signature required) over the strict one, in a directory they can write.
  C=$T/$mode-confdir
  mkdir -m 777 "$C"
  keyconf "$C/skillrun.conf" "$T/$mode-safe"
  conf "$C/lax.conf" "network deny"
  "${AS_OTHER[@]}" mv "$C/lax.conf" "$C/skillrun.conf" 2>/dev/null
  try $mode "$C/skillrun.conf" "$B"
  refused $mode "a skillrun.conf in a 0777 directory" config_invalid "$C"

  # A profile found by name (SKILLRUN_PROFILE_PATH), the caller's choice:
  # another user renames root's lax one over it.
  P=$T/$mode-profiles
  mkdir -m 777 "$P"
  printf 'network deny\n' >"$P/strict.profile"
  printf 'network deny\n' >"$P/lax.profile"
  chmod 644 "$P"/*.profile
  "${AS_OTHER[@]}" mv "$P/lax.profile" "$P/strict.profile" 2>/dev/null
  SKILLRUN_PROFILE_PATH=$P try $mode "$T/$mode-safe.conf" "$B" --profile strict
  refused $mode "a profile found by name in a 0777 directory" config_invalid "$P"

  # The hosts file the egress proxy resolves allowlisted names with: a
  # rename there sends them to other addresses.
  H=$T/$mode-hostsdir
  mkdir -m 777 "$H"
  echo "127.0.0.1 allowed.test" >"$H/hosts"
  chmod 644 "$H/hosts"
  conf "$T/$mode-hosts.conf" "network-hosts $H/hosts"
  try $mode "$T/$mode-hosts.conf" "$NB" --profile "$T/allow.profile"
  refused $mode "a network-hosts file in a 0777 directory" config_invalid "$H"
done

# In a user namespace that maps the caller alone (a rootless container, a
# toolbox, unshare --map-current-user), root's directories show as the
# overflow uid and cannot be told from another user's: a profile under
# one is refused, and the message said "of uid 65534 ... chown root" of a
# directory that was root's already.  It says the owner is unmapped.
P=$T/unmapped-profiles
mkdir -p "$P"
printf 'network deny\n' >"$P/mine.profile"
chown -R "$OTHER:$OTHER" "$P"
if "${AS_OTHER[@]}" unshare --user --map-current-user true 2>/dev/null; then
  out=$(SKILLRUN_PROFILE_PATH=$P "${AS_OTHER[@]}" unshare --user --map-current-user \
    "$SKILLRUN" --explain --profile mine "$B" -- /bin/true 2>&1 >/dev/null)
  check "a profile under root's directory, seen from a user namespace: refused" \
    grep -q "profile $P/mine.profile is in directory $T, whose owner this user namespace does not map" <<<"$out"
  check "... not told to chown root what is root's" not grep -q "chown root" <<<"$out"
else
  pass "# SKIP unshare --user --map-current-user is not available here"
  pass "# SKIP unshare --user --map-current-user is not available here"
fi
# A directory bound onto one below it (mount --bind A A/sub) shows A's
# inode at A/sub, whose ".." is A: the walk took that for the root and
# stopped, and a skillrun.conf named through A/sub passed with a 0777
# directory above A, whose writers can move A away.  In a mount namespace
# of the test's own, so that no mount outlives it.
X=$T/bound
mkdir -p "$X/a/sub"
chmod 777 "$X"
keydir "$X/a" 755
keyconf "$X/a/skillrun.conf" "$X/a"
if unshare --mount --propagation private true 2>/dev/null; then
  out=$(unshare --mount --propagation private sh -c \
    'mount --bind "$1/a" "$1/a/sub" && exec "$2" --explain --conf "$1/a/sub/skillrun.conf" "$3" -- /bin/true' \
    sh "$X" "$SKILLRUN" "$B" 2>&1 >/dev/null)
  rc=$?
  is "a conf through a directory bound below itself, a 0777 one above: refused (125)" "$rc" 125
  check "... naming the 0777 directory" grep -q "is in directory $X, writable by others" <<<"$out"
else
  pass "# SKIP unshare --mount is not available here"
  pass "# SKIP unshare --mount is not available here"
fi
host_unchanged trust-dirs
finish
