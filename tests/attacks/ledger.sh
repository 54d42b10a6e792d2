#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the run's record against a skill that grows it
# and a file system that fills up:
# - Long names deep in /workspace/outputs, not UTF-8 (each byte escaped,
#   then written again in base64): 9,960 empty files used to write 500 MB
#   of artifact_committed lines, past the 256 MiB that --verify-audit and
#   --gc read of a ledger, so an untouched ledger failed as "tampered" and
#   a killed run's could never be closed.  The harvest now stops before
#   its artifact lines pass 64 MiB (limit_exceeded, key harvest-record).
# - A workspace that fills up with the record itself: an ordinary event
#   that would take the room audit.jsonl keeps for the final ones used to
#   end the copy there for good, so the run's ledger had no
#   execution_completed, no metadata.json (a half-written
#   metadata.json.tmp instead) and gc never closed it.  Now that event is
#   written to neither sink, the run stops, and both end with
#   execution_completed on one chain.
# - An --input whose name is not UTF-8: "Cannot allocate memory" and no
#   input_rejected fields; now refused under the name rule, recorded.
# As root: the full workspace is a tmpfs in a mount namespace of its own.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a tmpfs workspace in a mount namespace of its own)"
. "$(dirname "$0")/common.sh"

# A skill that leaves FILES empty files, named with 250 bytes that are not
# UTF-8, 11 directories deep in outputs, each directory's name as long
# (3,023 bytes below outputs/, within the 3,072 the harvest keeps of a
# path): about 16 KB of artifact_committed line for each.
deep_names='
  cd /workspace/outputs || exit 1
  long=$(head -c 248 /dev/zero | tr "\0" "\377")
  for i in $(seq 10 20); do mkdir "$long$i" && cd "$long$i" || exit 1; done
  for i in $(seq 1000 $((999 + $1))); do : >"$long$i" || exit 1; done
  echo made $1
'
run_dir() { echo "$WS_root/default/$RUN_ID"; }

# ---------------------------------------------------- the ledger's growth
skill root -- /bin/sh -c "$deep_names" sh 6000
run_ok root "6,000 deep files with long names that are not UTF-8"
check "root: ... the skill made them" grep -q "^made 6000" "$OUT"
size=$(stat -c %s "$(run_dir)/audit.jsonl")
check "root: ... the ledger stays under 65 MiB ($size bytes)" [ "$size" -lt $((65 << 20)) ]
is "root: ... the harvest stopped at its record's bound, said so" \
  "$("$JQ" -r 'select(.event == "limit_exceeded") | "\(.limit) \(.key) \(.cap)"' "$AUDIT")" \
  "output harvest-record $((64 << 20))"
committed=$("$JQ" -c 'select(.event == "artifact_committed")' "$AUDIT" | wc -l)
on_host=$(find "$(run_dir)/outputs" -type f | wc -l)
check "root: ... some were committed ($committed)" [ "$committed" -gt 100 ]
is "root: ... and only those are on the host" "$on_host" "$committed"
is "root: ... the run's copy is the stream" "$(cmp "$AUDIT" "$(run_dir)/audit.jsonl" && echo same)" same
is "root: ... metadata.json counts them" \
  "$("$JQ" -r '.result.artifacts.files' "$(run_dir)/metadata.json")" "$committed"
# The schema check (finish) reads every line the test left: keep the
# events that matter, not 60 MB of artifact lines twice.
{
  "$JQ" -c 'select(.event == "artifact_committed")' "$AUDIT" | head -n 1
  "$JQ" -c 'select(.event != "artifact_committed")' "$AUDIT"
} >"$T/growth-sample.lines"
rm -rf -- "$(run_dir)" "$AUDIT" "$STDOUT"

