#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every example of the man pages and the README is run here.  Each example
# block (.EX/.nf outside SYNOPSIS; an indented block of the README) carries
# a tag, '.\" example: ID' or '<!-- example: ID -->', and this test has a
# case for each ID: commands are run as written (prompts, continuations and
# roff escapes undone; an elided digest "sha256:3f1c..." given the real
# one; fixtures for the files they name), samples of output or of a file
# format are compared with what skillrun produces.  An untagged block, or a
# tag without a case, fails.  Runs as root (a root-owned skillrun.conf for
# the signing and capability examples; the scope example as uid 65534).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (root-owned skillrun.conf, setpriv)"

T=$(tmpdir)
BLOCKS=$T/blocks
mkdir "$BLOCKS"
PAGES=("$TOP_SRCDIR"/man/*.in "$TOP_SRCDIR"/man/*.[1-8] "$TOP_SRCDIR/README.md")

# Extracts each tagged block into $BLOCKS/ID (roff escapes undone) and
# lists the untagged ones on stdout, one "FILE:LINE" each.
"$PYTHON3" - "$BLOCKS" "${PAGES[@]}" <<'EOF' >"$T/untagged"
import os, re, sys
out = sys.argv[1]
order = []
ROFF = [(r"\-", "-"), (r"\e", "\\"), (r"\(aq", "'"), (r"\(dq", '"'),
        (r"\fI", ""), (r"\fP", ""), (r"\fB", ""), (r"\fR", ""), (r"\&", ""),
        (r"\%", "")]
for path in sys.argv[2:]:
    if path.endswith(tuple(".%d" % i for i in range(1, 9))) and \
            os.path.exists(path + ".in"):
        continue  # made from its .in in an in-tree build
    lines = open(path, encoding="utf-8").read().split("\n")
    tag, section, i = None, "", 0
    while i < len(lines):
        l = lines[i]
        m = re.match(r'(?:\.\\" example: |<!-- example: )([a-z0-9-]+)', l)
        if m:
            tag = m.group(1)
        elif l.startswith(".SH "):
            section = l[4:]
        if path.endswith(".md"):
            if l.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
                block = []
                while i < len(lines) and lines[i].startswith("    "):
                    block.append(lines[i][4:])
                    i += 1
                if tag:
                    open(os.path.join(out, tag), "w").write("\n".join(block) + "\n")
                    order.append(tag)
                else:
                    print(f"{path}:{i}")
                tag = None
                continue
        elif l in (".EX", ".nf") and section != "SYNOPSIS":
            end = lines.index(".EE" if l == ".EX" else ".fi", i)
            text = "\n".join(lines[i + 1:end])
            for a, b in ROFF:
                text = text.replace(a, b)
            if tag:
                open(os.path.join(out, tag), "w").write(text + "\n")
                order.append(tag)
            else:
                print(f"{path}:{i + 1}")
            tag, i = None, end
        i += 1
open(os.path.join(out, ".order"), "w").write("\n".join(order) + "\n")
EOF
is "every example block carries a tag" "$(cat "$T/untagged")" ""
check "at least 30 tagged examples (got $(wc -l <"$BLOCKS/.order"))" test "$(wc -l <"$BLOCKS/.order")" -ge 30
check "no example tag is used twice" test -z "$(sort "$BLOCKS/.order" | uniq -d)"

# commands ID: the "$ " lines of a block with their continuations (a line
# ending in \ or |), as a script; an elided digest becomes $DIGEST.
commands() {
  awk '/^\$ /{sub(/^\$ /, ""); print; cont = /[\\|]$/; next}
       cont {print; cont = /[\\|]$/}' "$BLOCKS/$1" |
    sed -E 's/sha256:[0-9a-f]+\.\.\.[0-9a-f]*/$DIGEST/g'
}
# "skillrun" on PATH: this build's, with its runs kept in this test's
# workspace root ($DOC_WS) unless the example names one.
mkdir -p "$T/bin"
cat >"$T/bin/skillrun" <<EOF
#!/bin/sh
for a; do
  case \$a in
  --) break ;;
  --workspace-root | --workspace-root=* | --digest | --verify-audit | --explain | \\
    --sign | --gc | --help | --version) exec "$SKILLRUN" "\$@" ;;
  esac
