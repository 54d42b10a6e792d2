#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The egress proxy (src/proxy.c, src/proxyproto.c, src/netallow.c), run the
# way the supervisor will run it (tests/proxy-driver), against test servers
# on 127.0.0.1 and on a second address, with names from a hosts file; the
# clients are curl and Python in a namespace with only lo, where the
# proxy's listener was made.  Everything happens in a private network
# namespace (proxy-inner.sh): as root, and as uid 65534 in a user namespace
# of its own id (the proxy then drops the capabilities it inherits).
. "$(dirname "$0")/lib.sh"

: "${PROXY_DRIVER:?PROXY_DRIVER must name tests/proxy-driver (make check sets it)}"
INNER=$TOP_SRCDIR/tests/integration/proxy-inner.sh
for tool in curl ip nsenter unshare setpriv python3 sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || skip_all "$tool is not installed"
done
unshare --help 2>&1 | grep -q -- --keep-caps ||
  skip_all "unshare lacks --keep-caps (util-linux < 2.38)"

# run_inner MODE CMD...: runs the inner script, turns its lines into TAP.
run_inner() {
  local mode=$1 line
  shift
  while IFS= read -r line; do
    case $line in
    "ok - "*) pass "${line#ok - }" ;;
    "not ok - "*) fail "${line#not ok - }" ;;
    "#"*) echo "$line" ;;
    *) diag "$mode: $line" ;;
    esac
  done < <("$@" 2>&1)
}

# The scripts and the driver, copied where uid $NOBODY can read them (the
# trees may sit below a 0700 directory).
C=$(tmpdir)
cp "$INNER" "$TOP_SRCDIR/tests/integration/proxy-client.py" "$PROXY_DRIVER" "$C/"
chmod -R a+rX "$C"
INNER=$C/proxy-inner.sh
export PROXY_CLIENT=$C/proxy-client.py PROXY_DRIVER=$C/${PROXY_DRIVER##*/}
user_ns=(unshare --user --map-user="$NOBODY" --map-group="$NOBODY" --keep-caps --net)
if [ "$(id -u)" -eq 0 ]; then
  T=$(tmpdir)
  run_inner root unshare --net bash "$INNER" root "$T"
  if ! "${AS_USER[@]}" true 2>/dev/null; then
    pass "# SKIP the proxy as uid $NOBODY: setpriv cannot switch to it"
  else
    T=$(user_workspace)
    run_inner user "${AS_USER[@]}" "${user_ns[@]}" bash "$INNER" user "$T"
  fi
else
  unshare --user --map-current-user true 2>/dev/null ||
    skip_all "user namespaces are not available"
  T=$(tmpdir)
  run_inner user unshare --user --map-current-user --keep-caps --net \
    bash "$INNER" user "$T"
fi
[ "$_tap_n" -gt 0 ] || fail "the inner script ran no test"
finish
