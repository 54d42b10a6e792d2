#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, libmagic exploited by an input: a skill that
# declares input types (skillrun-skill(5) sandbox.inputs-types) has every
# --input typed by libmagic, which parses bytes whoever handed over the
# input chose, and has had heap overflows on crafted ones (CVE-2019-18218).
# It used to run in the supervisor, which holds the audit stream (stdout),
# the run directory's audit.jsonl and the workspace, as root for a root
# run.  A fake libmagic.so.1 (LD_LIBRARY_PATH, as skillrun opens it by
# soname) stands in for an exploited one: its magic_buffer writes a forged
# audit line to fd 1, with a LOUD input to every fd 0-1023, creates a
# marker file, and SIGKILLs the supervisor (the pid magic_open ran in);
# a CRASH input segfaults, a HANG input waits forever.  Before, the forged
# line reached the audit stream, the marker appeared and skillrun was
# killed (or crashed, or hung) with no record.  Now libmagic runs in a
# child under seccomp (skillrun(1) INPUTS): the forgeries fail, skillrun
# lives, and a child that dies, spins, hangs or garbles its answer stops the run
# (125, reason "inputs") with its record whole.  A SIGTERM while it hangs
# used to wait out its 10 s and end as that failure (125); it cancels the
# run at once (143, cancelled).  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
CC=${CC:-cc}
command -v "$CC" >/dev/null || skip_all "no C compiler ($CC) to build the fake libmagic"

T=$(tmpdir)
PWN=$T/pwn
mkdir -p "$PWN" "$T/lib"
chmod 1777 "$PWN"
MARKER=$PWN/marker
soname=$("$SKILLRUN" --version | sed -n 's/^libmagic [0-9.]* (\(libmagic\.so\.[0-9]*\),.*/\1/p')
[ -n "$soname" ] || soname=libmagic.so.1

cat >"$T/fake.c" <<'EOF'
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXTENSION 0x1000000 /* MAGIC_EXTENSION */
static const char forged[] = "{\"event\":\"execution_completed\","
                             "\"status\":\"succeeded\",\"forged\":\"libmagic\"}\n";
static pid_t supervisor;
static int flags;

void *magic_open(int f) {
  supervisor = getpid(); /* the cookie is made in the supervisor */
  flags = f;
  return &flags;
}
int magic_load(void *m, const char *file) { return 0; }
int magic_setflags(void *m, int f) { flags = f; return 0; }
int magic_setparam(void *m, int param, const void *value) { return 0; }
const char *magic_error(void *m) { return "fake"; }
int magic_version(void) { return 544; }
const char *magic_buffer(void *m, const void *buf, size_t len) {
  static volatile int word;
  int fd;

  if (len >= 5 && !memcmp(buf, "CRASH", 5))
    *(volatile int *)0 = 1;
  if (len >= 4 && !memcmp(buf, "SPIN", 4))
    for (;;)
      word++;
  if (len >= 4 && !memcmp(buf, "HANG", 4))
    for (;;)
      syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  (void)!write(1, forged, sizeof(forged) - 1);
  if (len >= 4 && !memcmp(buf, "LOUD", 4))
    for (fd = 0; fd < 1024; fd++)
      (void)!write(fd, forged, sizeof(forged) - 1);
  fd = open(MARKER, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0)
    close(fd);
  kill(supervisor, SIGKILL);
  return flags & EXTENSION ? "pdf" : "application/pdf";
}
EOF
"$CC" -shared -fPIC -o "$T/lib/$soname" -Wl,-soname,"$soname" -DMARKER="\"$MARKER\"" "$T/fake.c" ||
  die "cannot build the fake $soname"

D=$T/pdf-skill
mkdir -p "$D"
cat >"$D/SKILL.md" <<'EOS'
---
name: pdf-skill
description: Reads PDF inputs.
metadata:
  sandbox.inputs-types: "application/pdf"
---
EOS
for kind in QUIET LOUD CRASH SPIN HANG; do echo "$kind input" >"$T/$kind.pdf"; done
chmod -R a+rX "$T"

