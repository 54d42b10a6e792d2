#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the publisher's private key (skillrun(1),
# --sign).  A key file that another local user can read is a key they can
# sign with: they publish as its owner, at any tier the key is trusted for.
# Before the fix `skillrun --sign KEY` signed with a key of mode 0644 (what
# a umask of 022 gives a key copied or written by hand) without a word,
# and with a key that another user owns, who could swap it for their own.
# Now, as OpenSSH does for an identity file, the key must be owned by the
# caller or root and be readable and writable by nobody else (a key of
# root's may be readable by its group: a signing group the administrator
# keeps, unless an ACL may let others read it); anything else is refused, exit 125, one line saying what to do
# (chmod 600 KEY), and no statement is written.  As root and as an
# unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

command -v openssl >/dev/null || skip_all "openssl command line not found"
skip_modes

T=$(tmpdir)
B=$T/hello
mkdir -p "$B"
printf -- '---\nname: hello\ndescription: A test skill.\nmetadata:\n  version: "1.0"\n---\n# hello\n' \
  >"$B/SKILL.md"
openssl genpkey -algorithm ed25519 -out "$T/master.key" 2>/dev/null ||
  { echo "Bail out! cannot make a key"; exit 99; }
chmod -R a+rX "$T"
chmod 600 "$T/master.key"
# The other local user: for a root caller the test user, for the test user
# a uid that is neither (it need not exist).
OTHER=$((NOBODY - 1))
[ "$OTHER" -ne 0 ] || OTHER=$((NOBODY + 1))

# key MODE NAME PERMS [OWNER[:GROUP]]: a copy of the key in MODE's
# directory, with PERMS (and OWNER, as root); its path.
key() {
  local d=$T/$1
  cp "$T/master.key" "$d/$2"
  [ -z "${4:-}" ] || chown "$4" "$d/$2"
  [ -n "${4:-}" ] || [ "$(id -u)" -ne 0 ] || [ "$1" != user ] || chown "$USER_UID:$USER_UID" "$d/$2"
  chmod "$3" "$d/$2"
  echo "$d/$2"
}
# sign MODE KEY NAME: --sign with KEY as MODE's user into MODE's
# directory, statement NAME.sig; sets $rc, $ERR and $SIG.
sign() {
  SIG=$T/$1/$3.sig
  ERR=$T/$1/$3.err
  in_mode "$1" "$SKILLRUN" --sign "$2" --tier official --signature "$SIG" "$B" \
    >/dev/null 2>"$ERR"
  rc=$?
}
# refused MODE LABEL KEY NAME TEXT: --sign refuses KEY with exit 125,
# saying TEXT on one line, and writes no statement.
refused() {
  sign "$1" "$3" "$4"
  is "$1: $2: refused (125)" "$rc" 125
  if grep -q -- "$5" "$ERR"; then pass "$1: ... saying '$5'"; else
    fail "$1: ... saying '$5'"
    diag "  stderr: $(head -c 300 "$ERR")"
  fi
  is "$1: ... on one line" "$(wc -l <"$ERR")" 1
  check "$1: ... and writes no statement" test ! -e "$SIG"
}

