#!/bin/sh
# The example skill: everything it touches is inside the sandbox.
set -eu
# The working directory is the skill's own (read-only) directory.
greeting=$(cat references/greeting.txt)
echo "$greeting"
echo "directory: $(pwd)"
echo "skill:     $SKILLRUN_SKILL (execution $SKILLRUN_EXECUTION_ID)"
echo "user:      $(id -u):$(id -g)"
echo "hostname:  $(hostname)"
echo "processes: $(ls -d /proc/[0-9]* | wc -l) visible"
echo "network:   $(ls /sys/class/net 2>/dev/null || awk -F: 'NR>2{gsub(/ /,"",$1); printf "%s ", $1}' /proc/net/dev)"
printf '%s\nwritten by %s at %s\n' "$greeting" "$SKILLRUN_SKILL" "$(date -u +%FT%TZ)" \
  >"$SKILLRUN_OUTPUTS/hello.txt"
echo "wrote $SKILLRUN_OUTPUTS/hello.txt"
