#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Inputs as a skill declares them (skillrun-skill(5) sandbox.inputs-types,
# sandbox.inputs-max-size) and as the caller names them (skillrun(1)
# --input PATH:DIR/NAME): a refused input is exit 123 with an
# input_rejected event naming the file and the rule, before anything runs;
# as root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"

T=$(tmpdir)
# A skill that declares what it takes: PDF or DOCX, at most 4 KiB a file.
D=$T/pdf-skill
mkdir -p "$D"
cat >"$D/SKILL.md" <<'EOS'
---
name: pdf-skill
description: Reads PDF and DOCX inputs.
metadata:
  sandbox.inputs-max-size: 4K
  sandbox.inputs-types: "application/pdf .docx"
---
EOS
# A skill that declares nothing.
P=$T/plain-skill
mkbundle "$P"

# A tiny real PDF (one empty page) and a real DOCX (the OOXML parts
# libmagic looks for), both written here; a text file named .pdf.
"$PYTHON3" - "$T" <<'EOF'
import sys, zipfile
d = sys.argv[1]
objs = [b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>"]
out = bytearray(b"%PDF-1.4\n")
offs = []
for i, o in enumerate(objs, 1):
    offs.append(len(out))
    out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
for off in offs:
    out += b"%010d 00000 n \n" % off
out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
open(d + "/doc.pdf", "wb").write(out)
z = zipfile.ZipFile(d + "/notes.docx", "w")
z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns='
           '"http://schemas.openxmlformats.org/package/2006/content-types"/>')
z.writestr("_rels/.rels", "<Relationships/>")
z.writestr("word/document.xml", "<w:document/>")
z.close()
EOF
echo "just text, not a PDF" >"$T/fake.pdf"
echo "just text" >"$T/fake.docx"
head -c 5000 /dev/zero >"$T/big.pdf"
# A PDF over the skill's 4 KiB: the size rule comes first.
{ cat "$T/doc.pdf"; head -c 5000 /dev/zero; } >"$T/bigdoc.pdf"
echo "notes" >"$T/notes.txt"
ln -s "$T/doc.pdf" "$T/link.pdf"
# Files whose own names are not valid input NAMEs (a newline, a tab), as
# an upload may be called: given without :NAME, the name they lend is
# refused by the run, with its record, like an explicit one.
echo "notes" >"$T/$(printf 'up\nload.txt')"
echo "notes" >"$T/$(printf 'up\tload.txt')"
# ... or a right-to-left override, which shows "invoice<RLO>fdp.exe" as
# "invoiceexe.pdf" (the harvest skips an output so named).
echo "notes" >"$T/$(printf 'invoice\342\200\256fdp.exe')"
# A device: opening one does things of its own (a watchdog starts, a tape
# rewinds), so it must be refused unopened.  A null device of the test's
# own, whose opens an inotify watch counts (opens.py PATH STOPFILE: prints
# "ready", then, once STOPFILE exists, "opens=N").
if [ "$(id -u)" -eq 0 ]; then
  mknod -m 666 "$T/null-device" c 1 3 || die "mknod"
fi
cat >"$T/opens.py" <<'EOF'
import ctypes, os, select, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0:
    sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
print("ready", flush=True)
n, end = 0, time.time() + 60
while True:
    stop = os.path.exists(sys.argv[2]) or time.time() > end
    if select.select([fd], [], [], 0 if stop else 0.05)[0]:
        buf, off = os.read(fd, 4096), 0
        while off < len(buf):
            n += 1
            off += 16 + struct.unpack_from("iIII", buf, off)[3]
    elif stop:
        break
print("opens=%d" % n)
EOF
chmod -R a+rX "$T"

if command -v file >/dev/null; then
  is "libmagic calls the test's PDF application/pdf" "$(file -b --mime-type "$T/doc.pdf")" application/pdf
else
  pass "# SKIP file(1) is not installed: the runs below check libmagic's answer"
