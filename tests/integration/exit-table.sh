#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# skillrun(1)'s EXIT STATUS table, row by row: each row the page lists is
# produced here by real runs (a row without a case fails), with the
# execution_completed status that goes with it.  As root and as an
# unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"

MAN1=$TOP_BUILDDIR/man/skillrun.1
# The rows: the bold first line after each .TP of the section.
mapfile -t ROWS < <(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN1" |
  awk 'prev == ".TP" && /^\.B / {sub(/^\.B /, ""); gsub(/\\-/, "-"); print} {prev = $0}')
check "skillrun(1) EXIT STATUS has at least 9 rows (got ${#ROWS[@]})" test "${#ROWS[@]}" -ge 9

T=$(tmpdir)
B=$T/table-skill
mkbundle "$B"
mkdir "$B/scripts"
printf '#!/bin/sh\nexit 0\n' >"$B/scripts/plain.sh" # 0644
printf 'echo no interpreter line\n' >"$B/scripts/no-shebang"
chmod 755 "$B/scripts/no-shebang"
printf '#!/nonexistent/interpreter\n' >"$B/scripts/bad-interp"
chmod 755 "$B/scripts/bad-interp"
mkdir "$T/a-directory"
printf 'bind-ro /nonexistent-skillrun-test-path /opt/x\n' >"$T/bad-bind.profile"
printf 'memroy 1G\n' >"$T/typo.profile"
printf 'include default\nkill-grace 200ms\n' >"$T/grace.profile"
chmod -R a+rX "$T"
mkdir -m 0 "$T/closed-bundle"
# Bundles with an entry the caller cannot read: a file, a directory it
# cannot open, one it can list but not search.
mkbundle "$T/closed-file"
mkbundle "$T/closed-dir"
mkbundle "$T/unsearchable-dir"
printf 'secret\n' >"$T/closed-file/secret"
chmod 0 "$T/closed-file/secret"
mkdir -m 0 "$T/closed-dir/private"
mkdir "$T/unsearchable-dir/listed"
: >"$T/unsearchable-dir/listed/file"
chmod 0644 "$T/unsearchable-dir/listed"

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  n=0
  r() { # a run as execution t$n; audit in $W/a.$n; sets rc
    n=$((n + 1))
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "t$n" \
      --audit-file "$W/a.$n" "$@" >/dev/null 2>"$W/err.$n" </dev/null
    rc=$?
  }
  status() { field "$W/a.$n" execution_completed .status; }
  # expect ROW WHAT WANT-RC WANT-STATUS: the last run.
  expect() {
    is "$mode: row $1: $2: exit $3" "$rc" "$3"
    is "$mode: row $1: $2: status $4" "$(status)" "$4"
  }
  # on EVENT JQ WANT: a field of the last run's EVENT.
  on() { is "$mode: ... $1 $2" "$(field "$W/a.$n" "$1" "$2")" "$3"; }

  for row in "${ROWS[@]}"; do
    case $row in
    0)
      r "$B" -- /bin/true
      expect "$row" "a skill that exits 0" 0 succeeded
      ;;
    1-122)
      r "$B" -- /bin/sh -c 'exit 42'
      expect "$row" "a skill that exits 42" 42 failed
      on execution_completed .skill_exit_code 42
      ;;
    123)
      r "$T/no-such-bundle" -- /bin/true
      expect "$row" "a missing bundle" 123 refused
      on bundle_rejected .reason bundle_invalid
      # Not a bundle directory, or one the caller cannot open: the same
      # refusal as a path that is not there (or a parent it cannot search).
      r "$B/SKILL.md" -- /bin/true
      expect "$row" "a bundle that is a file" 123 refused
      on bundle_rejected .reason bundle_invalid
      r /dev/null -- /bin/true
      expect "$row" "a bundle that is a device" 123 refused
      on bundle_rejected .reason bundle_invalid
      if [ "$(id -u)" -ne 0 ] || [ $mode = user ]; then
        r "$T/closed-bundle" -- /bin/true
        expect "$row" "a bundle directory the caller cannot open" 123 refused
        on bundle_rejected .reason bundle_invalid
        # An entry in it the caller cannot read: the same refusal, not a
        # failure of skillrun's (125, error).
        for b in closed-file closed-dir unsearchable-dir; do
          r "$T/$b" -- /bin/true
          expect "$row" "a bundle with an entry the caller cannot read ($b)" 123 refused
          on bundle_rejected .reason bundle_invalid
        done
      fi
      r -i "$T/no-such-input" "$B" -- /bin/true
      expect "$row" "an input that does not exist" 123 refused
      on input_rejected .reason input_invalid
      r -i "$T/a-directory" "$B" -- /bin/true
      expect "$row" "an input that is a directory (the same way)" 123 refused
      on input_rejected .reason input_invalid
      n=$((n + 1))
      "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --tenant 'bad tenant' \
        --audit-file "$W/a.$n" "$B" -- /bin/true >/dev/null 2>&1
      rc=$?
      expect "$row" "an invalid tenant" 123 refused
      on bundle_rejected .reason invalid_id
      r --expect-sha256 "$(printf '%064d' 0)" "$B" -- /bin/true
      expect "$row" "a digest mismatch" 123 refused
      on bundle_rejected .reason digest_mismatch
      # The same execution id again (its own audit file).
      "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "t$n" \
        --audit-file "$W/a.$n.again" "$B" -- /bin/true >/dev/null 2>&1 </dev/null
      rc=$?
      is "$mode: row $row: an execution id that already ran: exit 123" "$rc" 123
      is "$mode: ... bundle_rejected .reason" \
        "$(field "$W/a.$n.again" bundle_rejected .reason)" execution_replayed
      ;;
    124)
      r --timeout 1s "$B" -- /bin/sleep 30
      expect "$row" "the wall clock" 124 timeout
      on limit_exceeded .limit wall
      on execution_completed .signal 15
      # A skill that ignores the SIGTERM sent at the deadline is killed
      # once kill-grace has passed: the record names that SIGKILL, as a
      # cancellation's does (it said null, as if nothing had ended it).
      r -p "$T/grace.profile" --timeout 1s "$B" -- \
        /bin/sh -c 'trap "" TERM; while :; do sleep 0.1; done'
      expect "$row" "the wall clock, SIGTERM ignored" 124 timeout
      on execution_completed .signal 9
      on execution_completed .skill_exit_code null
      ;;
    125)
      # Usage errors: 125, always, and no stream.
      for args in "--memroy 1G" "--memory lots" "--no-such-option" "--pids 0" \
        "--stdin --digest"; do
        n=$((n + 1))
        # shellcheck disable=SC2086 # the words of the case
        "${pre[@]}" "$SKILLRUN" $args "$B" >"$W/out.$n" 2>/dev/null </dev/null
        is "$mode: row $row: usage error '$args': exit 125" "$?" 125
        is "$mode: row $row: ... and no audit stream" "$(wc -c <"$W/out.$n")" 0
      done
      r -p "$T/typo.profile" "$B" -- /bin/true
      expect "$row" "a profile with an unknown key" 125 error
      on error .reason config_invalid
      r "$B"
      expect "$row" "nothing to run" 125 error
      on error .reason usage
      r -p "$T/bad-bind.profile" "$B" -- /bin/true
      expect "$row" "a sandbox layer that cannot be built" 125 error
      on layer_failed .layer mount
      ;;
    126)
      r "$B" -- scripts/plain.sh
      expect "$row" "a script without the execute bit" 126 failed
      on execution_completed .exec_error EACCES
      r "$B" -- scripts/no-shebang
      expect "$row" "a text without #!" 126 failed
      on execution_completed .exec_error ENOEXEC
      ;;
    127)
      r "$B" -- scripts/missing
      expect "$row" "a missing program" 127 failed
      on execution_completed .exec_error ENOENT
      r "$B" -- scripts/bad-interp
      expect "$row" "a missing interpreter" 127 failed
      on execution_completed .exec_error ENOENT
      ;;
    137)
      r --cpu-seconds 1 "$B" -- /bin/sh -c 'while :; do :; done'
      expect "$row" "the CPU-time budget" 137 cpu_exceeded
      on limit_exceeded .limit cpu
      # The record names the kill that ended the skill: the supervisor's
      # SIGKILL, or RLIMIT_CPU's SIGXCPU where that backstop came first
      # (it said null, as if nothing had ended the skill).
      sig=$(field "$W/a.$n" execution_completed .signal)
      check "$mode: ... execution_completed .signal is the kill's ($sig)" \
        test "$sig" = 9 -o "$sig" = 24
      # Every enforcer of memory stops the run (cgroup2, cgroup1, the
      # supervisor's sampler).  This row used to run only where
      # enforced_by said "cgroup", a name no run records: it never ran.
      r --memory 32M "$B" -- /bin/sh -c 'x=a; while :; do x=$x$x; done'
      expect "$row" "the memory limit ($(field "$W/a.$n" policy_resolved \
        .policy.limits.memory.enforced_by))" 137 oom
      on limit_exceeded .limit memory
      on execution_completed .signal 9
      ;;
    128+N)
      r "$B" -- /bin/sh -c 'kill -USR1 $$'
      expect "$row" "killed by SIGUSR1" 138 killed
      on execution_completed .signal 10
      n=$((n + 1))
      "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "t$n" \
        --audit-file "$W/a.$n" "$B" -- /bin/sleep 30 >/dev/null 2>&1 </dev/null &
      sup=$!
      for _ in $(seq 100); do
        grep -q '"state":"running"' "$W/a.$n" 2>/dev/null && break
        sleep 0.05
      done
      kill -TERM "$sup"
      wait "$sup"
      rc=$?
      expect "$row" "skillrun got SIGTERM" 143 cancelled
      ;;
    "123-255 from the skill")
      for code in 123 124 125 126 127 137 200; do
        r "$B" -- /bin/sh -c "exit $code"
        expect "$row" "a skill that exits $code itself" "$code" failed
        on execution_completed .skill_exit_code "$code"
      done
      ;;
    *)
      fail "$mode: row '$row' of skillrun(1) EXIT STATUS has no case in this test"
      ;;
    esac
  done
  check_run_audits "$mode" "$W" t
done
finish