for mode in $MODES; do
  mkdir -p "$T/$mode"
  [ "$mode" != user ] || [ "$(id -u)" -ne 0 ] || chown "$USER_UID:$USER_UID" "$T/$mode"
  chmod 755 "$T/$mode"

  k=$(key $mode world.key 644)
  refused $mode "a key every local user can read (0644)" "$k" world "chmod 600 $k"
  # (Root's own key readable by its group is the exception, below.)
  if [ $mode = user ]; then
    k=$(key $mode group.key 640)
    refused $mode "a key of the caller's that its group can read (0640)" "$k" group \
      "can be read or written by other users (mode 0640)"
  fi
  k=$(key $mode gw.key 620)
  refused $mode "a key its group can write (0620)" "$k" gw "chmod 600 $k"
  k=$(key $mode ow.key 602)
  refused $mode "a key others can write (0602)" "$k" ow "chmod 600 $k"

  k=$(key $mode mine.key 600)
  sign $mode "$k" mine
  is "$mode: the caller's own key, mode 0600: signs (0)" "$rc" 0
  check "$mode: ... a statement of mode 0644 or tighter" \
    test -f "$SIG" -a "$(($(stat -c '0%a' "$SIG") & 0133))" -eq 0
  k=$(key $mode ro.key 400)
  sign $mode "$k" ro
  is "$mode: the caller's own key, mode 0400: signs (0)" "$rc" 0

  if needs_root "$mode: keys of other owners"; then
    k=$(key $mode theirs.key 600 "$OTHER")
    # Root reads it all the same; the test user cannot open it at all.
    if [ $mode = root ]; then
      refused $mode "a key another user owns" "$k" theirs "belongs to uid $OTHER, not to you"
    else
      sign $mode "$k" theirs
      is "$mode: a key another user owns, that the caller cannot read: refused (125)" "$rc" 125
    fi
    k=$(key $mode theirs-open.key 644 "$OTHER")
    refused $mode "a key another user owns, readable by all" "$k" theirs-open "belongs to uid $OTHER"
    # Root's key, shared with a signing group the caller is in.
    if [ $mode = user ]; then g=$USER_UID; else g=0; fi
    k=$(key $mode shared.key 640 "0:$g")
    sign $mode "$k" shared
    is "$mode: root's key readable by the caller's group (0640 root:$g): signs (0)" "$rc" 0
    k=$(key $mode shared-world.key 644 "0:$g")
    refused $mode "root's key readable by all (0644)" "$k" shared-world "chmod 600 $k"
    # Root's key, readable by the caller's group, with an ACL entry that
    # also lets the other user read it: its group bits are the ACL's mask,
    # 0640 as for the group's read alone.
    k=$(key $mode acl.key 600 "0:$g")
    if python3 -c '
import os, struct, sys
e = lambda tag, perm, id=0xffffffff: struct.pack("<HHI", tag, perm, id)
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) +
            e(1, 6) + e(2, 4, int(sys.argv[2])) + e(4, 4) + e(0x10, 4) + e(0x20, 0))
' "$k" "$OTHER" 2>/dev/null && [ "$(stat -c %a "$k")" = 640 ]; then
      refused $mode "root's key another user may read through an ACL" "$k" acl \
        "has an access ACL that may let other users read it"
    else
      pass "# SKIP $mode: a key with an ACL: no POSIX ACLs on this file system"
    fi
    # A systemd credential (LoadCredential=, for a service's User=) is
    # root's, mode 0400, with an ACL entry `user:CALLER:r--` that makes
    # its mode read 0440: the caller's own read, nobody else's.  Before,
    # any ACL behind a group read refused the key.
    if [ $mode = user ]; then me=$USER_UID; else me=0; fi
    k=$(key $mode cred.key 400 0:0)
    if python3 -c '
import os, struct, sys
e = lambda tag, perm, id=0xffffffff: struct.pack("<HHI", tag, perm, id)
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) +
            e(1, 4) + e(2, 4, int(sys.argv[2])) + e(4, 0) + e(0x10, 4) + e(0x20, 0))
' "$k" "$me" 2>/dev/null && [ "$(stat -c %a "$k")" = 440 ]; then
      sign $mode "$k" cred
      is "$mode: root's key the caller alone may read through an ACL (a systemd credential): signs (0)" "$rc" 0
    else
      pass "# SKIP $mode: a key with an ACL: no POSIX ACLs on this file system"
    fi
  fi
  # The key's directories, as a profile's found by name: whoever else can
  # write one can rename another file of the caller's (another key of
  # theirs) over the key's name, and the caller signs with a key it did
  # not name.  Before, the key was used wherever it was.
  mkdir -p "$T/$mode/open" "$T/$mode/theirs"
  chmod 0777 "$T/$mode/open"
  k=$(key $mode open/dir.key 600)
  refused $mode "a key in a directory others can write (0777)" "$k" opendir \
    "is in directory $T/$mode/open, writable by others (mode 0777)"
  if [ "$(id -u)" -eq 0 ]; then
    chown "$OTHER" "$T/$mode/theirs"
    chmod 0755 "$T/$mode/theirs"
    k=$(key $mode theirs/dir.key 600)
    refused $mode "a key in a directory another user owns" "$k" theirsdir \
      "is in directory $T/$mode/theirs of uid $OTHER"
  fi
  # A key reached through a symbolic link as its last component.
  ln -s "$T/$mode/mine.key" "$T/$mode/link.key"
  refused $mode "a symbolic link to the key" "$T/$mode/link.key" link "is a symbolic link"
done
finish