# The child that spins must spend its 5 s of CPU time before the 10 s
# skillrun waits for its answer: on a loaded machine (two CPUs, make -j2,
# a sanitizer build) it got less than half a CPU and was stopped as one
# that does not answer.  Where the caller may, it runs at nice -10 (the
# child inherits it), ahead of the other tests' processes; starved all
# the same, the run is tried again (below).
boost=(env)
[ "$(nice -n -10 nice 2>/dev/null)" = $(($(nice) - 10)) ] && boost=(nice -n -10)

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  n=0
  # r KIND [PREFIX...]: a run with the KIND input through the fake
  # libmagic, started by PREFIX (before the switch to MODE's user); $rc,
  # $A (the audit stream, skillrun's stdout), $E (stderr), $R (run dir).
  r() {
    local kind=$1
    shift
    n=$((n + 1))
    A=$W/a.$n E=$W/err.$n R=$W/default/m$n
    rm -f "$MARKER"
    "$@" "${pre[@]}" env LD_LIBRARY_PATH="$T/lib" timeout -s KILL 60 \
      "$SKILLRUN" --workspace-root "$W" --execution-id "m$n" -i "$T/$kind.pdf:doc.pdf" "$D" -- /bin/true \
      >"$A" 2>"$E"
    rc=$?
  }
  # unharmed TEXT: nothing forged anywhere, no marker, the record whole.
  unharmed() {
    local forged
    forged=$(grep -rl forged "$A" "$E" "$R" 2>/dev/null)
    is "$mode: $1: no forged line in the audit stream, stderr or the run directory" "$forged" ""
    check "$mode: $1: no marker file was created" test ! -e "$MARKER"
    is "$mode: $1: the audit stream ends with execution_completed" \
      "$(tail -n 1 "$A" | "$JQ" -r .event 2>/dev/null)" execution_completed
    check "$mode: $1: ... and verifies" audit_ok "$A"
    check "$mode: $1: the run directory's audit.jsonl is the same" cmp -s "$A" "$R/audit.jsonl"
    check "$mode: $1: metadata.json is written" test -s "$R/metadata.json"
  }
  # stopped TEXT WHY: the run was stopped, 125 "inputs", naming WHY.
  stopped() {
    is "$mode: $1: skillrun lives and exits 125" "$rc" 125
    is "$mode: $1: ... reason inputs" "$(field "$A" error .reason)" inputs
    check "$mode: $1: ... saying libmagic failed or was stopped ($2)" \
      grep -q "$soname failed or was stopped on an input ($2)" "$E"
    grep -q "($2)" "$E" || diag "$mode: $1: stderr: $(head -c 300 "$E")"
    unharmed "$1"
  }

  r QUIET
  is "$mode: a libmagic that forges, plants and kills: skillrun lives and exits 0" "$rc" 0
  is "$mode: ... with the type it answered" \
    "$("$JQ" -r 'select(.event == "input_staged") | .type' "$A" 2>/dev/null)" application/pdf
  unharmed "forge, plant, kill"

  r LOUD
  stopped "one that writes to every fd (its answer garbled)" "a malformed answer"

  r CRASH
  stopped "one that crashes" "killed by signal 11"

  # Its 5 s of CPU time spent, it is SIGKILLed by the kernel: said so,
  # not taken for a garbled answer (the SIGKILL that ends a child still
  # there used to mask the one it died of).
  # Starved all the same (an ordinary user may not raise its priority),
  # the child is rightly stopped as one that gave no answer in 10 s:
  # tried again, three times at most, since this case is about the CPU
  # kill (a skillrun that never reports it still fails).
  for try in 1 2 3; do
    r SPIN "${boost[@]}"
    grep -q "no answer within 10 s" "$E" || break
    diag "$mode: try $try: the spinning child had less than half a CPU for 10 s; again"
  done
  stopped "one that spins" "killed by signal 9 (its 5 s of CPU time, or the OOM killer)"

  start=$(date +%s)
  r HANG
  stopped "one that hangs" "no answer within 10 s"
  check "$mode: ... within 20 s" test $(($(date +%s) - start)) -lt 20

  # SIGTERM while libmagic hangs: the run is cancelled at once (skillrun(1)
  # EXIT STATUS: whatever stage the run is at), not held for the 10 s
  # libmagic is given and then reported as libmagic's failure.
  n=$((n + 1))
  A=$W/a.$n E=$W/err.$n R=$W/default/m$n
  "${pre[@]}" env LD_LIBRARY_PATH="$T/lib" "$SKILLRUN" --workspace-root "$W" \
    --execution-id "m$n" -i "$T/HANG.pdf:doc.pdf" "$D" -- /bin/true \
    >"$A" 2>"$E" </dev/null &
  sup=$!
  wait_for "$A" '"event":"bundle_verified"'
  # Until libmagic's child waits in its futex (its wchan, which root may
  # read); 0.5 s where it cannot be seen.
  hung=
  for _ in $(seq 200); do
    for c in $(pgrep -P $sup); do
      case $(cat "/proc/$c/wchan" 2>/dev/null) in futex*) hung=$c ;; esac
    done
    [ -n "$hung" ] && break
    if [ "$(id -u)" != 0 ]; then
      sleep 0.5
      break
    fi
    sleep 0.05
  done
  [ -n "$hung" ] || diag "$mode: libmagic's child was not seen hanging before the SIGTERM"
  start=$(date +%s%N)
  kill -TERM $sup
  wait $sup
  rc=$?
  took=$((($(date +%s%N) - start) / 1000000))
  is "$mode: SIGTERM while libmagic hangs: exit 143" "$rc" 143
  check "$mode: ... at once (${took} ms, under 3 s)" test "$took" -lt 3000
  is "$mode: ... execution_completed cancelled" \
    "$(field "$A" execution_completed .status)" cancelled
  is "$mode: ... with no error event" "$(field "$A" error .reason)" ""
  check "$mode: ... and the stream verifies" audit_ok "$A"
  check "$mode: ... the run directory's audit.jsonl is the same" cmp -s "$A" "$R/audit.jsonl"
  is "$mode: ... metadata.json says cancelled" "$(meta_status "$R")" cancelled
done
finish