done
exec "$SKILLRUN" --workspace-root "\${DOC_WS:?}" "\$@"
EOF
chmod 755 "$T/bin/skillrun"
export PATH="$T/bin:$PATH"

# Fixtures the examples name.
F=$T/work
mkdir -p "$F/pdf-tools/scripts" "$F/my-skill"
cat >"$F/pdf-tools/SKILL.md" <<'EOF'
---
name: pdf-tools
description: Small tools for PDF files given as inputs.
metadata:
  sandbox.entrypoint: python3 scripts/extract.py
---
EOF
cat >"$F/pdf-tools/scripts/extract.py" <<'EOF'
import glob, sys
for path in sys.argv[1:] or sorted(glob.glob("/workspace/inputs/*.pdf")):
    data = open(path, "rb").read()
    print(path, "PDF" if data.startswith(b"%PDF-") else "not a PDF", len(data))
EOF
printf '#!/bin/sh\necho filled\n' >"$F/pdf-tools/scripts/fill.py"
chmod 755 "$F/pdf-tools/scripts/fill.py"
mkbundle "$F/my-skill"
sed -i 's/^description: .*/&\nmetadata:\n  sandbox.entrypoint: \/bin\/true/' "$F/my-skill/SKILL.md"
cp -r "$TOP_SRCDIR/examples/hello" "$TOP_SRCDIR/examples/skills/pdf-form" "$F/"
cp "$TOP_SRCDIR/examples/sample-inputs/form.pdf" "$F/form.pdf"
cp "$TOP_SRCDIR/examples/sample-inputs/form.pdf" "$F/report.pdf"
echo "notes for the request" >"$F/notes.txt"
chmod -R a+rX "$T"
WS=$T/ws
export DOC_WS=$WS SKILLRUN_WORKSPACE_ROOT=$WS

# in_work SCRIPT: runs bash with SCRIPT in $F, DIGEST set; output in $T/out.
# TMPDIR: what an example leaves in a temp file on purpose (run-skill.sh
# keeps the audit file it names) stays with the test's data.
in_work() {
  (cd "$F" && DIGEST=${DIGEST:-} TMPDIR=$T bash -c "$1") >"$T/out" 2>"$T/err"
}
tagged() { [ -s "$BLOCKS/$1" ]; }

while IFS= read -r id; do
  case $id in
  # ---------------------------------------------------------- skillrun(1)
  workdir)
    in_work "$(commands workdir)"
    is "$id: runs the SKILL.md command in the skill's directory" "$?" 0
    check "$id: ... which found the fields" grep -q "has 3 fillable form fields" \
      "$(field "$T/out" execution_started .run_dir)/logs/stdout.log"
    ;;
  schema-validate)
    "$SKILLRUN" --workspace-root "$WS" "$F/hello" >"$T/stream" 2>/dev/null
    sed "s|@datadir@/skillrun/schema|$TOP_SRCDIR/schema|" "$BLOCKS/$id" >"$T/validate.py"
    "$PYTHON3" "$T/validate.py" <"$T/stream"
    is "$id: validates a real stream" "$?" 0
    printf '%s\n' '{"schema":"skillrun.audit/1","event":"forged"}' >>"$T/stream"
    "$PYTHON3" "$T/validate.py" <"$T/stream" >/dev/null 2>&1
    is "$id: ... and rejects a line that is not an event" "$?" 1
    SCHEMA_SKIP+=("$T/stream")
    ;;
  statement-layout | capability-payload)
    : # compared with the real ones below, after the recipes
    ;;
  sign-openssl)
    in_work "set -e; $(commands sign-openssl)"
    is "$id: the openssl recipe runs" "$?" 0
    cat >"$T/trust.conf" <<EOF
