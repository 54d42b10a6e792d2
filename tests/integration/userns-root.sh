#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Root of a user namespace, by what the namespace maps (skillrun(1),
# SECURITY).  One that maps every id of the uid pool is root mode: a pool
# slot for the sandbox user, and, like root of the initial namespace, a
# root without CAP_SETUID or CAP_SETGID is refused at once in one line
# (reason resources).  That check asked for root mode before skillrun.conf
# had given the pool's ids, when root of such a namespace did not count
# as root yet: it was skipped, and the run failed later in a layer with
# "cannot write /proc/N/uid_map: Operation not permitted", which does not
# say what is missing.  One whose uid 0 is uid 0 outside and that does not
# map the pool is refused (layer uid-pool): the skill would own root's
# files.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root to write a user namespace's id maps"
sandbox_possible || skip_all "user namespaces are not available"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
"$PYTHON3" -c '' 2>/dev/null || skip_all "no $PYTHON3 to write the id maps"
setpriv --bounding-set -setuid true 2>/dev/null ||
  skip_all "setpriv cannot set the bounding set"
conf=$("$SKILLRUN" --help | sed -n 's/.*(default \(.*skillrun\.conf\)).*/\1/p')
[ ! -e "$conf" ] ||
  skip_all "this build's $conf exists: its uid-pool may differ from the default one mapped here"

T=$(tmpdir)
B=$T/userns-root
mkbundle "$B"
W=$(tmpdir)

# The whole pool mapped (800000-800063 by default): root mode.
rc=0
in_userns "0 0 1000000" "$SKILLRUN" --workspace-root "$W" --execution-id pool \
  "$B" -- true >"$T/pool.audit" 2>"$T/pool.err" || rc=$?
is "pool mapped: the run succeeds" "$rc" 0
[ "$rc" -eq 0 ] || diag "$(cat "$T/pool.err")"
uid=$(field "$T/pool.audit" policy_resolved .sandbox_ids.uid)
check "pool mapped: root mode, the sandbox user is a pool slot ($uid)" \
  test "$uid" -ge 800000 -a "$uid" -lt 800064

for keep in "" +setuid +setgid; do
  id=caps-${keep#+}
  rc=0
  in_userns "0 0 1000000" setpriv --bounding-set "-all${keep:+,$keep}" \
    "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" -- true \
    >"$T/$id.audit" 2>"$T/$id.err" || rc=$?
  is "pool mapped, bounding set -all${keep:+,$keep}: exit 125" "$rc" 125
  is "... an error event says resources" "$(field "$T/$id.audit" error .reason)" resources
  check "... one line on stderr names what is missing ($(head -c 60 "$T/$id.err"))" \
    sh -c '[ "$(wc -l <"$1")" = 1 ] && grep -q "^skillrun: root without CAP_SET" "$1"' - "$T/$id.err"
  is "... the stream ends in an error" "$(last "$T/$id.audit")" \
    "$(printf 'execution_completed\terror')"
done

# Only uid 0, root's outside too: refused.
rc=0
in_userns "0 0 1" "$SKILLRUN" --workspace-root "$W" --execution-id root0 \
  "$B" -- true >"$T/root0.audit" 2>"$T/root0.err" || rc=$?
is "uid 0 alone, root's outside: refused (125)" "$rc" 125
is "... one line on stderr" "$(wc -l <"$T/root0.err")" 1
check "... it says why" grep -q "uid 0 of this user namespace is uid 0 outside it" "$T/root0.err"
is "... layer uid-pool" "$(field "$T/root0.audit" layer_failed .layer)" uid-pool
is "... the stream ends in an error" "$(last "$T/root0.audit")" \
  "$(printf 'execution_completed\terror')"

# A rootless container's layout, 65536 ids from 100000 on: the overflow
# uid 65534 is mapped (host uid 165534), so root's directories, which the
# namespace does not map, show as that uid and cannot be told from its
# user's.  A workspace root in one is refused, and the message said
# "chown root" of a directory that is root's already.
# The test's own directory (0700) must be searchable by that root.
chmod o+x "$_test_root"
mkdir "$T/ns100000"
chown 100000:100000 "$T/ns100000"
# in_userns's command starts without capabilities there (its uid was
# unmapped when it was executed): this one becomes root of the namespace
# before it executes skillrun.
rc=0
"$PYTHON3" -c 'import ctypes, os, sys
go_r, go_w = os.pipe()
ns_r, ns_w = os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
        os._exit(99)
    os.write(ns_w, b"u")
    os.read(go_r, 1)
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    os.execv(sys.argv[1], sys.argv[1:])
if os.read(ns_r, 1) == b"u":
    for f in ("uid_map", "gid_map"):
        with open("/proc/%d/%s" % (pid, f), "w") as m:
            m.write("0 100000 65536\n")
os.write(go_w, b"g")
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))' \
  "$SKILLRUN" --workspace-root "$T/ns100000/ws" \
  --execution-id ov "$B" -- true >"$T/ov.audit" 2>"$T/ov.err" || rc=$?
is "65536 ids from 100000, a workspace root under root's directory: refused (125)" "$rc" 125
is "... one line on stderr" "$(wc -l <"$T/ov.err")" 1
check "... it says the owner may be one the namespace does not map" \
  grep -q "of uid 65534, or of an owner this user namespace does not map" "$T/ov.err"
check "... and does not advise chown root" sh -c '! grep -q "chown root" "$1"' - "$T/ov.err"

finish
