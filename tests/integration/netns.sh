# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced, before lib.sh, by the tests that build their own network:
#
#   private_netns WHY TOOL... -- "$@"
#
# re-runs the calling test ($0, with its arguments) as root in private
# network and mount namespaces, so that its addresses, servers and
# resolver touch nothing of the host; returns once it runs there.  A TAP
# skip saying why where that cannot be (not root, a TOOL missing).
# shellcheck shell=bash
private_netns() {
  local why=$1 tool
  shift
  [ "${SKILLRUN_PRIVATE_NS:-}" = 1 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "1..0 # SKIP needs root: $why"
    exit 0
  fi
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    tool=$1
    shift
    command -v "$tool" >/dev/null 2>&1 || {
      echo "1..0 # SKIP $tool is not installed"
      exit 0
    }
  done
  shift
  SKILLRUN_PRIVATE_NS=1 exec unshare --net --mount --propagation private -- \
    bash "$0" "$@"
}
