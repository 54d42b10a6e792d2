#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# When skillrun returns, no mount of the run is left (skillrun(1)).  The
# sandbox's mount namespace goes with init's exit, which skillrun waits
# for (it reaps init before it returns): its mounts and superblocks are
# torn down before the caller's wait ends.  A host filesystem the profile
# binds into the view is unmounted on the host while the skill runs, so
# that the sandbox's bind is its last mount: it must be shut down
# (inotify's IN_UNMOUNT, queued when that last mount goes) by the time
# skillrun has returned, not later, and not never.  A namespace handed to
# the kernel to free after the return (its last reference left to a worker,
# as the twelfth round of issue 20 tried: bench/README.md) fails here.
# As root and as uid 65534.
# Root only: the filesystem is mounted in a private mount namespace of the
# test's (unshare -m); nothing of it reaches the host.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root: it mounts a filesystem on the host side (in a private mount namespace, unshare -m)"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/bundle
mkbundle "$B" "Reads a file of a bound host filesystem and fills /tmp."
mkdir "$T/src"
printf 'bind-ro %s /opt/src\n' "$T/src" >"$T/bind.profile"
chmod 644 "$T/bind.profile"
chmod -R a+rX "$T"
for mode in $MODES; do
  mode_workspace "$mode" >"$T/$mode.ws"
done

# watch FILE GO: "watching" once an inotify watch for IN_UNMOUNT is on
# FILE; once the file GO exists, "gone at return" if the filesystem's end
# is queued already, else "alive at return"; then "unmounted" if it comes
# within 5 s.
cat >"$T/watch.py" <<'PY'
import ctypes, os, select, struct, sys, time
IN_UNMOUNT = 0x2000
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), IN_UNMOUNT) < 0:
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
print("watching", flush=True)

def unmounted():
    try:
        data = os.read(fd, 4096)
    except BlockingIOError:
        return False
    while data:
        _, mask, _, n = struct.unpack_from("iIII", data)
        if mask & IN_UNMOUNT:
            return True
        data = data[16 + n:]
    return False

for _ in range(6000):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.01)
gone = unmounted()
print("gone at return" if gone else "alive at return", flush=True)
while not gone and select.select([fd], [], [], 5)[0]:
    gone = unmounted()
if gone:
    print("unmounted", flush=True)
PY

# For each mode: the filesystem mounted and watched; a run that reads its
# marker, writes 8 MiB to /tmp and sleeps; the host's unmount once the run
# is running; at the run's end, the watcher asked.
# shellcheck disable=SC2016 # expanded by the inner shell
SKILLRUN=$SKILLRUN B=$B T=$T MODES=$MODES AS_USER_WORDS="${AS_USER[*]}" PYTHON3=$PYTHON3 JQ=$JQ \
  unshare -m --propagation private bash -c '
  for mode in $MODES; do
    pre=()
    [ "$mode" = user ] && read -r -a pre <<<"$AS_USER_WORDS"
    w=$(cat "$T/$mode.ws")
    mount -t tmpfs -o size=64k,mode=0755 "sr-teardown-$mode" "$T/src" || exit 9
    echo "marker $mode" >"$T/src/marker"
    chmod 644 "$T/src/marker"
    "$PYTHON3" "$T/watch.py" "$T/src/marker" "$T/$mode.go" >"$T/$mode.watch" &
    watcher=$!
    for _ in $(seq 200); do
      grep -q watching "$T/$mode.watch" && break
      sleep 0.05
    done
    "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "td-$mode" \
      --audit-file "$w/td-$mode.audit" -p "$T/bind.profile" "$B" -- /bin/sh -c "
        cat /opt/src/marker && head -c 8388608 /dev/zero >/tmp/fill && echo filled && sleep 1" \
      >/dev/null 2>"$w/td-$mode.err" &
    sup=$!
    for _ in $(seq 200); do
      [ "$("$JQ" -r "select(.event == \"state_changed\") | .state" "$w/td-$mode.audit" 2>/dev/null | tail -n 1)" = running ] && break
      sleep 0.05
    done
    umount "$T/src" || exit 9
    wait "$sup"
    echo $? >"$T/$mode.rc"
    touch "$T/$mode.go"
    wait "$watcher"
  done
  exit 0
'
is "the host side mounted its filesystem" "$?" 0
for mode in $MODES; do
  w=$(cat "$T/$mode.ws")
  out=$w/default/td-$mode/logs/stdout.log
  is "$mode: the run exits 0" "$(cat "$T/$mode.rc" 2>/dev/null)" 0
  is "$mode: ... the skill read the bound filesystem and filled /tmp" \
    "$(cat "$out" 2>/dev/null)" "marker $mode
filled"
  is "$mode: ... its filesystem was watched before the run" \
    "$(head -n 1 "$T/$mode.watch" 2>/dev/null)" watching
  is "$mode: ... and, unmounted on the host during the run, was shut down by the time skillrun returned" \
    "$(sed -n 2p "$T/$mode.watch" 2>/dev/null)" "gone at return"
  check "$mode: ... (its end was seen)" grep -q '^unmounted$' "$T/$mode.watch"
  check "$mode: ... its audit verifies" audit_ok "$w/td-$mode.audit"
done
finish
