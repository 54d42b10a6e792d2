#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, no private key inside the sandbox (issue 14,
# item 8): the sandbox's init is a clone of the supervisor, and used to
# carry a copy of the audit anchoring key (skillrun.conf's audit-key) for
# the whole run, where a skill that could read init's memory would find
# it.  Now the key's bytes live in a page no child inherits.  The test
# reads every readable mapping of the supervisor (which must hold the key:
# the control that the scan finds it), of init and of the skill, as root,
# for runs as root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# Reading another process's memory and making a root-owned skillrun.conf
# need root.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to read the sandbox's memory and to own skillrun.conf"
sandbox_possible || skip_all "user namespaces are not available"
command -v openssl >/dev/null || skip_all "openssl(1) is not installed"

T=$(tmpdir)
B=$T/keymem
mkbundle "$B"
openssl genpkey -algorithm ed25519 -out "$T/audit.key" 2>/dev/null &&
  openssl pkey -in "$T/audit.key" -pubout -out "$T/audit.pub" 2>/dev/null ||
  { fail "cannot make an Ed25519 key with openssl"; finish; }
# The key's 32 bytes: the end of its PKCS#8 DER.
openssl pkey -in "$T/audit.key" -outform DER 2>/dev/null | tail -c 32 >"$T/seed"
is "the key's seed is 32 bytes" "$(stat -c %s "$T/seed")" 32
chmod 644 "$T/audit.key" # the unprivileged run must read it too
printf 'audit-key %s\n' "$T/audit.key" >"$T/skillrun.conf"
chmod 644 "$T/skillrun.conf"
chmod -R a+rX "$T"

# scan PID: "found" when the seed is in one of its readable mappings,
# "absent" when it is in none, "partial" when it is in none of those read
# but a mapping was too large to read (a sanitizer build reserves
# terabytes of shadow and allocator space).  Read in chunks, so that a
# copy across a chunk boundary is found too.
scan() {
  "$PYTHON3" - "$1" "$T/seed" <<'EOF'
import re, sys
pid, seed = sys.argv[1], open(sys.argv[2], "rb").read()
CHUNK, LIMIT = 1 << 20, 1 << 30
found = partial = False
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (r...)", line)
        if not m or "[vvar" in line or "[vsyscall]" in line:
            continue
        lo, hi = int(m.group(1), 16), int(m.group(2), 16)
        if hi - lo > LIMIT:
            partial = True
            continue
        tail = b""
        for at in range(lo, hi, CHUNK):
            try:
                mem.seek(at)
                data = mem.read(min(CHUNK, hi - at))
            except (OSError, ValueError, OverflowError):
                tail = b""
                continue
            if seed in tail + data:
                found = True
            tail = data[-(len(seed) - 1):]
print("found" if found else "partial" if partial else "absent")
EOF
}
# not_held WHAT PID: the seed is not in PID's memory; a partial scan is a
# skip, saying so.
not_held() {
  local got
  got=$(scan "${2:-0}" 2>/dev/null)
  if [ "$got" = partial ]; then
    pass "# SKIP $1: mappings over 1 GiB (a sanitizer build's) cannot be read"
  else
    is "$1" "$got" absent
  fi
}

for mode in $MODES; do
  W=$(mode_workspace $mode)
  # env and setpriv exec: $! is the supervisor itself.
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  "${pre[@]}" "$SKILLRUN" --conf "$T/skillrun.conf" --workspace-root "$W" \
    --execution-id k1 --audit-file "$W/a" "$B" -- /bin/sleep 60 >/dev/null 2>"$W/err" &
  sup=$!
  for _ in $(seq 100); do
    grep -q '"state":"running"' "$W/a" 2>/dev/null && break
    sleep 0.05
  done
  init=$(pgrep -P "$sup" | head -n 1)
  skill=$([ -n "$init" ] && pgrep -P "$init" | head -n 1)
  check "$mode: the supervisor, init and the skill are found ($sup, ${init:-?}, ${skill:-?})" \
    test -n "$init" -a -n "$skill"
  is "$mode: the supervisor holds the key (the scan finds it)" "$(scan "$sup")" found
  not_held "$mode: init, a clone of the supervisor, does not" "$init"
  not_held "$mode: nor does the skill's process" "$skill"
  # The scans take their time under load: the skill sleeps until they are
  # done, and then is ended (128 + SIGTERM, skillrun(1) EXIT STATUS).
  [ -n "$skill" ] && kill -TERM "$skill"
  wait "$sup"
  rc=$?
  is "$mode: the run ends with its skill's SIGTERM ($(head -n 1 "$W/err"))" "$rc" 143
  "$SKILLRUN" --verify-audit "$W/a" --audit-key "$T/audit.pub" >/dev/null 2>"$W/v"
  rc=$?
  is "$mode: ... and its record is anchored with the key ($(head -n 1 "$W/v"))" "$rc" 0
done
finish
