#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# skillrun started by an ordinary user as root of a user namespace of its
# own (unshare -U -r, a rootless container's entrypoint), which maps one
# id: the caller's.  euid 0 was taken for root: the run went to root mode
# (a uid-pool slot under /run/skillrun, root's cgroup subtree) and
# stopped with "cannot open /run/skillrun/uid-pool: Permission denied".
# Root mode now needs the namespace to map the uid pool; here the run is
# the ordinary caller's, its sandbox user mapped to the caller's own id.
# A file whose owner the namespace does not map (root's, shown as the
# overflow uid) is neither root's nor the caller's: a skillrun.conf of
# the host's root is refused saying so, in one line.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
case " $MODES " in
*" user "*) ;;
*) skip_all "runs as an unprivileged user: ${_user_skip:-none here}" ;;
esac
as_user unshare -U -r true 2>/dev/null ||
  skip_all "uid $USER_UID cannot make a user namespace (unshare -U -r)"
conf=$("$SKILLRUN" --help | sed -n 's/.*(default \(.*skillrun\.conf\)).*/\1/p')
[ ! -e "$conf" ] ||
  skip_all "this build's $conf exists: root's, unmapped in the namespace, it stops every run there"

T=$(tmpdir)
B=$T/userns-skill
mkbundle "$B"
chmod -R a+rX "$T"
W=$(user_workspace)

# The caller as root of its own namespace: an ordinary run.
rc=0
as_user unshare -U -r "$SKILLRUN" --workspace-root "$W" --execution-id mapped \
  "$B" -- sh -c 'echo hello from $(id -u)' >"$T/mapped.audit" 2>"$T/mapped.err" || rc=$?
is "mapped root: the run succeeds (exit 0)" "$rc" 0
[ "$rc" -eq 0 ] || diag "$(cat "$T/mapped.err")"
is "mapped root: it ends succeeded" "$(last "$T/mapped.audit")" \
  "$(printf 'execution_completed\tsucceeded')"
is "mapped root: the sandbox user is the caller's own id, no uid-pool slot" \
  "$(field "$T/mapped.audit" policy_resolved '.sandbox_ids.uid')" 0
check "mapped root: the skill ran" grep -q '^hello from ' "$W/default/mapped/logs/stdout.log"
check "mapped root: the audit verifies" audit_ok "$T/mapped.audit"

# A skillrun.conf of the host's root, shown as the overflow uid.
if [ "$(id -u)" -eq 0 ]; then
  printf '# root'"'"'s\n' >"$T/root.conf"
  chmod 644 "$T/root.conf"
  rc=0
  as_user unshare -U -r "$SKILLRUN" --conf "$T/root.conf" --workspace-root "$W" \
    --execution-id rootconf "$B" -- true >"$T/rootconf.audit" 2>"$T/rootconf.err" || rc=$?
  is "unmapped owner: a skillrun.conf of root's outside is refused (125)" "$rc" 125
  is "unmapped owner: one line on stderr" "$(wc -l <"$T/rootconf.err")" 1
  check "unmapped owner: it says the owner is outside the user namespace" \
    grep -q "is owned by a user outside this user namespace" "$T/rootconf.err"
  is "unmapped owner: the stream ends in an error" "$(last "$T/rootconf.audit")" \
    "$(printf 'execution_completed\terror')"
else
  pass "# SKIP a skillrun.conf of root's outside the namespace: needs root to make one"
fi

finish
