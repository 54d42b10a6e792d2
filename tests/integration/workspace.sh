#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The run's data (DESIGN.md "Host side of a run"): inputs read-only, outputs
# harvested as hashed artifacts without following links, size-capped
# scratch, metadata.json, concurrent runs that share nothing, and (as root)
# a distinct host uid per concurrent run.  As root and as an unprivileged
# user (lib.sh $MODES).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/data-skill
mkbundle "$B"
cat >"$B/run.sh" <<'EOS'
#!/bin/sh
# What the skill does with its data, one line per check.
set -u
echo "inputs=$(ls /workspace/inputs | tr '\n' ' ')"
if echo x >>/workspace/inputs/notes.txt 2>/dev/null; then echo "input_write=OK"; else echo "input_write=REFUSED"; fi
if touch /workspace/inputs/new 2>/dev/null; then echo "input_create=OK"; else echo "input_create=REFUSED"; fi
echo "input_sum=$(sha256sum </workspace/inputs/notes.txt | cut -d' ' -f1)"
echo "metadata_exec=$(sed -n 's/.*"execution_id": "\([^"]*\)".*/\1/p' /workspace/metadata.json | head -n 1)"
mkdir -p /workspace/outputs/sub
echo "report for $SKILLRUN_EXECUTION_ID" >/workspace/outputs/report.txt
head -c 100000 /dev/urandom >/workspace/outputs/sub/blob.bin
chmod 750 /workspace/outputs/sub/blob.bin
ln -s /etc/passwd /workspace/outputs/passwd-link
mkfifo /workspace/outputs/fifo
EOS
chmod 755 "$B/run.sh"
echo "notes for the skill" >"$T/notes.txt"
chmod -R a+rX "$T"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  run=$W/default/d1
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id d1 -i "$T/notes.txt" "$B" -- ./run.sh >"$W/audit" 2>"$W/err"
  is "$mode: data run exits 0" "$?" 0
  out=$(cat "$run/logs/stdout.log")
  check "$mode: the input is visible under its name" grep -q "^inputs=bundle notes.txt" <<<"$out"
  check "$mode: writing to an input fails" grep -q "^input_write=REFUSED" <<<"$out"
  check "$mode: creating a file in inputs fails" grep -q "^input_create=REFUSED" <<<"$out"
  is "$mode: the input arrives unchanged" "$(sed -n 's/^input_sum=//p' <<<"$out")" \
    "$(sha256sum <"$T/notes.txt" | cut -d' ' -f1)"
  is "$mode: metadata.json is mounted and names the run" "$(sed -n 's/^metadata_exec=//p' <<<"$out")" d1
  is "$mode: input_staged names the input's sha256" "$(field "$W/audit" input_staged .sha256)" \
    "$(sha256sum <"$T/notes.txt" | cut -d' ' -f1)"
  is "$mode: metadata.json lists the input" "$("$JQ" -r '.inputs[0].name' "$run/metadata.json")" notes.txt
  is "$mode: metadata.json has the result" "$("$JQ" -r '.result.status' "$run/metadata.json")" succeeded

  # Artifacts: each harvested file's sha256 is what the audit says.
  n_ok=0
  n_art=0
  while read -r path sum; do
    n_art=$((n_art + 1))
    [ "$(sha256sum <"$run/outputs/$path" | cut -d' ' -f1)" = "$sum" ] && n_ok=$((n_ok + 1))
  done < <("$JQ" -r 'select(.event == "artifact_committed") | "\(.path) \(.sha256)"' "$W/audit")
  is "$mode: two artifacts committed" "$n_art" 2
  is "$mode: each artifact's sha256 matches the harvested file" "$n_ok" 2
  # The final event and metadata.json carry the same list.
  committed=$("$JQ" -c 'select(.event == "artifact_committed") | {path, size, sha256, mode}' "$W/audit" | "$JQ" -cs .)
  is "$mode: execution_completed lists every artifact_committed" \
    "$(field "$W/audit" execution_completed '.artifacts | [.list, .truncated, .files] | tojson')" \
    "[$committed,false,2]"
  is "$mode: metadata.json's result lists them too" \
    "$("$JQ" -c '.result.artifacts.list' "$run/metadata.json")" "$committed"
  is "$mode: an artifact's mode is the skill's" \
    "$("$JQ" -r 'select(.event == "artifact_committed" and .path == "sub/blob.bin") | .mode' "$W/audit")" 0750

  # Many artifacts with long names: the list in the final event stops in
  # time, the per-artifact events stay complete, the line stays short.
  if [ $mode = root ]; then
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id many "$B" -- /bin/sh -c \
      'n=0; while [ $n -lt 1500 ]; do n=$((n+1)); : >/workspace/outputs/$(printf "%0200d" $n); done' \
      >"$W/audit.many" 2>/dev/null
    is "many artifacts: 1500 artifact_committed events" "$(grep -c '"artifact_committed"' "$W/audit.many")" 1500
    is "many artifacts: the final list is cut and says so" \
      "$(field "$W/audit.many" execution_completed '[.artifacts.files, .artifacts.truncated, (.artifacts.list | length < 1500)] | @tsv')" \
      "1500	true	true"
    check "many artifacts: the final line is under 300 KiB" \
      test "$(grep '"execution_completed"' "$W/audit.many" | wc -c)" -lt 307200
    check "many artifacts: the stream verifies" sh -c '"$1" --verify-audit "$2" >/dev/null' sh "$SKILLRUN" "$W/audit.many"
  fi
  check "$mode: the symlink to /etc/passwd was not followed" [ ! -e "$run/outputs/passwd-link" ]
  check "$mode: ... and was reported" grep -q "passwd-link" <("$JQ" -r 'select(.event == "warning") | .path // empty' "$W/audit")
  check "$mode: the FIFO was not harvested" [ ! -e "$run/outputs/fifo" ]
  if [ $mode = user ]; then want=$USER_UID; else want=0; fi
  is "$mode: harvested files belong to the caller" "$(stat -c %u "$run/outputs/report.txt")" "$want"
  staging=$(field "$W/audit" bundle_verified .staging)
  is "$mode: a run with inputs stages in its run directory" "$staging" "$run/staging"
  check "$mode: staging is gone after the run" [ ! -e "$run/staging" ]

  # A run that writes nothing commits nothing.
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id d2 "$B" -- /bin/true >"$W/audit2" 2>/dev/null
  is "$mode: no output, no artifact_committed" "$(grep -c artifact_committed "$W/audit2")" 0

  # Without inputs, a small bundle is staged on a tmpfs of the caller's
  # (workspace.h), if there is one here.
  staging=$(field "$W/audit2" bundle_verified .staging)
  uid=$([ $mode = user ] && echo "$USER_UID" || echo 0)
  if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    base=$(dirname -- "$staging")
    is "$mode: a small bundle without inputs is staged on tmpfs" "$(stat -f -c %T "$base")" tmpfs
    check "$mode: ... in a directory of the caller's, mode 0711 ($base)" \
      [ "$(stat -c %u:%a "$base")" = "$uid:711" ]
    check "$mode: ... which is gone after the run" [ ! -e "$staging" ]
  else
    pass "# SKIP $mode: no tmpfs at /dev/shm"
  fi
  head -c $((17 << 20)) /dev/zero >"$T/big-$mode.bin"
  mkdir -p "$T/big-$mode"
  cp -r "$B/." "$T/big-$mode/"
  mv "$T/big-$mode.bin" "$T/big-$mode/big.bin"
  chmod -R a+rX "$T/big-$mode"
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id d4 "$T/big-$mode" -- /bin/true >"$W/audit4" 2>/dev/null
  is "$mode: a 17 MiB bundle runs" "$?" 0
  is "$mode: ... staged in its run directory" "$(field "$W/audit4" bundle_verified .staging)" "$W/default/d4/staging"
  check "$mode: ... which is gone after the run" [ ! -e "$W/default/d4/staging" ]
  rm -rf "$T/big-$mode"

  # Scratch is a capped tmpfs: a 2 GiB write stops at the cap, host disk unchanged.
  printf 'include default\nscratch-size 32M\n' >"$T/small.profile"
  chmod 644 "$T/small.profile"
  before=$(df -k --output=used "$W" | tail -n 1)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id d3 -p "$T/small.profile" "$B" -- \
    /bin/sh -c 'head -c 2G /dev/zero >/workspace/scratch/big 2>/tmp/err; grep -o "No space left" /tmp/err; du -k /workspace/scratch/big' \
    >/dev/null 2>&1
  after=$(df -k --output=used "$W" | tail -n 1)
  check "$mode: 2 GiB into scratch hits ENOSPC" grep -q "No space left" "$W/default/d3/logs/stdout.log"
  kb=$(awk 'END {print $1}' "$W/default/d3/logs/stdout.log")
  check "$mode: ... at the 32 MiB cap ($kb KiB)" [ "${kb:-0}" -le 32768 ]
  # The run's own footprint, exactly: its run directory.  The whole file
  # system's use also moves with whatever else writes to it (another suite,
  # another test of this one): there, only a write of the 2 GiB's order
  # tells.
  kb=$(du -sk "$W/default/d3" | cut -f1)
  check "$mode: the run directory did not grow by the write ($kb KiB)" [ "$kb" -lt 20000 ]
  check "$mode: the host disk did not grow by the write ($((after - before)) KiB)" \
    [ $((after - before)) -lt 1048576 ]

  # 16 concurrent runs: all succeed, each sees only its own data.  Each
  # skill sleeps a duration unique to this script (GNU sleep takes
  # fractions), so that its processes are told from any other's.
  nap="3.$$"
  pids=()
  for i in $(seq 16); do
    echo "input of run $i" >"$T/in-$mode-$i"
    chmod 644 "$T/in-$mode-$i"
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "c$i" -i "$T/in-$mode-$i:mine" "$B" -- \
      /bin/sh -c 'ls /workspace/inputs | tr "\n" " " >/workspace/outputs/seen; cat /workspace/inputs/mine >>/workspace/outputs/seen; sleep "$1"' - "$nap" \
      >"$W/audit.c$i" 2>"$W/err.c$i" &
    pids+=($!)
  done
  if [ $mode = root ]; then
    # Snapshots of the sleeping skills over up to 3 s (a loaded machine
    # starts them slowly; each run has one): the most distinct host uids
    # seen at once, and whether two live runs ever shared one.
    uids=0 shared=""
    for _ in $(seq 30); do
      live=$(test_pids "^sleep $nap\$" | paste -sd,)
      if [ -n "$live" ]; then
        # One ps: the uids of those still sleeping (not of a pid reused
        # since).
        snap=$(ps -o uid=,args= -p "$live" 2>/dev/null | awk -v a="$nap" '$2 == "sleep" && $3 == a { print $1 }')
        all=$(grep -c . <<<"$snap")
        u=$(sort -u <<<"$snap" | grep -c .)
        [ "$u" -gt "$uids" ] && uids=$u
        [ "$u" -lt "$all" ] && shared="$shared $all:$u"
      fi
      [ "$uids" -ge 16 ] && break
      sleep 0.1
    done
    check "$mode: concurrent runs have distinct host uids (ps shows $uids at once)" [ "$uids" -ge 8 ]
    is "$mode: ... no two live runs share one (live:distinct)" "$shared" ""
  fi
  failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
  is "$mode: 16 concurrent runs all succeed" "$failed" 0
  own=0
  for i in $(seq 16); do
    [ "$(cat "$W/default/c$i/outputs/seen" 2>/dev/null)" = "bundle mine input of run $i" ] && own=$((own + 1))
  done
  is "$mode: each concurrent run saw only its own input" "$own" 16
  if [ $mode = root ]; then
    distinct=$(for i in $(seq 16); do field "$W/audit.c$i" policy_resolved .sandbox_ids.uid; done | sort -u | wc -l)
    is "$mode: the audit names 16 distinct sandbox uids" "$distinct" 16
  fi
  left=$(find "$W/default" -maxdepth 2 -name staging | wc -l)
  is "$mode: no staging directory is left" "$left" 0
  # metadata.json's temporary file is renamed into place, never left
  # beside it.
  kept=$(for i in $(seq 16); do ls -A "$W/default/c$i" | paste -sd' '; done | sort -u)
  is "$mode: each run directory holds its records and nothing else" "$kept" \
    "audit.jsonl logs metadata.json outputs"
  check "$mode: no live-run marker is left" [ -z "$(ls -A "$W/.active" 2>/dev/null)" ]
done

# $XDG_RUNTIME_DIR is used only when it and its skillrun/ are the
# caller's, on tmpfs, and not writable by others.  Runs as the unprivileged
# user (root does not use it).
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" != tmpfs ]; then
  pass "# SKIP XDG_RUNTIME_DIR: no tmpfs at /dev/shm"
elif [ -n "$_user_skip" ]; then
  pass "# SKIP XDG_RUNTIME_DIR: as uid $NOBODY: $_user_skip"
else
  W=$(user_workspace)
  good=$(outside_tmpdir /dev/shm)
  [ "$(id -u)" -eq "$USER_UID" ] || chown "$USER_UID:$USER_UID" "$good"
  chmod 700 "$good"
  XDG_RUNTIME_DIR=$good as_user "$SKILLRUN" --workspace-root "$W" --execution-id x1 "$B" -- /bin/true >"$W/a.x1" 2>/dev/null
  is "XDG_RUNTIME_DIR of the caller's: the run exits 0" "$?" 0
  st=$(field "$W/a.x1" bundle_verified .staging)
  check "XDG_RUNTIME_DIR of the caller's: staged there ($st)" [ "${st#"$good"/skillrun/}" != "$st" ]
  rm -rf -- "$good"
  # Another user's skillrun/ in it: made by root for the test user.
  if needs_root "XDG_RUNTIME_DIR/skillrun of another user's"; then
    bad=$(outside_tmpdir /dev/shm)
    chmod 755 "$bad"
    mkdir -m 0711 "$bad/skillrun" # root's, not the caller's
    XDG_RUNTIME_DIR=$bad as_user "$SKILLRUN" --workspace-root "$W" --execution-id x2 "$B" -- /bin/true >"$W/a.x2" 2>/dev/null
    is "XDG_RUNTIME_DIR/skillrun of another user's: the run exits 0" "$?" 0
    st=$(field "$W/a.x2" bundle_verified .staging)
    check "XDG_RUNTIME_DIR/skillrun of another user's: passed over ($st)" \
      [ "${st#/dev/shm/skillrun-"$USER_UID"/}" != "$st" ]
    check "... and left alone" [ -z "$(ls -A "$bad/skillrun")" ]
    rm -rf -- "$bad"
  fi
fi

# The pool is configured in skillrun.conf (root-owned) and used by root.
needs_root "the uid pool" || finish
W=$(tmpdir)
printf 'uid-pool 900000 2\n' >"$T/pool.conf"
"$SKILLRUN" --conf "$T/pool.conf" --workspace-root "$W" --execution-id p1 "$B" -- /bin/true >"$W/a.p1" 2>/dev/null
uid=$(field "$W/a.p1" policy_resolved .sandbox_ids.uid)
check "uid-pool from skillrun.conf is used (uid $uid)" grep -qx "90000[01]" <<<"$uid"
# A pool of one: the second of two concurrent runs waits for the slot.
printf 'uid-pool 900010 1\n' >"$T/one.conf"
"$SKILLRUN" --conf "$T/one.conf" --workspace-root "$W" --execution-id q1 "$B" -- /bin/sleep 1 >"$W/a.q1" 2>/dev/null &
q1=$!
sleep 0.3
"$SKILLRUN" --conf "$T/one.conf" --workspace-root "$W" --execution-id q2 "$B" -- /bin/true >"$W/a.q2" 2>/dev/null
q2rc=$?
wait $q1
q1rc=$?
is "a full pool makes the next run wait, then both succeed" "$q1rc:$q2rc" "0:0"
is "... on the same single host uid" \
  "$(field "$W/a.q1" policy_resolved .sandbox_ids.uid):$(field "$W/a.q2" policy_resolved .sandbox_ids.uid)" \
  "900010:900010"
printf 'uid-pool 0 64\n' >"$T/badpool.conf"
"$SKILLRUN" --conf "$T/badpool.conf" --workspace-root "$W" "$B" -- /bin/true >"$W/a.bp" 2>"$W/err.bp"
is "a uid-pool reaching 0 is refused with 125" "$?" 125
check "... naming file:line" grep -q "badpool.conf:1:" "$W/err.bp"

# A relative workspace root: refused when the run opens it, on the record
# (skillrun(1) --workspace-root), and nothing made where it points.
(cd "$T" && "$SKILLRUN" --workspace-root rel-ws "$B" -- /bin/true >"$W/a.rel" 2>"$W/err.rel")
is "a relative workspace root is refused with 125" "$?" 125
check "... saying it must be absolute" grep -q "must be an absolute path" "$W/err.rel"
is "... the stream's error and end (reason workspace, status error)" \
  "$("$JQ" -r 'select(.event == "error") | .reason' "$W/a.rel") $("$JQ" -r 'select(.event == "execution_completed") | .status' "$W/a.rel")" \
  "workspace error"
check "... nothing made at the relative path" test ! -e "$T/rel-ws"
# One whose path is not UTF-8: the records name run directories by path,
# where a byte 0xff showed as U+FFFD, a run_dir that names nothing (the
# fresh-eyes finding).  Refused before anything is made; and so is one
# reached through a link, once resolved.
"$SKILLRUN" --workspace-root "$T/w$(printf '\377')s" "$B" -- /bin/true >"$W/a.u8" 2>"$W/err.u8"
is "a workspace root whose path is not UTF-8 is refused with 125" "$?" 125
check "... saying so" grep -q "is not UTF-8 text, and the records name run directories by path" "$W/err.u8"
is "... the stream's error and end (reason workspace, status error; no run_dir)" \
  "$("$JQ" -r 'select(.event == "error") | .reason' "$W/a.u8") $("$JQ" -r 'select(.event == "execution_completed") | .status' "$W/a.u8") $(field "$W/a.u8" execution_started .run_dir)" \
  "workspace error null"
check "... nothing made there" test ! -e "$T/w$(printf '\377')s"
mkdir "$T/v$(printf '\377')s"
ln -s "$T/v$(printf '\377')s" "$T/u8-link"
"$SKILLRUN" --workspace-root "$T/u8-link" "$B" -- /bin/true >"$W/a.u8l" 2>"$W/err.u8l"
is "... nor one through a link to such a path (125)" "$?" 125
is "... and nothing made in it" "$(ls -A "$T/v$(printf '\377')s")" ""
# A workspace root that does not exist is made with each missing directory
# above it, as mkdir -p would: the caller's, mode 0711 less the umask
# (skillrun(1) --workspace-root).
P=$(mode_workspace root)
for um in 022 077; do
  (umask $um && "$SKILLRUN" --workspace-root "$P/$um/b/ws" "$B" -- /bin/true >"$W/a.deep" 2>"$W/err.deep")
  is "umask $um: a workspace root below missing directories: the run succeeds" "$?" 0
  want=$([ $um = 022 ] && echo 711 || echo 700)
  is "... each directory made is the caller's, mode $want" \
    "$(stat -c %u:%a "$P/$um" "$P/$um/b" "$P/$um/b/ws" | tr '\n' ' ')" "$(id -u):$want $(id -u):$want $(id -u):$want "
  check "... and holds the run" test -s "$P/$um/b/ws/default/$(field "$W/a.deep" execution_started .execution_id)/metadata.json"
done
finish
