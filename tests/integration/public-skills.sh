#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Skills shaped like the public ones run as written (skillrun(1), THE
# SANDBOX): examples/skills/{pdf-form,docx-edit,text-report} call their
# scripts by a path relative to their directory, from their SKILL.md body,
# and declare no sandbox settings.  Every command their SKILL.md gives is
# taken from it, its <placeholders> given paths below /workspace, and run
# unchanged after "--", with the default profile, as root and as an
# unprivileged user.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"

T=$(tmpdir)
cp -r "$TOP_SRCDIR/examples/skills" "$TOP_SRCDIR/examples/sample-inputs" "$T/"
chmod -R a+rX "$T"
S=$T/skills
IN=$T/sample-inputs

# The copies are the bundles as shipped, byte for byte.
for skill in pdf-form docx-edit text-report; do
  is "$skill: the copy has the shipped digest" \
    "$("$SKILLRUN" --digest "$S/$skill" | cut -d' ' -f1)" \
    "$("$SKILLRUN" --digest "$TOP_SRCDIR/examples/skills/$skill" | cut -d' ' -f1)"
  check "$skill: SKILL.md declares no sandbox settings" \
    not grep -q 'sandbox\.' "$S/$skill/SKILL.md"
done

# The commands of a SKILL.md body: inline `code`, and code-block lines,
# that start with python3, sh or scripts/.
commands() { # SKILL.md
  "$PYTHON3" - "$1" <<'EOF'
import re, sys
body = open(sys.argv[1]).read().split("\n---\n", 1)[1]
start = re.compile(r"(python3 |sh |scripts/)")
for line in body.splitlines():
    for code in re.findall(r"`([^`]+)`", line):
        if start.match(code):
            print(code)
    bare = line[4:] if line.startswith("    ") else line
    if start.match(bare) and "`" not in line:
        print(bare)
EOF
}

# The placeholders of one command, each given its argument(s): "SCRIPT
# <placeholder>=value" lines per skill ("*" for any script, the script's
# own line first; \x1f separates the values of a "<placeholder>...").
fill() { # MAP-FILE COMMAND
  "$PYTHON3" - "$1" "$2" <<'EOF'
import sys
table = [l.rstrip("\n").split(" ", 1) for l in open(sys.argv[1]) if l.strip()]
words = sys.argv[2].split()
script = next((w for w in words if "/" in w), words[0])
out = []
for w in words:
    if w.startswith(("<", "[")):
        key = w.rstrip(".")
        # The script's own line first, then the one for every script.
        val = next((v.split("=", 1)[1] for who in (script, "*")
                    for s, v in table
                    if s == who and v.split("=", 1)[0] == key), None)
        if val is None:
            sys.exit(f"no value for {key} in {sys.argv[2]}")
        out.extend(val.split("\x1f"))
    else:
        out.append(w)
print("\0".join(out), end="")
EOF
}

cat >"$T/pdf-form.map" <<'EOF'
* <file.pdf>=/workspace/inputs/form.pdf
* <input.pdf>=/workspace/inputs/form.pdf
* <field_info.json>=/workspace/outputs/field_info.json
* <field_values.json>=/workspace/inputs/form-values.json
* <output.pdf>=/workspace/outputs/filled.pdf
EOF
cat >"$T/docx-edit.map" <<'EOF'
* <file.docx>=/workspace/inputs/letter.docx
* <in.docx>=/workspace/inputs/letter.docx
* <old>=Ms Smith
* <new>=Dr Jones
* <out.docx>=/workspace/outputs/letter-edited.docx
ooxml/scripts/unpack.py <office_file>=/workspace/inputs/letter.docx
ooxml/scripts/unpack.py <output_dir>=/workspace/outputs/unpacked
ooxml/scripts/pack.py <input_directory>=/workspace/outputs/unpacked
ooxml/scripts/pack.py <office_file>=/workspace/outputs/repacked.docx
EOF
printf '%s\n' "* <report.md>=/workspace/outputs/report.md" \
  "* <file>=/workspace/inputs/meeting.txt$(printf '\037')/workspace/inputs/design-notes.txt" \
  "scripts/wordfreq.sh <file>=/workspace/inputs/meeting.txt" \
  "* [count]=4" >"$T/text-report.map"

for skill in pdf-form docx-edit text-report; do
  commands "$S/$skill/SKILL.md" >"$T/$skill.cmds"
done
is "pdf-form: its SKILL.md gives 3 commands" "$(wc -l <"$T/pdf-form.cmds")" 3
is "docx-edit: its SKILL.md gives 4 commands" "$(wc -l <"$T/docx-edit.cmds")" 4
is "text-report: its SKILL.md gives 2 commands" "$(wc -l <"$T/text-report.cmds")" 2

