#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a procfs inside a profile's bind.  A profile may
# not bind the host's / or anything below /proc or /dev (as written nor
# once its links are followed), so that a skill never lists the host's
# processes.  But bind-ro clones the source with every mount below it,
# and a procfs is not only ever at /proc: a build chroot's /proc (debootstrap,
# schroot, sbuild and mock mount one there) is the host's too.  A profile's
# `bind-ro /srv/chroot /c` gave the skill the host's procfs at /c/proc, and
# `bind-ro /srv/chroot/proc /p` at /p (neither path is below /proc): every
# host process's command line, unmasked (kcore, sysrq-trigger, ...).
# Now init refuses any procfs in the sandbox's mount table but its own at
# /proc (src/mount.c verify_mountinfo; so is `etc-file mtab`, root's link
# to /proc/self/mounts): such a run stops with layer_failed
# (exit status 125) naming the mount, ends with execution_completed, and the
# skill does not run.  A chroot without a procfs binds as before (the
# control).  As root and as uid 65534.
# Root only: the procfs is mounted with unshare -m, in a private mount
# namespace of the test's; nothing of it reaches the host.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root: it mounts a procfs in a build chroot (in a private mount namespace, unshare -m)"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/procfs-skill
mkbundle "$B"
mkdir -p "$T/chroot/proc" "$T/plain/proc"
echo "chroot file $$" >"$T/chroot/file"
printf 'include default\nbind-ro %s /c\n' "$T/chroot" >"$T/tree.profile"
printf 'include default\nbind-ro %s /p\n' "$T/chroot/proc" >"$T/proc.profile"
printf 'include default\nbind-ro %s /c\n' "$T/plain" >"$T/plain.profile"
printf 'include default\netc-file mtab\n' >"$T/mtab.profile"
chmod -R a+rX "$T"
WS_root=$(tmpdir)
WS_user=$(user_workspace)
for mode in $MODES; do
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  echo "$w" >"$T/$mode.ws"
done

# Each run lists the processes it sees below its binds: the host's are
# more than the one shell of the skill.
# shellcheck disable=SC2016 # expanded by the inner shell
SKILLRUN=$SKILLRUN B=$B T=$T MODES=$MODES AS_USER_WORDS="${AS_USER[*]}" \
  unshare -m --propagation private bash -c '
  mount -t proc sr-chroot-proc "$T/chroot/proc" || exit 9
  for mode in $MODES; do
    pre=()
    [ "$mode" = user ] && read -r -a pre <<<"$AS_USER_WORDS"
    w=$(cat "$T/$mode.ws")
    for p in tree proc plain; do
      id=$p-$mode
      "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
        --audit-file "$w/$id.audit" -p "$T/$p.profile" "$B" -- /bin/sh -c "
          cat /c/file 2>/dev/null
          ls /c/proc /p 2>/dev/null | grep -c \"^[0-9][0-9]*\$\"
          true" >/dev/null 2>"$w/$id.err"
      echo $? >"$T/$id.rc"
    done
  done
'
is "the test set up its chroot's procfs" "$?" 0

for mode in $MODES; do
  w=$(cat "$T/$mode.ws")
  for p in tree proc; do
    id=$p-$mode
    case $p in
    tree) what="a bind whose tree holds a procfs (a build chroot's /proc)" mp=/c/proc ;;
    proc) what="a bind of a procfs mounted outside /proc" mp=/p ;;
    esac
    is "$mode: $what: refused" "$(cat "$T/$id.rc")" 125
    is "$mode: ... the skill did not run (its log is empty)" "$(cat "$w/default/$id/logs/stdout.log" 2>/dev/null)" ""
    is "$mode: ... layer_failed names the mount" \
      "$(field "$w/$id.audit" layer_failed .message)" \
      "verify $mp: a procfs, and the only one a skill may see is its own at /proc: Operation not permitted"
    is "$mode: ... the run ends with execution_completed" \
      "$(field "$w/$id.audit" execution_completed .exit_code)" 125
    check "$mode: ... skillrun says why" grep -q "verify $mp: a procfs" "$w/$id.err"
  done
  id=plain-$mode
  is "$mode: control: a chroot without a procfs is bound" "$(cat "$T/$id.rc")" 0
  is "$mode: ... and lists no process" "$(cat "$w/default/$id/logs/stdout.log" 2>/dev/null)" 0
  # Root's links in /etc are followed (etc-file is checked as written):
  # /etc/mtab, a link to /proc/self/mounts, is a procfs file too.
  case $(readlink -f /etc/mtab) in
  /proc/*)
    id=mtab-$mode
    in_mode "$mode" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
      --audit-file "$w/$id.audit" -p "$T/mtab.profile" "$B" -- /bin/cat /etc/mtab \
      >/dev/null 2>"$w/$id.err"
    is "$mode: etc-file mtab, a link into /proc: refused" "$?" 125
    is "$mode: ... layer_failed names the mount" \
      "$(field "$w/$id.audit" layer_failed .message)" \
      "verify /etc/mtab: a procfs, and the only one a skill may see is its own at /proc: Operation not permitted"
    ;;
  *) pass "# SKIP $mode: /etc/mtab is not a link into /proc here" ;;
  esac
done
finish