trust-key official $F/publisher.pub
EOF
    chmod 644 "$T/trust.conf"
    "$SKILLRUN" --conf "$T/trust.conf" --workspace-root "$WS" "$F/hello" >"$T/signed" 2>"$T/err"
    is "$id: skillrun accepts the statement" "$?" 0
    is "$id: ... as official, by the key it names" \
      "$(field "$T/signed" bundle_verified '.tier + " " + .key_id')" \
      "official $(sed -n 's/^key-id: //p' "$F/hello.sig")"
    # The layout shown is the layout made: the same keys, in order.
    is "statement-layout: the keys of a real statement, in order" \
      "$(cut -d: -f1 "$F/hello.sig" | tr '\n' ' ')" \
      "$(cut -d: -f1 "$BLOCKS/statement-layout" | tr '\n' ' ')"
    check "statement-layout: each value has the shape shown" "$PYTHON3" -c '
import re, sys
real = open(sys.argv[1]).read().splitlines()
shape = {"skillrun-statement/1": r"skillrun-statement/1$", "name": r"[a-z0-9-]+$",
         "version": r"\S+$", "digest": r"sha256:[0-9a-f]{64}$",
         "tier": r"(official|verified|community|tenant)$", "key-id": r"[0-9a-f]{16}$",
         "time": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", "signature": r"[A-Za-z0-9+/]{86}==$"}
for l in real:
    k, _, v = l.partition(": ")
    assert re.match(shape[k], v if v else k), l
' "$F/hello.sig"
    ;;
  capability-openssl)
    in_work "openssl genpkey -algorithm ed25519 -out control.key &&
      openssl pkey -in control.key -pubout -out control.pub"
    # hello.sig, beside the bundle since the signing recipe, is checked too.
    { cat "$T/trust.conf" 2>/dev/null
      # The recipe's token names placement worker-7: this host is that one.
      printf 'capability-key %s\nrequire-capability yes\nplacement-id worker-7\n' \
        "$F/control.pub"; } >"$T/cap.conf"
    chmod 644 "$T/cap.conf"
    # The recipe's d is the bundle's digest, from the signing recipe.
    in_work "set -e; d=\$(skillrun --digest ./hello | cut -d' ' -f1)
      $(commands capability-openssl | sed "s|^skillrun |skillrun --conf $T/cap.conf --audit-file $T/cap.audit |")"
    is "$id: the capability recipe mints a token skillrun accepts" "$?" 0
    is "$id: ... the run says so" "$(field "$T/cap.audit" bundle_verified .capability)" true
    is "capability-payload: the lines of a real payload, in order" \
      "$(cut -d: -f1 "$F/cap" | tr '\n' ' ')" \
      "$(cut -d: -f1 "$BLOCKS/capability-payload" | tr '\n' ' ')"
    ;;
  digest-then-run)
    DIGEST=$("$SKILLRUN" --digest "$F/pdf-tools" | cut -d' ' -f1)
    in_work "$(commands $id)"
    is "$id: both commands run" "$?" 0
    check "$id: the first prints the digest, as shown (elided there)" \
      grep -Eqx 'sha256:[0-9a-f]{64}  \./pdf-tools' <(head -n 1 "$T/out")
    check "$id: ... which is the form the page shows" \
      grep -Eqx 'sha256:[0-9a-f]+\.\.\.  \./pdf-tools' <(sed -n 2p "$BLOCKS/$id")
    DIGEST=
    ;;
  input-and-limits)
    in_work "$(commands $id)"
    is "$id: runs" "$?" 0
    check "$id: ... the script read the input" grep -q "report.pdf PDF" \
      "$(field "$F/run.jsonl" execution_started .run_dir)/logs/stdout.log"
    ;;
  explain-verify)
    in_work "$(commands $id)"
    is "$id: --explain -p strict and --verify-audit run" "$?" 0
    grep -q '^ok: ' "$T/out"
    is "$id: ... the audit verifies" "$?" 0
    ;;
  metrics-textfile)
    # The collector's directory, here; the runs of the examples above.
    mkdir -p "$T/node_exporter"
    (cd "$F" && bash -c "$(sed "s|/var/lib/node_exporter|$T/node_exporter|g" "$BLOCKS/$id")") \
      >"$T/out" 2>"$T/err"
    is "$id: runs" "$?" 0
    check "$id: ... and leaves the textfile, not its temporary" \
      sh -c 'test -s "$1/skillrun.prom" && test ! -e "$1/skillrun.prom.tmp"' - "$T/node_exporter"
    check "$id: ... counting the runs of this test" \
      grep -q '^skillrun_runs_total{tenant="default",skill="[a-z-]*",status="succeeded"} [1-9]' \
      "$T/node_exporter/skillrun.prom"
    if command -v promtool >/dev/null 2>&1; then
      check "$id: ... which promtool accepts" \
        sh -c 'promtool check metrics <"$1" >/dev/null 2>&1' - "$T/node_exporter/skillrun.prom"
    fi
    ;;
  # ---------------------------------------------------- skillrun.profile(5)
  clamp-messages)
    # The three notices, from the three layers.
    mkdir -p "$T/profiles" "$F/big-skill"
    printf '# big\ninclude default\nmemory 2GiB\n' >"$T/profiles/big.profile"
    printf 'include default\nmemory 256MiB\n' >"$T/profiles/p256.profile"
    printf -- '---\nname: big-skill\ndescription: d\nmetadata:\n  a: b\n  c: d\n  sandbox.memory: 1GiB\n  sandbox.pids: "64"\n---\n' \
      >"$F/big-skill/SKILL.md"
    chmod -R a+rX "$T/profiles" "$F/big-skill"
    w1=$("$SKILLRUN" --explain -p "$T/profiles/big.profile" "$F/big-skill" 2>/dev/null | "$JQ" -r '.warnings[]')
    w2=$("$SKILLRUN" --explain -p "$T/profiles/p256.profile" "$F/big-skill" 2>/dev/null | "$JQ" -r '.warnings[]')
    w3=$("$SKILLRUN" --explain --pids 100 "$F/big-skill" 2>/dev/null | "$JQ" -r '.warnings[]')
    # Continuation lines (indented) joined to the line they continue.
    sample=$(awk '/^    /{sub(/^ +/, " "); printf "%s", $0; next}
                  NR > 1 {print ""} {printf "%s", $0} END {print ""}' "$BLOCKS/$id" |
      sed "s|@sysconfdir@/skillrun/profiles|$T/profiles|")
    is "$id: line 1 as skillrun says it" "$(grep -F 'big.profile:3' <<<"$w1")" "$(sed -n 1p <<<"$sample")"
    is "$id: line 2 as skillrun says it" "$(grep -F 'SKILL.md:7' <<<"$w2")" "$(sed -n 2p <<<"$sample")"
    is "$id: line 3 as skillrun says it" "$(grep -F -- '--pids' <<<"$w3")" "$(sed -n 3p <<<"$sample")"
    ;;
  limit-table)
    # An empty platform configuration: the built-in caps (a --conf that
    # does not exist is an error).
    : >"$T/empty.conf"
    chmod 644 "$T/empty.conf"
    "$SKILLRUN" --conf "$T/empty.conf" --explain "$F/my-skill" >"$T/explain" 2>/dev/null
    while read -r key kind default _; do
      is "$id: $key's default" "$("$JQ" -r --arg k "$key" '.limits[$k].human' "$T/explain" |
        sed -E 's/^([0-9]+)$/\1/')" "$(sed -E 's/^([0-9]+)$/\1/' <<<"$default")"
      unit=$("$JQ" -r --arg k "$key" '.limits[$k].unit' "$T/explain")
      is "$id: $key is a $kind" "$unit" \
        "$(case $kind in size) echo bytes ;; duration) echo ms ;; *) echo count ;; esac)"
    done < <(tail -n +2 "$BLOCKS/$id")
    is "$id: every limit is in the table" "$(tail -n +2 "$BLOCKS/$id" | wc -l)" \
      "$("$JQ" '.limits | length' "$T/explain")"
    ;;
  seccomp-shape)
    "$SKILLRUN" --workspace-root "$WS" --audit-file "$T/sc.audit" "$F/my-skill" >/dev/null 2>&1
    is "$id: policy_resolved's seccomp has the keys shown" \
      "$(field "$T/sc.audit" policy_resolved '.seccomp | keys_unsorted | join(" ")')" \
      "$(grep -o '"[a-z_]*":' "$BLOCKS/$id" | tr -d '":' | sed 1d | tr '\n' ' ' | sed 's/ $//')"
    ;;
  etl-profile)
    mkdir -p "$T/etc-profiles"
    sed 1d "$BLOCKS/$id" >"$T/etc-profiles/etl.profile"
    ;;
  pypi-profile)
    # The text after it: a skill asking for pypi.org and
    # *.pythonhosted.org gets both names, the wildcard cut down, and not
    # api.example.com.
    sed 1d "$BLOCKS/$id" >"$T/pypi.profile"
    mkdir -p "$T/pypi-skill"
    printf -- '---\nname: pypi-skill\ndescription: Fetches packages.\nmetadata:\n  sandbox.network: allowlist\n  sandbox.network-allow: "pypi.org *.pythonhosted.org"\n---\n' \
      >"$T/pypi-skill/SKILL.md"
    "$SKILLRUN" --explain -p "$T/pypi.profile" "$T/pypi-skill" >"$T/pypi.json" 2>"$T/err"
    is "$id: skillrun takes it" "$?" 0
    is "$id: ... the list the text says" \
      "$("$JQ" -r '[.network.mode, (.network.allow[] | "\(.entry)/\(.narrowed)"), .limits["net-connections"].value, .limits["net-egress"].value] | join(" ")' "$T/pypi.json")" \
      "allowlist pypi.org:443/false files.pythonhosted.org:443/true 16 67108864"
    ;;
  platform-conf)
    sed 1d "$BLOCKS/$id" >"$T/platform.conf"
    chmod 644 "$T/platform.conf"
    "$SKILLRUN" --conf "$T/platform.conf" --explain "$F/my-skill" >"$T/pexplain" 2>"$T/err"
    is "$id: skillrun takes it" "$?" 0
    is "$id: ... the caps it sets" \
      "$("$JQ" -r '[.limits.memory.cap, .limits["cpu-seconds"].cap, .limits.timeout.cap, .workspace_root] | @tsv' "$T/pexplain")" \
      "4294967296	600	1800000	/srv/skillrun"
    ;;
  explain-etl)
    [ -s "$T/etc-profiles/etl.profile" ] || fail "$id: etl-profile comes first"
    (cd "$F" && SKILLRUN_PROFILE_PATH="$T/etc-profiles" bash -c \
      "$(sed 's|\./my-skill|./my-skill|' "$BLOCKS/$id")") >"$T/out" 2>"$T/err"
    is "$id: runs" "$?" 0
    is "$id: ... the profile's limits" "$("$JQ" -r '.memory.human + " " + .timeout.human' "$T/out")" "256MiB 90s"
    ;;
  # ---------------------------------------------------- skillrun-bundle(5)
  record-format)
    "$SKILLRUN" --digest -v "$F/hello" | sed '$d' >"$T/records"
    check "$id: every record of a real bundle has one of the two forms" \
      not grep -Ev '^(f (0644|0755) [0-9]+ [0-9a-f]{64} [^/].*|d 0755 0 - [^/].*/)$' "$T/records"
    is "$id: both forms occur" "$(cut -c1 "$T/records" | sort -u | tr -d '\n')" df
    ;;
  python-digest)
    is "$id: the reference gives skillrun's digest" \
      "$("$PYTHON3" "$BLOCKS/$id" "$F/pdf-form")" \
      "$("$SKILLRUN" --digest "$F/pdf-form" | cut -d' ' -f1)"
    ;;
  bundle-digest-run)
    DIGEST=$("$SKILLRUN" --digest "$F/pdf-tools" | cut -d' ' -f1)
    in_work "$(commands $id)"
    is "$id: both commands run" "$?" 0
    DIGEST=
    ;;
  # ---------------------------------------------------- skillrun-skill(5)
  error-messages)
    mkdir -p "$F/my-bad" "$F/typo-skill"
    printf -- '---\nname: My-Skill\ndescription: d\n---\n' >"$F/my-bad/SKILL.md"
    printf -- '---\nname: typo-skill\ndescription: d\nmetadata:\n  a: b\n  c: d\n  sandbox.memroy: 64M\n---\n' \
      >"$F/typo-skill/SKILL.md"
    chmod -R a+rX "$F/my-bad" "$F/typo-skill"
    # The page's bundles are under /srv/skills.
    is "$id: line 1 as skillrun says it" \
      "$("$SKILLRUN" --explain "$F/my-bad" 2>&1 >/dev/null | sed 's/^skillrun: //')" \
      "$(sed -n 1p "$BLOCKS/$id" | sed "s|/srv/skills|$(realpath "$F")|")"
    is "$id: line 2 as skillrun says it" \
      "$("$SKILLRUN" --explain "$F/typo-skill" 2>&1 >/dev/null | sed 's/^skillrun: //')" \
      "$(sed -n 2p "$BLOCKS/$id" | sed "s|/srv/skills|$(realpath "$F")|")"
    ;;
  skill-md-example)
    mkdir -p "$F/pdf-summary/scripts"
    cp "$BLOCKS/$id" "$F/pdf-summary/SKILL.md"
    cat >"$F/pdf-summary/scripts/summarise.py" <<'EOF'