skip_modes
for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  n=0
  # run SKILL COMMAND [SKILLRUN-ARGS...]: the command with its placeholders
  # filled, as execution p$n; its outputs in $W/default/p$n/outputs.
  run() {
    local skill=$1 cmd=$2 argv=()
    shift 2
    n=$((n + 1))
    mapfile -d '' -t argv < <(fill "$T/$skill.map" "$cmd")
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "p$n" \
      --audit-file "$W/a.$n" "$@" "$S/$skill" -- "${argv[@]}" \
      >"$W/out.$n" 2>"$W/err.$n" </dev/null
  }
  out() { echo "$W/default/p$n/outputs/$1"; }
  log() { cat "$W/default/p$n/logs/stdout.log"; }

  # ---- pdf-form
  inputs=(-i "$IN/form.pdf" -i "$IN/form-values.json")
  while IFS= read -r cmd; do
    run pdf-form "$cmd" "${inputs[@]}"
    rc=$?
    is "$mode: pdf-form: '$cmd' exits 0" "$rc" 0
    [ "$rc" = 0 ] || sed 's/^/# /' "$W/default/p$n/logs/stderr.log"
    case $cmd in
    *check_fillable*)
      is "$mode: ... finds the 3 fields" "$(log)" "This PDF has 3 fillable form fields" ;;
    *extract_form*)
      is "$mode: ... lists them" \
        "$("$JQ" -r '[.[] | "\(.field_id):\(.type)"] | join(" ")' "$(out field_info.json)")" \
        "last_name:text city:text adult:checkbox" ;;
    *fill_fillable*)
      cp "$(out filled.pdf)" "$W/filled.pdf" 2>/dev/null
      chmod a+r "$W/filled.pdf" 2>/dev/null ;;
    esac
  done <"$T/pdf-form.cmds"
  # The filled form, read back by the skill's own script in a new run.
  run pdf-form "$(grep extract_form "$T/pdf-form.cmds")" -i "$W/filled.pdf:form.pdf"
  is "$mode: pdf-form: the filled form has the values" \
    "$("$JQ" -r '[.[] | "\(.field_id)=\(.value)"] | join(" ")' "$(out field_info.json)")" \
    "last_name=Simpson city=Springfield adult=/On"
  # The values as a JSON request on standard input (--stdin).
  n=$((n + 1))
  printf '[{"field_id": "city", "value": "Shelbyville"}]' |
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "p$n" \
      --audit-file "$W/a.$n" --stdin -i "$IN/form.pdf" "$S/pdf-form" -- \
      python3 scripts/fill_fillable_fields.py /workspace/inputs/form.pdf - \
      /workspace/outputs/filled.pdf >/dev/null 2>&1
  is "$mode: pdf-form: values piped in with --stdin" "$?" 0
  check "$mode: ... the filled form has them" \
    grep -aq '/T (city) .*/V (Shelbyville)' "$(out filled.pdf)"
  # An unknown field is refused by the skill, and nothing is written.
  n=$((n + 1))
  printf '[{"field_id": "nope", "value": "x"}]' |
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "p$n" \
      --audit-file "$W/a.$n" --stdin -i "$IN/form.pdf" "$S/pdf-form" -- \
      python3 scripts/fill_fillable_fields.py /workspace/inputs/form.pdf - \
      /workspace/outputs/filled.pdf >/dev/null 2>&1
  is "$mode: pdf-form: an unknown field: the skill exits 1" "$?" 1
  check "$mode: ... and writes nothing" test ! -e "$(out filled.pdf)"

  # ---- docx-edit
  while IFS= read -r cmd; do
    case $cmd in
    *pack.py*) # needs unpack's output: both in one run, as written
      unpack=$(grep unpack.py "$T/docx-edit.cmds")
      mapfile -d '' -t u < <(fill "$T/docx-edit.map" "$unpack")
      mapfile -d '' -t p < <(fill "$T/docx-edit.map" "$cmd")
      n=$((n + 1))
      "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "p$n" \
        --audit-file "$W/a.$n" -i "$IN/letter.docx" "$S/docx-edit" -- \
        /bin/sh -c '"$@" && '"$(printf '%q ' "${p[@]}")" sh "${u[@]}" \
        >/dev/null 2>"$W/err.$n" </dev/null
      ;;
    *) run docx-edit "$cmd" -i "$IN/letter.docx" ;;
    esac
    rc=$?
    is "$mode: docx-edit: '$cmd' exits 0" "$rc" 0
    [ "$rc" = 0 ] || sed 's/^/# /' "$W/default/p$n/logs/stderr.log"
    case $cmd in
    *docx_to_text*)
      is "$mode: ... prints the letter" "$(log | head -n 1)" "Dear Ms Smith," ;;
    *replace_text*)
      check "$mode: ... writes the edited letter" test -s "$(out letter-edited.docx)"
      cp "$(out letter-edited.docx)" "$W/edited.docx" && chmod a+r "$W/edited.docx" ;;
    *unpack.py*)
      check "$mode: ... unpacks the parts" test -s "$(out unpacked/word/document.xml)" ;;
    *pack.py*)
      check "$mode: ... packs them again" test -s "$(out repacked.docx)" ;;
    esac
  done <"$T/docx-edit.cmds"
  run docx-edit "$(grep docx_to_text "$T/docx-edit.cmds")" -i "$W/edited.docx:letter.docx"
  is "$mode: docx-edit: the edited letter reads back" \
    "$(log | grep -c 'Dr Jones')/$(log | grep -c 'Ms Smith')" "2/0"

  # ---- text-report
  while IFS= read -r cmd; do
    run text-report "$cmd" -i "$IN/meeting.txt" -i "$IN/design-notes.txt"
    rc=$?
    is "$mode: text-report: '$cmd' exits 0" "$rc" 0
    [ "$rc" = 0 ] || sed 's/^/# /' "$W/default/p$n/logs/stderr.log"
    case $cmd in
    scripts/report.sh*)
      is "$mode: ... reports on both files" "$(grep -c '^## ' "$(out report.md)")" 2
      check "$mode: ... from its template" grep -q '^| lines | words | bytes |$' "$(out report.md)" ;;
    *wordfreq*)
      is "$mode: ... counts the words" "$(log | head -n 1)" "3 the" ;;
    esac
  done <"$T/text-report.cmds"

  check_run_audits "$mode" "$W" p
done
finish
