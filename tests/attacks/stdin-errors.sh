#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, --stdin from an input that fails to read (an
# orchestrator's mistake, or a fault): a read error on the caller's
# standard input was taken for its end, so the record said the input had
# been forwarded whole.  A standard input that is a directory (EISDIR) or
# open for writing only (EBADF) ran the skill on an empty input and said
# complete true; a socket its writer reset after 6 bytes (ECONNRESET) gave
# the skill a cut request and said complete true, bytes 6.  Now an input
# that cannot be read at all is refused up front (125, one line, nothing
# made), and a read that fails later ends the skill's input there with
# complete false and a warning, stdin_read_failed, naming the errno.  As
# root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/stdin-errors
mkbundle "$B" "Counts the bytes of its standard input."
chmod -R a+rX "$T"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi

  # 1. A directory as standard input.
  id=dir
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" --stdin "$B" \
    -- /bin/sh -c 'wc -c' <"$T" >"$W/a.$id" 2>"$W/e.$id"
  is "$mode: --stdin from a directory: refused, 125" "$?" 125
  is "$mode: ... with one line saying so" "$(cat "$W/e.$id")" \
    "skillrun: --stdin: standard input is a directory"
  check "$mode: ... before a run directory is made" test ! -e "$W/default/$id"

  # 2. A file open for writing only.
  id=wronly
  : >"$T/wronly"
  chmod 666 "$T/wronly"
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" --stdin "$B" \
    -- /bin/sh -c 'wc -c' 0>>"$T/wronly" >"$W/a.$id" 2>"$W/e.$id"
  is "$mode: --stdin from a write-only file: refused, 125" "$?" 125
  is "$mode: ... with one line saying so" "$(cat "$W/e.$id")" \
    "skillrun: --stdin: standard input is not open for reading"
  check "$mode: ... before a run directory is made" test ! -e "$W/default/$id"

  # 3. A socket whose writer sends 6 bytes and then closes it with data of
  #    its own unread: the next read gets ECONNRESET.
  id=reset
  "$PYTHON3" - "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" \
    --stdin "$B" -- /bin/sh -c 'wc -c' >"$W/a.$id" 2>"$W/e.$id" <<'EOF'
import socket, subprocess, sys, time
a, b = socket.socketpair()
b.send(b"unread")  # lands in a's receive queue, never read
a.send(b"hello\n")  # the part of the request that gets through
p = subprocess.Popen(sys.argv[1:], stdin=b.fileno())
b.close()
time.sleep(0.5)
a.close()  # closed with unread data: the reader gets ECONNRESET
sys.exit(p.wait())
EOF
  is "$mode: --stdin from a socket reset after 6 bytes: the skill runs on, exit 0" "$?" 0
  is "$mode: ... the skill got the 6 bytes and then its end" \
    "$(tr -d ' ' <"$W/default/$id/logs/stdout.log")" 6
  is "$mode: ... the record says 6 bytes, complete false" \
    "$(field "$W/a.$id" execution_completed '.stdin | [.bytes, .complete] | @tsv')" \
    "6	false"
  is "$mode: ... a warning stdin_read_failed names ECONNRESET" \
    "$(field "$W/a.$id" warning 'select(.reason == "stdin_read_failed") | .errno')" ECONNRESET
  check "$mode: ... and the stream verifies" audit_ok "$W/a.$id"
done

finish
