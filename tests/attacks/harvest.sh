#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the harvest (issue 14, item 4): what a skill
# leaves in /workspace/outputs is bounded and attested.  Every entry counts
# against outputs-files (the outputs tmpfs's inode cap and the harvest's
# entry cap), directories and skipped links too: 150,000 empty directories
# used to become 150,000 host directories (590 MB) and 40,000 links 40,000
# warnings.  Warnings about skipped entries are capped, with one summary.
# A name that is not UTF-8 is recorded escaped with its raw bytes; a name
# with a control or bidi character is skipped and said so; entries below
# the depth limit, a file cut at outputs-size and a tmpfs the skill filled
# (ENOSPC) are each reported, never dropped silently or committed as if
# complete.  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

printf 'include default\noutputs-size 2M\n' >"$T/small.profile"
chmod 644 "$T/small.profile"
MAXW=16 # SR_HARVEST_MAX_WARNINGS

# warnings FILE: the harvest's warnings (path- or summary-shaped).
warnings() { "$JQ" -c 'select(.event == "warning" and (has("path") or .reason == "outputs_skipped"))' "$1"; }
host_entries() { find "$1" -mindepth 1 2>/dev/null | wc -l; }
run_dir() { dirname "$(dirname "$OUT")"; }

for mode in root user; do
  # 150,000 empty directories.
  t0=$(date +%s)
  attack $mode -- mkmany:dirs:150000
  el=$(($(date +%s) - t0))
  run_ok $mode "150,000 directories"
  blocked $mode mkmany:dirs:150000
  # many/ and 9999 below it are the 10,000 outputs-files allows; the tmpfs
  # holds one entry more, for the harvest to refuse (one over the cap).
  check "$mode: ... stopped by the inode cap: $(result mkmany:dirs:150000)" \
    grep -q "^mkmany:dirs:150000=BLOCKED:ENOSPC after 10000$" "$OUT"
  n=$(host_entries "$(run_dir)/outputs")
  check "$mode: ... the host got at most outputs-files (10000) entries ($n)" [ "$n" -le 10000 ]
  check "$mode: ... in bounded time ($el s)" [ "$el" -lt 120 ]
  is "$mode: ... the full tmpfs is on the record" \
    "$("$JQ" -r 'select(.event == "limit_exceeded") | "\(.key) \(.in_sandbox)"' "$AUDIT" | head -n 1)" \
    "outputs-files true"

  # 40,000 symbolic links: never followed, counted, the warnings capped.
  t0=$(date +%s)
  attack $mode -- mkmany:symlinks:40000
  el=$(($(date +%s) - t0))
  run_ok $mode "40,000 symbolic links"
  blocked $mode mkmany:symlinks:40000
  nw=$(warnings "$AUDIT" | wc -l)
  is "$mode: ... $MAXW warnings and one summary" "$nw" $((MAXW + 1))
  made=$(sed -n 's/.*ENOSPC after \([0-9]*\).*/\1/p' <<<"$(result mkmany:symlinks:40000)")
  # All but the last, one over outputs-files, where the harvest stopped.
  is "$mode: ... the summary counts every link the harvest visited" \
    "$(warnings "$AUDIT" | "$JQ" -r 'select(.reason == "outputs_skipped") | .skipped.symlink')" \
    "$((${made:-0} - 1))"
  check "$mode: ... the ledger stays small ($(stat -c %s "$AUDIT") bytes)" \
    [ "$(stat -c %s "$AUDIT")" -lt 65536 ]
  check "$mode: ... in bounded time ($el s)" [ "$el" -lt 120 ]
  is "$mode: ... no link reached the host" "$(find "$(run_dir)/outputs" -type l | wc -l)" 0

  # Names: not UTF-8 (harvested, recorded escaped with its bytes), an
  # escape sequence, a right-to-left override and a byte 0x9b that is not
  # UTF-8, ESC [ on a terminal of 8-bit characters (skipped, recorded).
  skill $mode -- /bin/sh -c '
    cd /workspace/outputs
    printf "latin-1\n" >"$(printf "caf\351.txt")"
    printf "x\n" >"$(printf "\033[2Jclear")"
    printf "x\n" >"$(printf "csi\2332J")"
    printf "x\n" >"$(printf "evil\342\200\256txt.exe")"
    printf "x\n" >"$(printf "line\342\200\250sep")"
    printf "x\n" >"$(printf "para\342\200\251sep")"
    d=.; for i in $(seq 40); do d=$d/d$i; done; mkdir -p "$d" && : >"$d/deep"
  '
  run_ok $mode "names and depth"
  art=$("$JQ" -c 'select(.event == "artifact_committed")' "$AUDIT")
  is "$mode: a Latin-1 name is committed with its escaped path" \
    "$("$JQ" -r .path <<<"$art")" 'caf\xe9.txt'
  is "$mode: ... and its raw bytes" "$("$JQ" -r .path_base64 <<<"$art")" \
    "$(printf 'caf\351.txt' | base64)"
  is "$mode: ... with the size and sha256 of its content" \
    "$("$JQ" -r '"\(.size) \(.sha256)"' <<<"$art")" "8 $(printf 'latin-1\n' | sha256sum | cut -d' ' -f1)"
  check "$mode: ... and is on the host under its own name" \
    test -f "$(run_dir)/outputs/$(printf 'caf\351.txt')"
  skipped=$(warnings "$AUDIT" | "$JQ" -r 'select(.skipped == "name") | .path' | LC_ALL=C sort | tr '\n' ' ')
  is "$mode: names with an escape sequence, a bidi override, a line separator or a raw C1 byte are skipped and named" \
    "$skipped" '\x1b[2Jclear csi\x9b2J evil\u202etxt.exe line\u2028sep para\u2029sep '
  is "$mode: ... not created on the host" \
    "$(find "$(run_dir)/outputs" -name '*clear' -o -name 'evil*' -o -name '*sep' -o -name 'csi*' | wc -l)" 0
  check "$mode: ... and no line separator is in the record raw" \
    not grep -q $'\342\200\250\|\342\200\251' "$AUDIT" "$(run_dir)/metadata.json"
  check "$mode: a directory below the depth limit is reported" \
    sh -c "warnings() { \"$JQ\" -r 'select(.event == \"warning\" and .skipped == \"depth\") | .path' \"\$1\"; }; warnings '$AUDIT' | grep -q '^d1/d2/.*/d33\$'"

  # Names that spell an escape: the four characters \xff and the byte
  # 0xff, and the characters \u2028 beside a skipped U+2028, used to be
  # shown alike ("\xff", "x\u2028"): a backslash is shown as \x5c, with
  # the raw bytes, so that no two names share a path on the record.
  skill $mode -- /bin/sh -c '
    cd /workspace/outputs
    printf a >"$(printf "\\\\xff")"; printf b >"$(printf "\377")"
    printf c >"$(printf "x\\\\u2028")"; printf d >"$(printf "x\342\200\250")"
  '
  run_ok $mode "names that spell an escape"
  shown=$("$JQ" -r 'select(.event == "artifact_committed" or (.event == "warning" and has("path"))) | .path' "$AUDIT" | LC_ALL=C sort)
  is "$mode: ... each name has a path of its own" "$(tr '\n' ' ' <<<"$shown")" \
    '\x5cxff \xff x\u2028 x\x5cu2028 '
  is "$mode: ... the backslash's name is committed with its raw bytes" \
    "$("$JQ" -r 'select(.event == "artifact_committed" and .sha256 == "'"$(printf a | sha256sum | cut -d' ' -f1)"'") | .path_base64' "$AUDIT" | base64 -d)" \
    '\xff'
  check "$mode: ... and both are on the host under their own names" \
    test -f "$(run_dir)/outputs/\\xff" -a -f "$(run_dir)/outputs/$(printf '\377')" \
    -a -f "$(run_dir)/outputs/x\\u2028"

  # Long names in a tree: a path below outputs/ over 3072 bytes is skipped
  # (a directory with everything below it), so that every committed path
  # can be opened as run_dir/outputs/PATH.  Twelve 255-byte levels make
  # 3071 bytes; a file in the twelfth, or a thirteenth level, passes it.
  skill $mode -- /bin/sh -c '
    n=$(printf "%0255d" 0); d=/workspace/outputs
    for i in $(seq 11); do d=$d/$n; done
    mkdir -p "$d/$n/$n" && : >"$d/ok" && : >"$d/$n/toolong" && : >"$d/$n/$n/below"
  '
  run_ok $mode "paths longer than 3072 bytes"
  n255=$(printf "%0255d" 0)
  is "$mode: ... the file within the bound is committed" \
    "$("$JQ" -r 'select(.event == "artifact_committed") | .path | length' "$AUDIT")" $((11 * 256 + 2))
  is "$mode: ... the entries past it are skipped as too long" \
    "$(warnings "$AUDIT" | "$JQ" -r 'select(.skipped == "length") | .path | "\(length) \(split("/") | last)"' | sort | tr '\n' ' ')" \
    "3079 toolong 3327 $n255 "
  is "$mode: ... and not created on the host" \
    "$(find "$(run_dir)/outputs" -name toolong -o -name below | wc -l)" 0
  is "$mode: ... no path the host got is longer than outputs/ and 3072 bytes" \
    "$(cd "$(run_dir)" && find outputs | awk 'length > 8 + 3072' | wc -l)" 0

  # A sparse file over outputs-size: stopped at the cap, named, removed.
  skill $mode -p "$T/small.profile" -- /bin/sh -c \
    'printf "first\n" >/workspace/outputs/a.txt; truncate -s 1G /workspace/outputs/z-sparse'
  run_ok $mode "a sparse file over outputs-size"
  lim=$("$JQ" -c 'select(.event == "limit_exceeded")' "$AUDIT")
  is "$mode: ... limit_exceeded names the cap and the file" \
    "$("$JQ" -r '"\(.limit) \(.key) \(.cap) \(.path)"' <<<"$lim")" "output outputs-size 2097152 z-sparse"
  check "$mode: ... which is not left on the host" test ! -e "$(run_dir)/outputs/z-sparse"

  # The skill fills the outputs tmpfs: ENOSPC inside is on the record.
  skill $mode -p "$T/small.profile" -- /bin/sh -c \
    'head -c 8M /dev/zero >/workspace/outputs/fill; echo "head: $?"'
  run_ok $mode "a skill that fills its outputs"
  check "$mode: ... the skill met ENOSPC" grep -q "head: 1" "$OUT"
  is "$mode: a full outputs tmpfs is reported (in_sandbox), then the file over the cap" \
    "$("$JQ" -r 'select(.event == "limit_exceeded") | "\(.key) \(.in_sandbox) \(.path)"' "$AUDIT" | tr '\n' ';')" \
    "outputs-size true null;outputs-size null fill;"
  check "$mode: ... which is not left on the host" test ! -e "$(run_dir)/outputs/fill"
  host_unchanged $mode
done
finish
