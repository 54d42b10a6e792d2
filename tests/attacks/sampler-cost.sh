#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the sampler's reads of /proc as a CPU lever:
# without a cgroup the supervisor samples the tree from /proc, and reads a
# process's maps again whenever its resident shared pages change.  A
# skill of 21 processes of 60,000 mappings each, each flipping one page of
# a shared file mapping in and out every 20 ms (almost no CPU of its own),
# had the supervisor read 6 MB of maps per process at every sample,
# outside the run's CPU budget: 5.1 s of CPU in a 10.6 s run, half a CPU.
# Now the tree's maps are read again at most at 8 MiB a second
# (MAPS_BYTES_PER_S, src/sampler.c).  Where the supervisor samples: an
# unprivileged user here, and root with `cgroup off`.
set -u
# shellcheck source=../integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"

T=$(tmpdir)
B="$T/maps-skill"
mkbundle "$B" "A skill whose processes have many mappings."
cat >"$B/flip.py" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
n, k = int(sys.argv[1]), int(sys.argv[2])
P = 4096
base = libc.mmap(None, P * n, 3, 0x22, -1, 0)  # private anonymous
for i in range(0, n, 2):  # alternate protections: n mappings, not one
    libc.mprotect(base + i * P, P, 1)
fd = os.open("/tmp/flip", os.O_RDWR | os.O_CREAT, 0o600)
os.ftruncate(fd, P)
m = libc.mmap(None, P, 3, 0x01, fd, 0)  # MAP_SHARED of a /tmp file
for c in range(k):
    if os.fork() == 0:
        break
print("ready", flush=True)
while True:  # statm's shared changes at every sample
    ctypes.c_char.from_address(m).value = b"x"
    time.sleep(0.01)
    libc.madvise(m, P, 4)  # MADV_DONTNEED
    time.sleep(0.01)
EOF
chmod -R a+rX "$T"
printf 'include default\ncgroup off\n' >"$T/off.profile"
chmod 644 "$T/off.profile"
skip_modes

for who in $MODES; do
  w=$(mode_workspace "$who")
  if [ "$who" = user ]; then pre=("${AS_USER[@]}") prof=(); else
    pre=(env) prof=(-p "$T/off.profile"); fi
  id=maps-$who
  start=$(date +%s%N)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    "${prof[@]}" --timeout 10s "$B" -- python3 /workspace/inputs/bundle/flip.py 60000 20 \
    >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  sup_ms=$(cpu_ms_until_exit "$pid")
  wait "$pid"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  diag "$who: supervisor CPU ${sup_ms} ms over ${wall_ms} ms"
  is "$who: the run ends at its wall clock (124)" "$rc" 124
  is "$who: ... sampled by the supervisor" \
    "$(field "$T/$id.audit" execution_completed .measured_by)" supervisor
  is "$who: ... all 21 processes ran" \
    "$(grep -c '^ready$' "$w/default/$id/logs/stdout.log")" 21
  # Before, the supervisor spent about half the wall clock here.
  check "$who: the supervisor's CPU is under 25% of the wall clock (${sup_ms} ms of ${wall_ms} ms)" \
    test $((sup_ms * 4)) -lt "$wall_ms"
  check "$who: the audit verifies" audit_ok "$T/$id.audit"
done
finish
