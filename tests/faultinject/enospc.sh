#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ENOSPC sweep: runs a skill that writes logs and outputs with its
# workspace root on a tmpfs of SIZE KiB, for each size, in a private mount
# namespace, and prints one line per run: exit status, whether the run
# directory exists, the last event of audit.jsonl and of the stream, the
# status of metadata.json, --verify-audit's verdict, stderr; "VIOLATION"
# when a run with a run directory breaks skillrun(1)'s promises (see
# sweep.sh), apart from the documented one (AUDIT EVENTS: a file system
# too full for the final events' room when the run directory is made
# leaves audit.jsonl empty, exit 125, audit_write).
#
# Usage (root): unshare -m --propagation private tests/faultinject/enospc.sh \
#   SKILLRUN WORKDIR [SIZE_KIB...]     (default: 8 to 48 by 2, then larger)
set -u
SKILLRUN=$1 WORK=$2
shift 2
SIZES=${*:-$(seq 8 2 48) 64 96 128 160 200 256 320 400 512 1024}
[ "$(id -u)" = 0 ] || { echo "enospc.sh: needs root (mount)" >&2; exit 77; }
mkdir -p "$WORK/mnt" "$WORK/bundle/fi-enospc" || exit 99
WORK=$(cd -P "$WORK" && pwd)
printf -- '---\nname: fi-enospc\ndescription: t.\n---\n# fi-enospc\n' >"$WORK/bundle/fi-enospc/SKILL.md"
M=$WORK/mnt
bad=0
for kb in $SIZES; do
  mount -t tmpfs -o size="${kb}k",mode=755 none "$M" || exit 99
  id=e$kb
  "$SKILLRUN" --workspace-root "$M/ws" --execution-id "$id" "$WORK/bundle/fi-enospc" -- /bin/sh -c \
    'echo out; head -c 300000 /dev/zero >/workspace/outputs/big; echo a >/workspace/outputs/a; head -c 100000 /dev/zero' \
    >"$WORK/stream" 2>"$WORK/stderr"
  rc=$?
  d=$M/ws/default/$id
  ledger=$(tail -n1 "$d/audit.jsonl" 2>/dev/null | jq -r '.event + "/" + (.status // "")' 2>/dev/null)
  stream=$(tail -n1 "$WORK/stream" | jq -r '.event + "/" + (.status // "")' 2>/dev/null)
  meta=$(jq -r .result.status "$d/metadata.json" 2>/dev/null)
  verdict=$("$SKILLRUN" --verify-audit "$d/audit.jsonl" 2>&1 | cut -d: -f1-2 | cut -c1-24)
  hash=$(printf '%s' "$M/ws" | sha256sum | cut -c1-16)
  v=""
  case $rc in 0 | 125) ;; *) v="$v exit $rc;" ;; esac
  [ "$rc" = 0 ] || [ "$(wc -l <"$WORK/stderr")" = 1 ] || v="$v stderr not one line;"
  if [ -d "$d" ]; then
    [ "$stream" = execution_completed/"${meta:-none}" ] || v="$v stream/metadata disagree;"
    if [ -z "$ledger" ] && grep -q "for its final events" "$WORK/stderr"; then :; else
      [ "$ledger" = "$stream" ] || v="$v ledger $ledger;"
    fi
  fi
  [ -e "/dev/shm/skillrun-0/$hash-default:$id" ] && v="$v staging left;"
  echo "${v:+VIOLATION }kb=$kb rc=$rc dir=$([ -d "$d" ] && echo y || echo n) ledger=$ledger stream=$stream meta=$meta verify=[$verdict] stderr: $(head -c 160 "$WORK/stderr" | tr '\n' '|')${v:+ --$v}"
  [ -n "$v" ] && bad=1
  umount "$M"
done
exit $bad
