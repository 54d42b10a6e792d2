#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Errors a person can act on (skillrun(1)): a command that cannot be
# executed is one line on stderr naming it and why; warnings go to stderr
# too with --verbose; a clone that hits the user-namespace limit says so,
# not that a disk is full; --explain shows the command, the working
# directory and the workspace root.  (Mistyped options and profile keys:
# cli.sh.)
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to also test as an unprivileged user"

T=$(tmpdir)
B=$T/err-skill
mkbundle "$B"
mkdir "$B/scripts"
printf '#!/bin/sh\necho hi\n' >"$B/scripts/plain.sh" # 0644: not executable
printf 'echo hi\n' >"$B/scripts/no-shebang.sh"
printf 'print(1)\n' >"$B/scripts/count.py"                     # 0644, no #!
printf '#!/usr/bin/env python3\nprint(1)\n' >"$B/scripts/envtool" # 0644
printf '#!/usr/bin/env -S python3 -u\nprint(1)\n' >"$B/scripts/splittool" # 0644
# Long #! lines (0644): 131 bytes, read whole (the first 128 bytes used to
# be, which cut 'python3' to 'pyth'); 260, longer than what is read of it
# (256 bytes, as the kernel does), whose interpreter's name is cut there
# and not guessed at.
long_line() { printf '#!/opt/%s/bin/python3\nprint(1)\n' "$(printf 'p%.0s' $(seq "$1"))"; }
long_line 111 >"$B/scripts/long.py"
long_line 240 >"$B/scripts/longer.py"
printf '#!/bin/sh\necho hi\n' >"$B/tool.sh"
chmod 755 "$B/tool.sh"
chmod 755 "$B/scripts/no-shebang.sh"
printf '#!/usr/bin/python9 -u\nprint(1)\n' >"$B/scripts/bad-interp.py"
chmod 755 "$B/scripts/bad-interp.py"
chmod -R a+rX "$T"

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  n=0
  r() {
    n=$((n + 1))
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "x$n" \
      --audit-file "$W/a.$n" "$@" 2>"$W/err.$n" </dev/null
  }
  # exec_line TEXT STATUS ERRNO LINE-PATTERN: the exit status, exec_error,
  # and exactly one line on stderr matching the pattern.
  exec_line() {
    local text=$1 want_rc=$2 want_errno=$3 pattern=$4 rc=$5
    is "$mode: $text: exit $want_rc" "$rc" "$want_rc"
    is "$mode: $text: exec_error $want_errno" \
      "$(field "$W/a.$n" execution_completed .exec_error)" "$want_errno"
    is "$mode: $text: one line on stderr" "$(wc -l <"$W/err.$n")" 1
    if grep -Eq -- "$pattern" "$W/err.$n"; then pass "$mode: $text: the line says why"; else
      fail "$mode: $text: the line says why"
      diag "got: $(cat "$W/err.$n")"
      diag "want: $pattern"
    fi
  }

  r "$B" -- scripts/missing.sh
  exec_line "a missing program" 127 ENOENT \
    "^skillrun: cannot execute 'scripts/missing.sh': No such file or directory$" $?
  r "$B" -- no-such-tool
  exec_line "a name not in PATH" 127 ENOENT \
    "^skillrun: cannot execute 'no-such-tool': not found in PATH: " $?
  r "$B" -- tool.sh
  exec_line "a name in PATH that is the skill's file" 127 ENOENT \
    "not found in PATH; the skill's own file is './tool.sh'" $?
  r "$B" -- scripts/plain.sh
  exec_line "a script without the execute bit" 126 EACCES \
    "^skillrun: cannot execute 'scripts/plain.sh': not executable \\(mode 0644\\): run it with its interpreter, such as 'sh scripts/plain.sh': Permission denied$" $?
  # The interpreter suggested is the script's: its #! line's (after env),
  # else its extension's; not sh for a Python script.
  r "$B" -- scripts/count.py
  exec_line "a Python script without the execute bit" 126 EACCES \
    "^skillrun: cannot execute 'scripts/count.py': not executable \\(mode 0644\\): run it with its interpreter, such as 'python3 scripts/count.py': Permission denied$" $?
  r "$B" -- scripts/envtool
  exec_line "a #!/usr/bin/env script without the execute bit" 126 EACCES \
    "such as 'python3 scripts/envtool'" $?
  r "$B" -- scripts/splittool
  exec_line "a #!/usr/bin/env -S script without the execute bit" 126 EACCES \
    "such as 'python3 scripts/splittool'" $?
  r "$B" -- scripts/long.py
  exec_line "a script with a #! line of 131 bytes" 126 EACCES \
    "such as 'python3 scripts/long.py'" $?
  r "$B" -- scripts/longer.py
  exec_line "a script with a #! line longer than 256 bytes" 126 EACCES \
    "such as 'python3 scripts/longer.py'" $?
  r "$B" -- scripts/no-shebang.sh
  exec_line "an executable text without #!" 126 ENOEXEC \
    "not an executable format \\(a script needs a #! line\\)" $?
  r "$B" -- scripts/bad-interp.py
  exec_line "a script whose interpreter is missing" 127 ENOENT \
    "bad interpreter: '/usr/bin/python9' \\(its #! line\\) is not in the sandbox" $?
  # Inputs keep their mode (this one 0755), but are on a noexec mount.
  printf '#!/bin/sh\necho hi\n' >"$W/tool.sh"
  chmod 755 "$W/tool.sh"
  r -i "$W/tool.sh" "$B" -- /workspace/inputs/tool.sh
  exec_line "an input" 126 EACCES "'/workspace/inputs/tool.sh': on a mount that does not allow execution \\(noexec\\)" $?

  # A bundle named wrong: one line naming the path and what to give
  # instead, refused (123) in a run and with --digest alike.
  r "$B/SKILL.md" -- /bin/true
  is "$mode: a file as the bundle: exit 123" "$?" 123
  is "$mode: ... bundle_rejected bundle_invalid" \
    "$(field "$W/a.$n" bundle_rejected .reason)" bundle_invalid
  is "$mode: ... one line on stderr says what to give" "$(cat "$W/err.$n")" \
    "skillrun: bundle $B/SKILL.md is not a directory: name the skill's directory, the one that holds SKILL.md"
  "${pre[@]}" "$SKILLRUN" --digest "$B/SKILL.md" >/dev/null 2>"$W/err.digest"
  is "$mode: ... --digest refuses it the same way (123)" "$?" 123
  is "$mode: ... with the same line" "$(cat "$W/err.digest")" "$(cat "$W/err.$n")"
  "${pre[@]}" "$SKILLRUN" --digest "$T/no-such-bundle" >/dev/null 2>"$W/err.digest"
  is "$mode: --digest of a missing bundle: 123, as a run" "$?" 123
  mkdir -p "$T/no-manifest"
  chmod a+rx "$T/no-manifest"
  r "$T/no-manifest" -- /bin/true
  is "$mode: a directory without SKILL.md: exit 123" "$?" 123
  is "$mode: ... one line on stderr naming the directory" "$(cat "$W/err.$n")" \
    "skillrun: bundle $T/no-manifest: no SKILL.md at the bundle root"
  # A file within the bundle refused: the line names the bundle too (an
  # orchestrator's log holds many runs' lines), then the file.
  F=$T/fifo-$mode
  mkbundle "$F"
  mkfifo "$F/pipe"
  chmod -R a+rX "$F"
  r "$F" -- /bin/true
  is "$mode: a FIFO in the bundle: exit 123" "$?" 123
  is "$mode: ... one line on stderr naming the bundle and the file" "$(cat "$W/err.$n")" \
    "skillrun: bundle $F: pipe: FIFOs are not allowed"
  "${pre[@]}" "$SKILLRUN" --digest "$F" >/dev/null 2>"$W/err.digest"
  is "$mode: ... --digest refuses it with the same line" "$(cat "$W/err.digest")" "$(cat "$W/err.$n")"
  # A bundle path longer than the line: its start and end, then the
  # file and what is wrong, every character whole.
  e=$(printf '\303\251%.0s' $(seq 100)) # 100 e-acute, 200 bytes
  F=$T/$e/$e/$e/$e/$e/fifo-$mode-end
  mkdir -p "$F"
  cp "$T/fifo-$mode/SKILL.md" "$F/"
  mkfifo "$F/pipe"
  chmod -R a+rX "$T/$e"
  r "$F" -- /bin/true
  rc=$?
  is "$mode: ... at a path of $(printf %s "$F" | wc -c) bytes: exit 123" "$rc" 123
  check "$mode: ... the line still ends with the file and why" grep -q "fifo-$mode-end: pipe: FIFOs are not allowed\$" "$W/err.$n"
  check "$mode: ... and is whole UTF-8 text" iconv -f UTF-8 -t UTF-8 "$W/err.$n"

  # Warnings: on the record always, on stderr with --verbose (stderr here
  # is a file, not a terminal).
  cat >"$W/net.profile" <<'EOF'
