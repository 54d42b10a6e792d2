#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# skillrun-scope.sh [SKILLRUN-OPTION]... BUNDLE [-- COMMAND [ARG]...]
#
# Runs skillrun in a transient systemd scope with a delegated cgroup
# (skillrun-integration(7), SYSTEMD), so that the run's limits are cgroup
# v2 limits even when it is started from a shell, a cron job or a CI
# runner: an ordinary user's scope goes to their user manager, root's to
# the system manager.  Gives the run an execution id (SKILLRUN_EXECUTION_ID,
# else a new UUID) and names the scope after it; do not pass
# --execution-id.  The exit status is skillrun's.
set -eu
SKILLRUN=${SKILLRUN:-skillrun}
id=${SKILLRUN_EXECUTION_ID:-$(cat /proc/sys/kernel/random/uuid)}
unit=skillrun-$id
if [ "$(id -u)" -eq 0 ]; then
  # Root's skillrun would otherwise make its cgroups at the top of the
  # hierarchy, outside the scope: point it at the scope's own cgroup
  # (system.slice on a host with the unified cgroup v2 hierarchy).
  exec systemd-run --scope --quiet --unit="$unit" --slice=system.slice \
    -p Delegate=yes \
    "$SKILLRUN" --execution-id "$id" \
    --cgroup-parent "/sys/fs/cgroup/system.slice/$unit.scope" "$@"
fi
# An ordinary user's scope is delegated to them: skillrun finds it itself.
exec systemd-run --user --scope --quiet --unit="$unit" -p Delegate=yes \
  "$SKILLRUN" --execution-id "$id" "$@"