import argparse, glob
ap = argparse.ArgumentParser()
ap.add_argument("--pages", type=int, default=10)
a = ap.parse_args()
for path in sorted(glob.glob("/workspace/inputs/*.pdf")):
    print(f"{path}: {len(open(path, 'rb').read())} bytes, first {a.pages} pages")
EOF
    chmod -R a+rX "$F/pdf-summary"
    "$SKILLRUN" --workspace-root "$WS" --audit-file "$T/summary.audit" \
      -i "$F/report.pdf" "$F/pdf-summary" >/dev/null 2>"$T/err"
    is "$id: the SKILL.md shown runs its entrypoint" "$?" 0
    check "$id: ... python3 scripts/summarise.py --pages 20, in the skill's directory" \
      grep -q "report.pdf: .* bytes, first 20 pages" \
      "$(field "$T/summary.audit" execution_started .run_dir)/logs/stdout.log"
    ;;
  # ------------------------------------------------ skillrun-integration(7)
  systemd-unit)
    # The unit shown is the unit shipped (recipes.sh runs its ExecStart=).
    svc=$TOP_SRCDIR/examples/integration/systemd/skillrun-hello.service
    missing=0
    while IFS= read -r l; do
      grep -qxF -- "$l" "$svc" || { missing=$((missing + 1)); diag "not in the unit: $l"; }
    done <"$BLOCKS/$id"
    is "$id: every line shown is in $(basename "$svc")" "$missing" 0
    ;;
  systemd-run-scope | scope-script)
    # No systemd here: a systemd-run that runs what follows its options.
    mkdir -p "$T/fake-systemd"
    cat >"$T/fake-systemd/systemd-run" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do
  case $1 in -p | --property) shift 2 ;; -*) shift ;; *) break ;; esac