include default
network deny
EOF
  mkdir -p "$W/other-dir"
  cp "$B/SKILL.md" "$W/other-dir/SKILL.md"
  chmod -R a+rX "$W/other-dir"
  r --network allow "$W/other-dir" -- /bin/true
  is "$mode: warnings are not on stderr by default" "$(cat "$W/err.$n")" ""
  r --verbose --network allow "$W/other-dir" -- /bin/true
  nw=$(grep -c '"event":"warning"' "$W/a.$n")
  is "$mode: --verbose: one stderr line per warning event ($nw)" \
    "$(grep -c '^skillrun: warning: ' "$W/err.$n")" "$nw"
  check "$mode: --verbose: the name that differs from the directory" \
    grep -q "^skillrun: warning: SKILL.md:2: name 'err-skill' differs from the bundle directory name 'other-dir'" "$W/err.$n"
  check "$mode: --verbose: the network not granted" \
    grep -q "^skillrun: warning: .*network.*" "$W/err.$n"
  if [ "$(field "$W/a.$n" policy_resolved .policy.limits.memory.enforced_by)" = rlimit ]; then
    check "$mode: --verbose: the fallback to rlimits, with its reason" \
      grep -q "^skillrun: warning: no cgroup v2 leaf: .* (.*)$" "$W/err.$n"
  fi

  # One step of the launch refused by a filter the whole run inherits
  # (tests/refuse): each fails like any layer: one line on stderr, status
  # error, the layer's event after policy_resolved, a complete run
  # directory, and the skill never ran.
  # refused WHAT TEXT LAYER LINE [RUN-DIR]: RUN-DIR, what the run
  # directory holds (outputs/ is made once init is released).
  refused() {
    local what=$1 text=$2 layer=$3 line=$4
    local dir=${5:-audit.jsonl logs metadata.json outputs}
    n=$((n + 1))
    "${pre[@]}" "$REFUSE" "$what" "$SKILLRUN" --workspace-root "$W" \
      --execution-id "x$n" --audit-file "$W/a.$n" "$B" -- \
      /bin/sh -c 'echo ran; echo ran >/workspace/outputs/ran' \
      2>"$W/err.$n" </dev/null
    is "$mode: $text: exit 125" "$?" 125
    is "$mode: ... one line on stderr says why" "$(cat "$W/err.$n")" "$line"
    is "$mode: ... the $layer layer's event" \
      "$(field "$W/a.$n" layer_failed .layer)" "$layer"
    # policy_resolved is written while init mounts, or before the run's
    # end when the launch failed before that: on the record either way.
    is "$mode: ... policy_resolved, then layer_failed" \
      "$("$JQ" -r 'select(.event == "policy_resolved" or .event == "layer_failed") | .event' "$W/a.$n" | paste -sd' ')" \
      "policy_resolved layer_failed"
    is "$mode: ... execution_completed: error" \
      "$(field "$W/a.$n" execution_completed .status)" error
    is "$mode: ... metadata.json: error" \
      "$("$JQ" -r .result.status "$W/default/x$n/metadata.json")" error
    is "$mode: ... the run directory holds its records and nothing else" \
      "$(ls -A "$W/default/x$n" | paste -sd' ')" "$dir"
    # The skill never ran, and the record does not say it did.
    is "$mode: ... the skill never ran (no output, no stdout)" \
      "$(ls -A "$W/default/x$n/outputs" 2>/dev/null)$(cat "$W/default/x$n/logs/stdout.log" 2>/dev/null)" ""
    is "$mode: ... no 'running' state on the record" \
      "$(grep -c '"state":"running"' "$W/a.$n")" 0
  }
  if ! "$REFUSE" netlink true 2>/dev/null; then
    pass "# SKIP $mode: refused launch steps: tests/refuse does not work on this architecture"
    check_run_audits "$mode" "$W" x
    continue
  fi
  # The skill's process makes the sandbox's network namespace and brings
  # its lo up while init mounts.
  refused netlink "lo cannot be brought up" network \
    "skillrun: open rtnetlink socket: Permission denied"
  refused unshare-net "no network namespace" network \
    "skillrun: unshare(CLONE_NEWNET): Operation not permitted"
  # As root the supervisor leaves root's groups before the clone: refused,
  # the launch ends before init is released.
  if [ $mode = root ]; then
    refused setgroups "the supervisor cannot leave root's groups" userns \
      "skillrun: setgroups: Operation not permitted" \
      "audit.jsonl logs metadata.json"
  fi
  check_run_audits "$mode" "$W" x