fi

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  n=0
  # r BUNDLE ARGS...: a run with a fresh execution id; rc, audit $A, stderr $E.
  r() {
    local b=$1
    shift
    n=$((n + 1))
    A=$W/a.$n
    E=$W/err.$n
    ID=i$n
    if [ $mode = user ]; then
      as_user "$SKILLRUN" --workspace-root "$W" --execution-id "$ID" --audit-file "$A" "$@" "$b" \
        -- /bin/sh -c 'for f in "$@"; do head -c 5 "/workspace/inputs/$f"; echo; done' - \
        materials/doc.pdf doc.pdf >/dev/null 2>"$E"
    else
      "$SKILLRUN" --workspace-root "$W" --execution-id "$ID" --audit-file "$A" "$@" "$b" \
        -- /bin/sh -c 'for f in "$@"; do head -c 5 "/workspace/inputs/$f"; echo; done' - \
        materials/doc.pdf doc.pdf >/dev/null 2>"$E"
    fi
    rc=$?
  }
  # rejected TEXT REASON RULE: the last run was refused for that input rule.
  rejected() {
    local got
    got=$(event "$A" input_rejected | "$JQ" -r '"\(.reason) \(.rule)"')
    if [ "$rc" -eq 123 ] && [ "$got" = "$2 $3" ] && audit_ok "$A" &&
      [ "$(field "$A" execution_completed .status)" = refused ] &&
      ! grep -q '"event":"bundle_rejected"' "$A" &&
      ! grep -q '"event":"policy_resolved"' "$A"; then
      pass "$mode: $1: refused ($2, rule $3)"
    else
      fail "$mode: $1: refused ($2, rule $3)"
      diag "exit $rc, got '$got'; stderr: $(cat "$E")"
    fi
  }

  # ------------------------------------------------------- declared types
  r "$D" -i "$T/doc.pdf" -i "$T/doc.pdf:materials/doc.pdf" -i "$T/notes.docx:materials/notes.docx"
  is "$mode: an allowed PDF and DOCX run" "$rc" 0
  is "$mode: input_staged says libmagic calls it application/pdf" \
    "$("$JQ" -r 'select(.event == "input_staged" and .name == "doc.pdf") | .type' "$A")" application/pdf
  is "$mode: ... and the DOCX a Word document" \
    "$("$JQ" -r 'select(.event == "input_staged" and .name == "materials/notes.docx") | .type' "$A")" \
    application/vnd.openxmlformats-officedocument.wordprocessingml.document
  is "$mode: the nested input is at /workspace/inputs/materials/doc.pdf" \
    "$(head -n 1 "$W/default/$ID/logs/stdout.log")" "%PDF-"
  is "$mode: metadata.json lists the nested input" \
    "$("$JQ" -r '[.inputs[].name] | join(" ")' "$W/default/$ID/metadata.json")" \
    "doc.pdf materials/doc.pdf materials/notes.docx"

  r "$D" -i "$T/fake.pdf:doc.pdf"
  rejected "a text file named .pdf" input_type inputs-types
  is "$mode: ... naming the content's type and the declaration" \
    "$(event "$A" input_rejected | "$JQ" -r '[.name, .path, .type, .source, .where, (.allowed | join(" "))] | join("|")')" \
    "doc.pdf|$T/fake.pdf|text/plain|manifest|SKILL.md:6|application/pdf .docx"
  r "$D" -i "$T/fake.docx"
  rejected "a text file named .docx (the name alone is not enough)" input_type inputs-types
  r "$D" -i "$T/notes.docx:notes.doc"
  rejected "a DOCX not named .docx and not a PDF" input_type inputs-types
  r "$D" -i "$T/big.pdf"
  rejected "a file over sandbox.inputs-max-size" input_too_large inputs-max-size
  is "$mode: ... naming the limit, its layer and the size" \
    "$(event "$A" input_rejected | "$JQ" -r '"\(.limit) \(.source) \(.size)"')" "4096 manifest 5000"
  r "$D" -i "$T/bigdoc.pdf"
  rejected "a real PDF over sandbox.inputs-max-size" input_too_large inputs-max-size
  check "$mode: a refused input leaves no staged copy" test ! -e "$W/default/$ID/staging"

  # A profile that declares types narrows the skill's: both must accept.
  printf 'include default\ninputs-types text/plain .docx\n' >"$T/text.profile"
  chmod 644 "$T/text.profile"
  r "$D" -p "$T/text.profile" -i "$T/doc.pdf"
  rejected "a PDF the skill takes but the profile does not" input_type inputs-types
  is "$mode: ... the profile's list refused it" \
    "$(field "$A" input_rejected .source)" profile
  r "$D" -p "$T/text.profile" -i "$T/notes.docx"
  is "$mode: a DOCX both take runs" "$rc" 0
  # inputs-size (all the inputs) still bounds a skill that says nothing.
  printf 'include default\ninputs-size 100\n' >"$T/small.profile"
  chmod 644 "$T/small.profile"
  r "$P" -p "$T/small.profile" -i "$T/notes.txt" -i "$T/doc.pdf"
  rejected "inputs over the profile's inputs-size" input_too_large inputs-size
  r "$P" -i "$T/fake.pdf" -i "$T/notes.txt:materials/n.txt"
  is "$mode: a skill that declares nothing takes any type" "$rc" 0
  is "$mode: ... and no type is looked at" \
    "$("$JQ" -r 'select(.event == "input_staged") | has("type")' "$A" | sort -u)" false
  r "$P" -i "$T/link.pdf"
  rejected "a symbolic link" input_invalid regular-file
  r "$P" -i "$T:dir"
  rejected "a directory" input_invalid regular-file
  if [ -c "$T/null-device" ]; then
    rm -f "$T/stop" "$T/opens"
    "$PYTHON3" "$T/opens.py" "$T/null-device" "$T/stop" >"$T/opens" &
    watcher=$!
    wait_for "$T/opens" ready || die "the inotify watch did not start"
    r "$P" -i "$T/null-device:dev"
    touch "$T/stop"
    wait "$watcher"
    rejected "a device" input_invalid regular-file
    check "$mode: ... saying so" grep -q "is a character device, not a regular file" "$E"
    is "$mode: ... without opening it" "$(sed -n 2p "$T/opens")" opens=0
  else
    pass "# SKIP a device as an input: mknod(2) needs root"
  fi

  # ------------------------------------------------------- input names
  for name in "../x" "/etc/passwd" ".." "a/../b" "a/b/c" "a//b" "a/" "bundle" \
    "bundle/x" "" "$(printf 'a\nb')"; do
    r "$P" -i "$T/notes.txt:$name"
    rejected "the input name '${name//$'\n'/\\n}'" input_name name
    check "$mode: ... before the run directory exists" test ! -e "$W/default/$ID"
    is "$mode: ... the event names it as given" "$(field "$A" input_rejected .name)" "$name"
  done
  for name in "$(printf 'up\nload.txt')" "$(printf 'up\tload.txt')" "$(printf 'invoice\342\200\256fdp.exe')"; do
    r "$P" -i "$T/$name"
    shown=${name//[$'\n\t']/?}
    rejected "a file named '${shown//$'\xe2\x80\xae'/<RLO>}' without :NAME" input_name name
    check "$mode: ... before the run directory exists" test ! -e "$W/default/$ID"
    is "$mode: ... the event names it as taken from PATH" "$(field "$A" input_rejected .name)" "$name"
  done
  # A file that opens but cannot be read (EIO, as from a failing disk or
  # a FUSE file system): the caller's input, refused as one that cannot
  # be read (skillrun(1) --input), not skillrun failing (125).
  r "$P" -i /proc/self/mem:mem
  rejected "a file that cannot be read (/proc/self/mem)" input_invalid regular-file
  check "$mode: ... saying so" grep -q "cannot be read: Input/output error" "$E"
  check "$mode: ... with metadata.json" test -s "$W/default/$ID/metadata.json"
  r "$P" -i "$T/notes.txt:../../etc/cron.d/x"
  check "$mode: '..' is refused as such" grep -q "'..' component" "$E"
  r "$P" -i "$T/notes.txt:/x"
  check "$mode: an absolute name is refused as such" grep -q "an absolute name" "$E"
  r "$P" -i "$T/notes.txt:a/b/c"
  check "$mode: two levels are refused as such" grep -q "more than one directory level" "$E"
  r "$P" -i "$T/notes.txt:bundle/x"
  check "$mode: the bundle's name is refused as such" grep -q "'bundle' is reserved" "$E"
  r "$P" -i "$T/notes.txt:$(printf 'x\033[2J/y\nforged line')"
  rejected "a name with terminal escapes and a newline" input_name name
  check "$mode: ... which reach stderr as '?', on one line" \
    test "$(wc -l <"$E")" -eq 1 -a "$(grep -c $'\033' "$E")" -eq 0
  r "$P" -i "$T/notes.txt:m" -i "$T/doc.pdf:m/doc.pdf"
  rejected "a file and a directory of the same name" input_name name
  check "$mode: ... saying so" grep -q "a file, and the directory of input 'm/doc.pdf'" "$E"

  # The nested input as the skill sees it: read-only, in a directory of
  # its own that nothing can be added to.
  n=$((n + 1))
  ID=i$n
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$ID" \
    -i "$T/notes.txt:materials/n.txt" "$P" -- /bin/sh -c '
      ls /workspace/inputs | tr "\n" " "; echo
      cat /workspace/inputs/materials/n.txt
      stat -c %F /workspace/inputs/materials
      if touch /workspace/inputs/materials/new 2>/dev/null; then echo ADDED; else echo NO-ADD; fi
      if echo x >>/workspace/inputs/materials/n.txt 2>/dev/null; then echo WROTE; else echo NO-WRITE; fi
      sleep 1' >"$W/a.$n" 2>&1 &
  bg=$!
  # While it runs: the staged directory is the caller's (or, as root, the
  # sandbox's), 0755, a real directory (made by the supervisor, opened
  # without following links).
  st=
  for _ in $(seq 50); do
    st=$(stat -c '%F %a %u' "$W/default/$ID/staging/inputs/materials" 2>/dev/null) && break
    sleep 0.05
  done
  wait $bg
  is "$mode: a run with a nested input exits 0" "$?" 0
  # A root run gives the staged inputs to the sandbox's pool uid once
  # its host ids are known (skillrun(1) SECURITY): root's until then.
  if [ $mode = user ]; then
    is "$mode: the staged directory is the caller's, mode 0755" "$st" "directory 755 $USER_UID"
  else
    check "$mode: the staged directory is root's or the pool uid's, mode 0755 ($st)" \
      sh -c 'case "$1" in "directory 755 0" | "directory 755 8000"[0-6][0-9]) exit 0 ;; *) exit 1 ;; esac' - "$st"
  fi
  is "$mode: the skill sees bundle and materials" "$(sed -n 1p "$W/default/$ID/logs/stdout.log")" "bundle materials "
  is "$mode: ... the file at /workspace/inputs/materials/n.txt" "$(sed -n 2p "$W/default/$ID/logs/stdout.log")" notes
  is "$mode: ... materials is a directory" "$(sed -n 3p "$W/default/$ID/logs/stdout.log")" directory
  is "$mode: ... nothing can be added to it" "$(sed -n 4p "$W/default/$ID/logs/stdout.log")" NO-ADD
  is "$mode: ... nor the input written" "$(sed -n 5p "$W/default/$ID/logs/stdout.log")" NO-WRITE

  # A file that changes while it is staged: the type is checked on the
  # copy, so every run that is admitted sees a PDF, and the bytes
  # input_staged hashed.
  cp "$T/doc.pdf" "$W/flip.pdf"
  chmod 644 "$W/flip.pdf"
  ( while :; do cat "$T/doc.pdf" >"$W/flip.pdf"; cat "$T/fake.pdf" >"$W/flip.pdf"; done ) &
  flipper=$!
  ok_runs=0
  bad=0
  for _ in $(seq 12); do
    n=$((n + 1))
    ID=i$n
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$ID" --audit-file "$W/a.$n" \
      -i "$W/flip.pdf:x.pdf" "$D" -- /bin/sh -c 'head -c 5 /workspace/inputs/x.pdf; echo; sha256sum </workspace/inputs/x.pdf' \
      >/dev/null 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || continue
    ok_runs=$((ok_runs + 1))
    out=$W/default/$ID/logs/stdout.log
    [ "$(sed -n 1p "$out")" = "%PDF-" ] || bad=$((bad + 1))
    [ "$(sed -n 2p "$out" | cut -d' ' -f1)" = "$(field "$W/a.$n" input_staged .sha256)" ] || bad=$((bad + 1))
  done
  kill "$flipper"
  wait "$flipper" 2>/dev/null
  is "$mode: a file rewritten while staged: every admitted run ($ok_runs of 12) saw the PDF it was checked as" "$bad" 0
done

# ------------------------------------------------- libmagic only on demand
# libmagic is opened only when a run checks a type; one that cannot be
# loaded stops those runs (125, library_unavailable) and no others.
soname=$("$SKILLRUN" --version | sed -n 's/^libmagic [0-9.]* (\(libmagic\.so\.[0-9]*\),.*/\1/p')
W=$(tmpdir)
if [ -n "$soname" ]; then
  LD_DEBUG=files "$SKILLRUN" --workspace-root "$W" -i "$T/notes.txt" "$P" -- /bin/true >/dev/null 2>"$T/ld"
  rc=$?
  is "a run with an input and no declared types exits 0" "$rc" 0
  check "... and never maps $soname" not grep -q "file=$soname" "$T/ld"
  mkdir -p "$T/badlib"
  echo "not a library" >"$T/badlib/$soname"
  LD_LIBRARY_PATH=$T/badlib "$SKILLRUN" --workspace-root "$W" -i "$T/fake.pdf" "$P" -- /bin/true \
    >/dev/null 2>&1
  is "a broken $soname: a run without declared types still exits 0" "$?" 0
  LD_LIBRARY_PATH=$T/badlib "$SKILLRUN" --workspace-root "$W" --audit-file "$W/a.lib" \
    -i "$T/doc.pdf" "$D" -- /bin/true >/dev/null 2>"$T/err"
  is "a broken $soname: a run that checks a type exits 125" "$?" 125
  check "... naming the library and what needed it" \
    grep -q "cannot load $soname, needed for the declared input types" "$T/err"
  is "... and the reason in the audit stream" "$(field "$W/a.lib" error .reason)" library_unavailable
else
  fail "skillrun --version names no libmagic soname"
fi

finish