done
exec "$@"
EOF
    cp "$TOP_SRCDIR/examples/integration/systemd/skillrun-scope.sh" "$T/fake-systemd/skillrun-scope.sh"
    chmod -R a+rx "$T/fake-systemd"
    U=$T/scope-$id
    mkdir -p "$U"
    cp -r "$F/my-skill" "$U/"
    chown -R "$NOBODY" "$U"
    (cd "$U" && as_user env PATH="$T/fake-systemd:$PATH" HOME="$U" DOC_WS="$U/ws" \
      bash -c "$(commands $id)") >"$T/out" 2>"$T/err"
    is "$id: runs (with a stand-in systemd-run)" "$?" 0
    check "$id: ... its audit file verifies" audit_ok "$(ls "$U"/*.jsonl)"
    ;;
  sbatch)
    mkdir -p "$T/fake-slurm"
    printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n' >"$T/fake-slurm/srun"
    chmod 755 "$T/fake-slurm/srun"
    (cd "$F" && PATH="$T/fake-slurm:$PATH" HOME="$T/slurm-home" SLURM_JOB_ID=77 \
      bundle="$F/hello" bash -c "$(cat "$BLOCKS/$id")") >"$T/out" 2>"$T/err"
    is "$id: the job's commands run (with a stand-in srun)" "$?" 0
    check "$id: ... in the runs directory it names" test -d "$T/slurm-home/skillrun-runs/default/slurm-77"
    ;;
  run-skill-output)
    cp "$TOP_SRCDIR/examples/integration/orchestrator/run-skill.sh" "$T/bin/"
    DIGEST=$("$SKILLRUN" --digest "$F/hello" | cut -d' ' -f1)
    in_work "$(commands $id)"
    is "$id: runs" "$?" 0
    want=$(sed -n '/^{/,$p' "$BLOCKS/$id" | tr -d '\n')
    is "$id: the same keys as shown" "$("$JQ" -c 'keys' "$T/out")" "$("$JQ" -c 'keys' <<<"$want")"
    is "$id: ... the same outcome" "$("$JQ" -c '[.execution_id, .status, .exit_code, .artifacts[0].path, (.artifacts[0] | keys)]' "$T/out")" \
      "$("$JQ" -c '[.execution_id, .status, .exit_code, .artifacts[0].path, (.artifacts[0] | keys)]' <<<"$want")"
    DIGEST=
    ;;
  orchestrator-core)
    (cd "$F" && digest=$("$SKILLRUN" --digest ./hello | cut -d' ' -f1) tenant=acme id=core-1 \
      input=notes.txt bundle=./hello audit=$T/core.audit bash -c "$(cat "$BLOCKS/$id")")
    is "$id: runs" "$?" 0
    check "$id: ... its audit verifies" audit_ok "$T/core.audit"
    ;;
  tmpfiles-user)
    if command -v systemd-tmpfiles >/dev/null; then
      H=$T/tmpfiles-home
      mkdir -p "$H/.local/state/skillrun/runs"
      cp "$BLOCKS/$id" "$T/user-tmpfiles.conf"
      chown -R "$NOBODY" "$H"
      chmod a+r "$T/user-tmpfiles.conf"
      as_user env HOME="$H" SYSTEMD_LOG_LEVEL=debug systemd-tmpfiles --user --clean \
        "$T/user-tmpfiles.conf" >"$T/out" 2>&1
      is "$id: systemd-tmpfiles --user takes the line" "$?" 0
      check "$id: ... and cleans the runs directory of \$HOME" \
        grep -qF "Running clean action for entry e $H/.local/state/skillrun/runs" "$T/out"
    else
      pass "# SKIP $id (systemd-tmpfiles is not installed: package systemd)"
    fi
    ;;
  # ---------------------------------------------------------------- README
  quick-start)
    # After the build (this test runs in it): the command that follows.
    cmd=$(sed -n 's|^\./bootstrap && ||p' "$BLOCKS/$id" | sed "s|^src/skillrun |skillrun |")
    (cd "$F/.." && cp -r "$TOP_SRCDIR/examples" . && chmod -R a+rX examples && bash -c "$cmd") \
      >"$T/out" 2>"$T/err"
    is "$id: runs" "$?" 0
    check "$id: ... and passes the skill's output through" grep -q "Hello from a verified skill bundle" "$T/err"
    ;;
  apparmor-sysctl)
    # No AppArmor here: the knob it lifts is the one the error names.
    check "$id: sets kernel.apparmor_restrict_unprivileged_userns to 0" \
      grep -qx 'sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0' "$BLOCKS/$id"
    check "$id: ... the knob skillrun reads for its error" \
      grep -q '"apparmor_restrict_unprivileged_userns"' "$TOP_SRCDIR/src/ns.c"
    ;;
  apparmor-build-tree)
    # No AppArmor here: a sudo that writes to $AA for /etc/apparmor.d, and
    # an apparmor_parser that records its arguments.  The profile written
    # is the shipped one's preamble and rules, for the tree's src/skillrun.
    AA=$T/apparmor.d
    mkdir -p "$AA" "$T/fake-aa" "$T/aa-tree/src"
    printf '#!/bin/bash\na=()\nfor x; do a+=("${x//\\/etc\\/apparmor.d/$AA}"); done\nexec "${a[@]}"\n' \
      >"$T/fake-aa/sudo"
    printf '#!/bin/sh\necho "$*" >>"$AA/parser.log"\n' >"$T/fake-aa/apparmor_parser"
    chmod 755 "$T/fake-aa/sudo" "$T/fake-aa/apparmor_parser"
    (cd "$T/aa-tree" && AA=$AA PATH="$T/fake-aa:$PATH" bash -c "$(cat "$BLOCKS/$id")") >"$T/out" 2>"$T/err"
    is "$id: runs (with stand-ins for sudo and apparmor_parser)" "$?" 0
    w=$AA/skillrun-build
    check "$id: ... attaches to the tree's src/skillrun" \
      grep -qxF "profile skillrun-build \"$T/aa-tree/src/skillrun\" flags=(unconfined) {" "$w"
    shipped=$TOP_SRCDIR/data/apparmor.d/skillrun.in
    is "$id: ... with the shipped profile's preamble" "$(grep -E '^(abi|include) ' "$w")" \
      "$(grep -E '^(abi|include) ' "$shipped")"
    is "$id: ... and rules" "$(grep -E '^  [a-z]' "$w" | grep -v include)" \
      "$(grep -E '^  [a-z]' "$shipped" | grep -v include)"
    is "$id: ... and loads it" "$(cat "$AA/parser.log" 2>/dev/null)" "-r $w"
    ;;
  build-and-check)
    # Not run inside itself: it is what CI runs (.ci/run).
    check "$id: .ci/run runs ./bootstrap" grep -q '\./bootstrap' "$TOP_SRCDIR/.ci/run"
    check "$id: .ci/run runs make check" grep -q 'make .*check' "$TOP_SRCDIR/.ci/run"
    ;;
  document-scorer)
    # From a source tree of its own: the examples and the shipped profiles
    # beside them, and no SKILLRUN_PROFILE_PATH (a new user's shell has none).
    mkdir -p "$T/tree"
    cp -r "$TOP_SRCDIR/examples" "$TOP_SRCDIR/profiles" "$T/tree/" && chmod -R a+rX "$T/tree"
    (cd "$T/tree" && env -u SKILLRUN_PROFILE_PATH bash -c "$(sed "s|^src/skillrun |skillrun |" "$BLOCKS/$id")") \
      >"$T/out" 2>"$T/err"
    rc=$?
    is "$id: runs" "$rc" 0
    [ "$rc" -eq 0 ] || diag "$(tail -n 3 "$T/err")"
    check "$id: ... and scores both inputs" grep -q "meeting.txt" "$T/err"
    ;;
  *)
    fail "example '$id' has no case in this test"
    ;;
  esac
done <"$BLOCKS/.order"
finish