done

# --explain: the command a run would run, where, and the workspace root.
out=$("$SKILLRUN" --explain --workspace-root "$T/ws" "$B" -- python3 scripts/x.py --flag 2>/dev/null)
is "--explain names the command" "$("$JQ" -c .run.command <<<"$out")" '["python3","scripts/x.py","--flag"]'
is "--explain names the working directory" "$("$JQ" -r .run.working_directory <<<"$out")" /workspace/skills/err-skill
is "--explain names the workspace root" "$("$JQ" -r .run.workspace_root <<<"$out")" "$T/ws"
is "--explain names stdin" "$("$JQ" -r .run.stdin <<<"$out")" /dev/null
out=$("$SKILLRUN" --explain "$B" 2>/dev/null)
is "--explain without a command: null (nothing to run)" "$("$JQ" -c .run.command <<<"$out")" null
check "--explain without --workspace-root: the default root" \
  test -n "$("$JQ" -r '.run.workspace_root // empty' <<<"$out")"

# ENOSPC from clone3: the user-namespace limit, not a full disk.  In a user
# namespace of our own, whose max_user_namespaces is 0, skillrun runs as a
# mapped ordinary user (1000, host 200000).
if command -v unshare >/dev/null && unshare -U true 2>/dev/null; then
  W=$T/enospc
  mkdir -p "$W/ws"
  # An input keeps the staging copy in the run directory, not in a tmpfs
  # directory of host uid 200000's.
  echo data >"$W/in.txt"
  chown -R 200000:200000 "$W"
  mkfifo "$W/go"
  # The shell was exec'd before its uid was mapped, so it holds no
  # capability in the namespace: exec again, as the namespace's root.
  unshare -U sh -c '
    read -r _ <"$1"
    exec sh -c "
      echo 0 >/proc/sys/user/max_user_namespaces || exit 99
      exec setpriv --reuid=1000 --regid=1000 --clear-groups -- \
        \"\$1\" --workspace-root \"\$2/ws\" --audit-file \"\$2/audit\" \
        -i \"\$2/in.txt\" \"\$3\" -- /bin/true 2>\"\$2/err\"" sh "$2" "$3" "$4"
    ' sh "$W/go" "$SKILLRUN" "$W" "$B" &
  pid=$!
  # Until unshare(2) is done, the process is still in our namespace.
  me=$(readlink /proc/self/ns/user)
  for _ in $(seq 250); do
    [ "$(readlink "/proc/$pid/ns/user")" != "$me" ] && break
    sleep 0.02
  done
  # A map is taken in one write(2): cat, not the shell's printf.
  printf '0 0 1\n1000 200000 1\n' >"$T/map"
  cat "$T/map" >"/proc/$pid/uid_map"
  cat "$T/map" >"/proc/$pid/gid_map"
  echo go >"$W/go"
  wait $pid
  rc=$?
  is "ENOSPC: exit 125" "$rc" 125
  check "ENOSPC: stderr names user.max_user_namespaces" \
    grep -q "the limit on user namespaces is reached (sysctl user.max_user_namespaces" "$W/err"
  check "ENOSPC: ... and no disk" grep -q "no disk is full" "$W/err"
  check "ENOSPC: not strerror's disk message" not grep -q "No space left on device" "$W/err"
  is "ENOSPC: layer_failed namespaces, errno ENOSPC" \
    "$(field "$W/audit" layer_failed '[.layer, .errno] | @tsv')" "namespaces	ENOSPC"
else
  pass "# SKIP ENOSPC (cannot make a user namespace here)"
fi
finish