# ------------------------------------------- the record fills the workspace
# full LABEL -- SKILL-COMMAND...: one run in a 2 MiB tmpfs workspace (a
# mount namespace of its own; its contents copied out to $K), then the
# record's promises whatever the run's status: the ledger ends with
# execution_completed and verifies, the stream is the same bytes,
# metadata.json says the same status, nothing is half written, every file
# on the host has its event.  Sets $rc_full and $status_full.
full() {
  local label=$1 F out committed
  shift 2
  F=$(tmpdir)
  K=$F.keep
  out=$(F=$F SKILLRUN=$SKILLRUN unshare -m --propagation private bash -c '
    mount -t tmpfs -o size=2m,mode=0755 full "$F" || exit 99
    "$SKILLRUN" --workspace-root "$F" --execution-id full --audit-file "$F.stream" \
      "$@" >/dev/null 2>"$F.err"
    echo "rc $?"
    cp -a "$F/." "$F.keep"' sh "$B" -- "$@" 2>&1)
  rc_full=${out#rc }
  status_full=$(tail -n 1 "$K/default/full/audit.jsonl" | "$JQ" -r 'select(.event == "execution_completed") | .status')
  check "$label: the run's ledger ends with execution_completed ($out, ${status_full:-none})" \
    [ -n "$status_full" ]
  check "... and verifies" audit_ok "$K/default/full/audit.jsonl"
  is "... the stream is the same record" \
    "$(cmp "$F.stream" "$K/default/full/audit.jsonl" && echo same)" same
  is "... metadata.json says the same" \
    "$("$JQ" -r .result.status "$K/default/full/metadata.json")" "$status_full"
  is "... no half-written metadata.json.tmp is left" \
    "$(find "$K/default/full" -name 'metadata.json.tmp' | wc -l)" 0
  committed=$("$JQ" -c 'select(.event == "artifact_committed")' "$F.stream" | wc -l)
  is "... every file on the host has its event" \
    "$(find "$K/default/full/outputs" -type f | wc -l)" "$committed"
  is "... and gc has nothing to close" \
    "$(find "$K/.active" -mindepth 1 2>/dev/null | wc -l)" 0
  FULL_ERR=$F.err
  FULL_STREAM=$F.stream
}
if unshare -m true 2>/dev/null; then
  # 400 files: about 10 MB of artifact lines, on a 2 MiB tmpfs.
  full "a record that fills the workspace" -- /bin/sh -c "$deep_names" sh 400
  is "... the run fails (125, error)" "$rc_full $status_full" "125 error"
  check "... and says why on stderr" grep -q "no room left in the run's audit.jsonl" "$FULL_ERR"
  rm -rf -- "$K" "$FULL_STREAM"
  # 1.3 MB of data, then 12 files whose list in execution_completed takes
  # some 260 KiB: more than the 16 KiB the final events once had reserved
  # (the run's own ledger ended in a torn line of zeros, exit 0).
  full "a long final event on a full workspace" -- /bin/sh -c \
    'head -c 1300000 /dev/zero >/workspace/outputs/data; '"$deep_names" sh 12
  rm -rf -- "$K" "$FULL_STREAM"

  # The room kept for the final events is what a run needs, not the most
  # any run could: four runs at once, each leaving 150 KB, fit a 1 MiB
  # workspace (with a fixed 384 KiB reservation a run, one or two failed
  # in two tries of four, as they happened to overlap).
  F=$(tmpdir)
  out=$(F=$F SKILLRUN=$SKILLRUN unshare -m --propagation private bash -c '
    mount -t tmpfs -o size=1m,mode=0755 small "$F" || exit 99
    pids=()
    for i in 1 2 3 4; do
      "$SKILLRUN" --workspace-root "$F" --execution-id "small$i" "$@" \
        >/dev/null 2>"$F.err$i" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; echo "rc $?"; done' sh "$B" -- /bin/sh -c \
    'head -c 150000 /dev/zero >/workspace/outputs/o; sleep 1' 2>&1 | sort | uniq -c | tr -s ' ')
  is "four runs at once on a 1 MiB workspace all succeed" "$out" " 4 rc 0"

  # The skill's name and version go into both final lines, but are known
  # only once the manifest is read, after audit.jsonl has its first room:
  # a version of 4096 control characters (24 KiB a line, escaped) and 33
  # KiB of --label values in execution_started, on a workspace with 64-80
  # KiB free, used to leave the run's ledger without execution_completed
  # (its final lines did not fit the room kept before the version was
  # known).  Now that room is reserved with the version, or the run stops
  # before any line carries it.  A version with a control character is
  # refused now (skillrun-skill(5)): this one is 4096 backslashes, each
  # two bytes escaped (8 KiB a line).
  V=$T/control-version
  mkdir -p "$V"
  {
    printf -- '---\nname: control-version\ndescription: A long version.\nmetadata:\n  version: "'
    for _ in $(seq 4096); do printf '\\\\'; done
    printf '"\n---\n# control-version\n'
  } >"$V/SKILL.md"
  chmod -R a+rX "$V"
  labels=()
  for i in $(seq 32); do labels+=(--label "k$i=$(head -c 512 /dev/zero | tr '\0' '\\')"); done
  bad=""
  for free in 64 68 72 76 80; do
    F=$(tmpdir)
    out=$(F=$F SKILLRUN=$SKILLRUN FREE=$free unshare -m --propagation private bash -c '
      mount -t tmpfs -o size=1m,mode=0755 small "$F" || exit 99
      avail=$(($(stat -f -c "%a * %S" "$F") / 1024))
      head -c $(((avail - FREE) * 1024)) /dev/zero >"$F/filler"
      "$SKILLRUN" --workspace-root "$F" --execution-id cv --audit-file "$F.stream" \
        "$@" >/dev/null 2>"$F.err"
      echo "rc $?"
      tail -n 1 "$F/default/cv/audit.jsonl" >"$F.last"
      cmp -s "$F.stream" "$F/default/cv/audit.jsonl" && echo same' \
      sh "${labels[@]}" "$V" -- /bin/true 2>&1)
    [ "$("$JQ" -r .event "$F.last" 2>/dev/null)" = execution_completed ] &&
      [ "${out##*$'\n'}" = same ] || bad="$bad $free KiB ($(echo $out))"
    rm -f -- "$F.stream" "$F.err" "$F.last"
  done
  is "a long version and labels on a nearly full workspace: the run's ledger ends with execution_completed, as the stream" \
    "${bad:-none}" none

  # The run directory's metadata.json with those labels and that version
  # is 56 KiB, and a skill whose outputs fill the workspace used to leave
  # the run without one (the harvest's lines took the room).  Its room is
  # now kept in audit.jsonl's from the moment the sandbox's copy is
  # written, and given back for it after the ledger's last line.
  bad=""
  for free in 300 500 900; do
    F=$(tmpdir)
    out=$(F=$F SKILLRUN=$SKILLRUN FREE=$free unshare -m --propagation private bash -c '
      mount -t tmpfs -o size=2m,mode=0755 small "$F" || exit 99
      avail=$(($(stat -f -c "%a * %S" "$F") / 1024))
      head -c $(((avail - FREE) * 1024)) /dev/zero >"$F/filler"
      "$SKILLRUN" --workspace-root "$F" --execution-id mr --audit-file "$F.stream" \
        "$@" >/dev/null 2>"$F.err"
      echo "rc $?"
      tail -n 1 "$F/default/mr/audit.jsonl" >"$F.last"
      cmp -s "$F.stream" "$F/default/mr/audit.jsonl" && echo same
      "$JQ" -r .result.status "$F/default/mr/metadata.json" >"$F.meta" 2>&1' \
      sh "${labels[@]}" "$V" -- /bin/sh -c \
      'i=0; while [ $i -lt 300 ]; do echo $i >/workspace/outputs/f$i; i=$((i+1)); done' 2>&1)
    [ "$("$JQ" -r .event "$F.last" 2>/dev/null)" = execution_completed ] &&
      [ "${out##*$'\n'}" = same ] &&
      [ "$(cat "$F.meta")" = "$("$JQ" -r .status "$F.last")" ] ||
      bad="$bad $free KiB ($(echo $out) $(cat "$F.meta"))"
    rm -f -- "$F.stream" "$F.err" "$F.last" "$F.meta"
  done
  is "outputs that fill a workspace, with long labels: metadata.json is there, with the ledger's status" \
    "${bad:-none}" none

  # Less than the 64 KiB the run's copy reserves at a time, but more than
  # its final events need: its room used to be given up (as where the file
  # system cannot reserve), and a skill's log that filled the workspace
  # left the run without metadata.json.  Now the room the final events
  # need is reserved, however little is free.
  bad=""
  for free in 24 40 56; do
    F=$(tmpdir)
    out=$(F=$F SKILLRUN=$SKILLRUN FREE=$free unshare -m --propagation private bash -c '
      mount -t tmpfs -o size=1m,mode=0755 small "$F" || exit 99
      avail=$(($(stat -f -c "%a * %S" "$F") / 1024))
      head -c $(((avail - FREE) * 1024)) /dev/zero >"$F/filler"
      "$SKILLRUN" --workspace-root "$F" --execution-id lt --audit-file "$F.stream" \
        "$@" >/dev/null 2>"$F.err"
      echo "rc $?"
      tail -n 1 "$F/default/lt/audit.jsonl" >"$F.last"
      cmp -s "$F.stream" "$F/default/lt/audit.jsonl" && echo same
      [ -f "$F/default/lt/metadata.json" ] && echo metadata' \
      sh "$B" -- /bin/sh -c 'head -c 300000 /dev/zero | tr "\0" x' 2>&1)
    [ "$("$JQ" -r .event "$F.last" 2>/dev/null)" = execution_completed ] &&
      [ "$(echo $out)" = "rc 125 same metadata" ] || bad="$bad $free KiB ($(echo $out))"
    rm -f -- "$F.stream" "$F.err" "$F.last"
  done
  is "a workspace with 24-56 KiB free and a log that fills it: ledger and metadata.json whole" \
    "${bad:-none}" none

  # An --input that fills the workspace as it is copied: the run fails
  # before its metadata.json has room of its own, and the partial copy
  # used to stay in the staging directory until after the final records.
  # With those labels and that version, metadata.json (56 KiB) did not fit
  # what the ledger gave back ("cannot write metadata.json").  The staging
  # copy now goes first.
  head -c 3000000 /dev/zero >"$T/big-input"
  chmod 644 "$T/big-input"
  F=$(tmpdir)
  out=$(F=$F JQ=$JQ SKILLRUN=$SKILLRUN unshare -m --propagation private bash -c '
    mount -t tmpfs -o size=2m,mode=0755 small "$F" || exit 99
    "$SKILLRUN" --workspace-root "$F" --execution-id bi --audit-file "$F.stream" \
      "$@" >/dev/null 2>"$F.err"
    echo "rc $?"
    tail -n 1 "$F/default/bi/audit.jsonl" >"$F.last"
    cmp -s "$F.stream" "$F/default/bi/audit.jsonl" && echo same
    "$JQ" -r .result.status "$F/default/bi/metadata.json" 2>&1' \
    sh "${labels[@]}" -i "$T/big-input" "$V" -- /bin/true 2>&1)
  is "an --input that fills the workspace, with long labels: ledger and metadata.json whole" \
    "$(echo $out) $("$JQ" -r .event,.status "$F.last" | tr '\n' ' ')" \
    "rc 125 same error execution_completed error "
  rm -f -- "$F.stream" "$F.err" "$F.last" "$T/big-input"
else
  pass "# SKIP a record that fills the workspace: no mount namespace (unshare -m)"
fi

# ------------------------------------- a long version on every line
# Each line repeats the manifest's version: 4096 backslashes, 8 KiB
# escaped, over 9,990 short-named files passed the bound an estimate of
# the lines set (83 MB); the bound is on the lines' real bytes.
V=$T/long-version
mkdir -p "$V"
{
  printf -- "---\nname: long-version\ndescription: A skill whose version is long.\nmetadata:\n  version: '"
  head -c 4096 /dev/zero | tr '\0' '\\'
  printf "'\n---\n# long-version\n"
} >"$V/SKILL.md"
chmod -R a+rX "$V"
"$SKILLRUN" --workspace-root "$WS_root" --execution-id longv --audit-file "$T/longv.audit" "$V" \
  -- /bin/sh -c 'cd /workspace/outputs && for i in $(seq 9990); do : >"f$i"; done' \
  >/dev/null 2>"$T/longv.err"
is "a version of 4096 bytes, 9,990 files: the run succeeds" "$?" 0
size=$(stat -c %s "$T/longv.audit")
check "... the ledger stays under 65 MiB ($size bytes)" [ "$size" -lt $((65 << 20)) ]
is "... the harvest stopped at its record's bound" \
  "$("$JQ" -r 'select(.event == "limit_exceeded") | .key' "$T/longv.audit")" harvest-record
check "... and the ledger verifies" audit_ok "$T/longv.audit"
"$JQ" -c 'select(.event != "artifact_committed")' "$T/longv.audit" >"$T/longv-sample.lines"
rm -rf -- "$WS_root/default/longv" "$T/longv.audit"

# ----------------------------------------- an input name that is not UTF-8
I=$(tmpdir)
chmod 755 "$I"
name=$(printf 'caf\351.txt')
printf 'latin-1\n' >"$I/$name"
chmod 644 "$I/$name"
skill root -i "$I/$name" -- /bin/true
is "an input named in Latin-1: refused (123)" "$rc" 123
is "... input_rejected names the rule" \
  "$(field "$AUDIT" input_rejected '"\(.rule) \(.name) \(.path)"')" \
  "name caf$(printf '\357\277\275').txt $I/caf$(printf '\357\277\275').txt"
check "... stderr says what to do" grep -q "not UTF-8 text (give one as PATH:NAME)" "$ERR"
check "... and its audit verifies" audit_ok "$AUDIT"
skill root -i "$I/$name:cafe.txt" -- /bin/cat /workspace/inputs/cafe.txt
is "... given a name, it is staged" "$rc $(cat "$OUT")" "0 latin-1"
printf 'include default\ninputs-max-size 4\n' >"$T/small-inputs.profile"
chmod 644 "$T/small-inputs.profile"
skill root -p "$T/small-inputs.profile" -i "$I/$name:cafe.txt" -- /bin/true
is "... over inputs-max-size, refused with every field" \
  "$rc $(field "$AUDIT" input_rejected '"\(.rule) \(.name) \(.limit) \(.size)"')" \
  "123 inputs-max-size cafe.txt 4 8"

# ------------------------------- an input name with a C1 control character
# U+009B is CSI to a terminal that takes C1 controls: a control character,
# which skillrun(1) says an input NAME may not have (it was staged, and
# written raw on the record and the stream).
skill root -i "$I/$name:$(printf 'a\302\233b')" -- /bin/true
is "an input NAME with a C1 control (U+009B): refused (123)" "$rc" 123
is "... input_rejected names the rule" "$(field "$AUDIT" input_rejected .rule)" name
check "... stderr says why, on one line" \
  grep -q "a control character in the name" "$ERR"
is "... one line" "$(wc -l <"$ERR")" 1

finish
