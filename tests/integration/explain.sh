#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --explain: the resolved policy as one JSON document; layering and clamping
# seen from the command line; nothing runs and nothing is written.
. "$(dirname "$0")/lib.sh"

T=$(tmpdir)
W=$T/ws
B=$T/explain-skill
mkbundle "$B"
cat >"$B/SKILL.md" <<'EOS'
---
name: explain-skill
description: Lowers some limits.
metadata:
  sandbox.memory: 128M
  sandbox.timeout: 20s
  sandbox.network: allow
---
EOS

out=$("$SKILLRUN" --workspace-root "$W" --explain "$B")
is "--explain exits 0" "$?" 0
check "--explain prints one JSON document" "$JQ" -e . <<<"$out"
is "memory lowered by the manifest" "$(jq -r .limits.memory.value <<<"$out")" $((128 * 1024 * 1024))
is "memory's source is the manifest" "$(jq -r .limits.memory.source <<<"$out")" manifest
is "cpu-seconds keeps the platform default 60" "$(jq -r '.limits["cpu-seconds"].value' <<<"$out")" 60
is "log-cap is 10 MiB" "$(jq -r '.limits["log-cap"].value' <<<"$out")" $((10 * 1024 * 1024))
is "network stays denied: the default profile does not permit it" \
  "$(jq -r .network.mode <<<"$out")" deny
is "the bundle digest is named" "$(jq -r .bundle.digest <<<"$out")" \
  "$("$SKILLRUN" --digest "$B" | cut -d' ' -f1)"
check "nothing was written under the workspace root" [ ! -e "$W" ]

out=$("$SKILLRUN" --explain --memory 64M --timeout 5s "$B")
is "a flag lowers further" "$(jq -r .limits.memory.value <<<"$out")" $((64 * 1024 * 1024))
is "the flag is the source" "$(jq -r .limits.memory.source <<<"$out")" flag
is "timeout lowered by the flag" "$(jq -r .limits.timeout.value <<<"$out")" 5000

out=$("$SKILLRUN" --explain --memory 4G "$B")
is "a flag cannot raise: clamped to the manifest's 128M" \
  "$(jq -r .limits.memory.value <<<"$out")" $((128 * 1024 * 1024))
check "the clamp is reported as a warning" grep -q 'memory' <<<"$(jq -r '.warnings[]' <<<"$out")"

P=$T/netok.profile
printf 'include default\nnetwork allow\n' >"$P"
out=$("$SKILLRUN" --explain -p "$P" "$B")
is "profile permits + manifest asks: network allow" "$(jq -r .network.mode <<<"$out")" allow
out=$("$SKILLRUN" --explain -p "$P" --network deny "$B")
is "--network deny wins" "$(jq -r .network.mode <<<"$out")" deny

C=$T/skillrun.conf
printf 'memory 32M\n' >"$C"
# skillrun.conf counts only when root owns it.
if needs_root "skillrun.conf lowering the platform caps"; then
  out=$("$SKILLRUN" --conf "$C" --explain "$B")
  is "a root-owned conf lowers the platform cap" "$(jq -r .limits.memory.cap <<<"$out")" $((32 * 1024 * 1024))
  is "... and the manifest's larger value is clamped" "$(jq -r .limits.memory.value <<<"$out")" $((32 * 1024 * 1024))
  chmod g+w "$C"
  "$SKILLRUN" --conf "$C" --explain "$B" >/dev/null 2>"$T/err"
  is "a group-writable conf is not ignored: it stops --explain (125)" "$?" 125
  check "... saying why" grep -q "is not root's alone" "$T/err"
fi

printf 'include default\nmemroy 1G\n' >"$T/typo.profile"
"$SKILLRUN" --explain -p "$T/typo.profile" "$B" >/dev/null 2>"$T/err"
is "an unknown profile key exits 125" "$?" 125
check "... naming file:line" grep -q "typo.profile:2:" "$T/err"
is "... in one line" "$(wc -l <"$T/err")" 1

"$SKILLRUN" --explain -p strict "$B" >/dev/null 2>"$T/err"
is "strict profile found by name (SKILLRUN_PROFILE_PATH or installed)" "$?" 0
finish
