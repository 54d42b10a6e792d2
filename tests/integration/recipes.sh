#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The scheduler recipes of skillrun-integration(7), examples/integration/:
# each file passes the checker Debian has for it (systemd-analyze verify
# for the units, a YAML parse for the Kubernetes manifest, sh -n / bash -n
# for the scripts; a missing checker is a skip that says which package
# brings it), and the commands they hold run here: the unit's ExecStart=,
# the Job's container arguments with its ConfigMap's profile, the sbatch
# script with a stand-in srun, the scope script with a stand-in
# systemd-run, and the orchestrator's script end to end.  Packaged paths
# (/usr/bin/skillrun, /usr/share/doc/skillrun/examples/hello) are mapped
# to this build's.  TAP; needs SKILLRUN, TOP_SRCDIR, TOP_BUILDDIR.
. "$(dirname "$0")/lib.sh"

T=$(tmpdir)
# Copies every user can read (the source tree may sit below a 0700 parent,
# and the recipes' scripts also run as uid $NOBODY) and we can change (make
# distcheck's source tree is read-only, and cp keeps the modes).
cp -r "$TOP_SRCDIR/examples/hello" "$T/hello"
cp -r "$TOP_SRCDIR/examples/integration" "$T/integration"
chmod -R u+w,a+rX "$T/hello" "$T/integration"
HELLO=$T/hello
I=$T/integration
can_run=yes
sandbox_possible || can_run=no
# run_check TEXT CMD...: like check, or a skip when no sandbox can be built.
run_check() {
  if [ $can_run = no ]; then pass "# SKIP $1 (user namespaces are not available)"; return; fi
  check "$@"
}
# The packaged paths in a recipe, mapped to this build's.
map_paths() {
  sed -e "s|/usr/share/doc/skillrun/examples/hello|$HELLO|g" \
    -e "s|/usr/bin/skillrun|$SKILLRUN|g"
}
# Every file of the recipes is named in the man page, and installed.
for f in $(cd "$I" && find . -type f | sed 's|^\./||' | sort); do
  check "skillrun-integration(7) names $f" \
    grep -qF "$(printf '%s' "$f" | sed 's/-/\\-/g')" "$TOP_SRCDIR/man/skillrun-integration.7.in"
  check "Makefile.am installs examples/integration/$f" \
    grep -qF "examples/integration/$f" "$TOP_SRCDIR/Makefile.am"
done

# ---- systemd
S=$I/systemd
if command -v systemd-analyze >/dev/null 2>&1 && [ -d /usr/lib/systemd/system ]; then
  # verify checks that ExecStart= names an executable and that the units
  # the defaults pull in exist: a root with both and the units.
  R=$T/sdroot
  mkdir -p "$R/usr/bin" "$R/usr/lib/systemd" "$R/etc/systemd/system"
  cp -r /usr/lib/systemd/system "$R/usr/lib/systemd/"
  cp "$SKILLRUN" "$R/usr/bin/skillrun"
  cp "$S"/*.service "$S"/*.timer "$R/etc/systemd/system/"
  out=$(systemd-analyze verify --man=no --root="$R" skillrun-hello.service skillrun-hello.timer 2>&1)
  rc=$?
  is "systemd-analyze verify skillrun-hello.service and .timer" "$rc" 0
  is "systemd-analyze verify says nothing" "$out" ""
  # The check can fail: an unknown key is reported.
  sed 's/^KillMode=/KilMode=/' "$S/skillrun-hello.service" >"$R/etc/systemd/system/skillrun-hello.service"
  check "systemd-analyze verify reports a misspelt key" \
    sh -c 'systemd-analyze verify --man=no --root="$1" skillrun-hello.service 2>&1 | grep -q KilMode' sh "$R"
else
  pass "# SKIP systemd-analyze verify (package systemd is not installed)"
fi
# The unit's command line: continuation lines joined, the specifier and
# the variable given values.
exec_start=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$S/skillrun-hello.service" |
  sed -n 's/^ExecStart=//p' | map_paths |
  sed -e 's|\${INVOCATION_ID}|0123456789abcdef0123456789abcdef|' -e "s|%S|$T/state|")
check "the unit has one ExecStart= naming skillrun" test -n "$exec_start"
# shellcheck disable=SC2086 # the unit's words, split as systemd does
run_check "the unit's ExecStart= runs the hello example" \
  sh -c '$0 "$@" >"'"$T"'/unit.audit" 2>/dev/null' $exec_start
run_check "... its run directory is named after the invocation id" \
  test -f "$T/state/skillrun-hello/runs/default/0123456789abcdef0123456789abcdef/outputs/hello.txt"
check "skillrun-scope.sh parses (sh -n)" sh -n "$S/skillrun-scope.sh"
# With a stand-in systemd-run that shows what it was given.
mkdir -p "$T/bin"
cat >"$T/bin/systemd-run" <<'EOF'
#!/bin/sh
printf '%s\n' "$@"
EOF
chmod +x "$T/bin/systemd-run"
args=$(PATH=$T/bin:$PATH SKILLRUN_EXECUTION_ID=run-7 sh "$S/skillrun-scope.sh" ./b)
check "skillrun-scope.sh asks for a delegated scope named after the id" \
  sh -c 'printf "%s\n" "$1" | grep -qx -- "--unit=skillrun-run-7" &&
         printf "%s\n" "$1" | grep -qx -- "Delegate=yes"' sh "$args"
if [ "$(id -u)" -eq 0 ]; then
  check "skillrun-scope.sh as root: the system manager, the scope's cgroup as --cgroup-parent" \
    sh -c 'printf "%s\n" "$1" | grep -qx -- "/sys/fs/cgroup/system.slice/skillrun-run-7.scope" &&
           ! printf "%s\n" "$1" | grep -qx -- "--user"' sh "$args"
  args=$(as_user env PATH="$T/bin:$PATH" SKILLRUN_EXECUTION_ID=run-8 sh "$S/skillrun-scope.sh" ./b)
fi
if [ -n "$_user_skip" ]; then
  pass "# SKIP skillrun-scope.sh as an ordinary user: as uid $NOBODY: $_user_skip"
else
  check "skillrun-scope.sh as an ordinary user: the user manager, no --cgroup-parent" \
    sh -c 'printf "%s\n" "$1" | grep -qx -- "--user" &&
           ! printf "%s\n" "$1" | grep -q -- "--cgroup-parent"' sh "$args"
fi

# ---- Kubernetes
K=$I/kubernetes/skillrun-job.yaml
if "$PYTHON3" -c 'import yaml' 2>/dev/null; then
  "$PYTHON3" - "$K" "$T" >"$T/k8s.out" 2>&1 <<'EOF'
import sys, yaml
path, out = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
kinds = sorted(d["kind"] for d in docs)
assert kinds == ["ConfigMap", "Job"], kinds
cm = next(d for d in docs if d["kind"] == "ConfigMap")
job = next(d for d in docs if d["kind"] == "Job")
pod = job["spec"]["template"]["spec"]
psc = pod["securityContext"]
assert pod["restartPolicy"] == "Never"
assert psc["runAsNonRoot"] is True and psc["runAsUser"] != 0
assert psc["seccompProfile"]["type"] in ("Unconfined", "Localhost"), psc
assert psc["appArmorProfile"]["type"] in ("Unconfined", "Localhost"), psc
(c,) = pod["containers"]
csc = c["securityContext"]
assert csc["allowPrivilegeEscalation"] is False
assert csc["capabilities"]["drop"] == ["ALL"]
rules = job["spec"]["podFailurePolicy"]["rules"]
codes = set(rules[0]["onExitCodes"]["values"])
assert {123, 125} <= codes and 124 not in codes, codes
# The audit stream in a file on the volume, apart from the container's log
# (stdout and stderr merged: skillrun-integration(7)).
assert "--audit-file=/runs/$(POD_NAME).audit.jsonl" in c["args"], c["args"]
# The profile the container reads, and its command line.
vols = {v["name"]: v for v in pod["volumes"]}
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
(profile_arg,) = [a for a in c["args"] if a.startswith("--profile=")]
ppath = profile_arg.split("=", 1)[1]
pdir, pname = ppath.rsplit("/", 1)
# The key mounted as the file itself (subPath): a ConfigMap volume mounted
# as a directory holds each key as a symbolic link, which skillrun refuses.
m = mounts[ppath]
assert m.get("subPath") == pname, m
assert vols[m["name"]]["configMap"]["name"] == cm["metadata"]["name"]
open(out + "/pod.profile", "w").write(cm["data"][pname])
args = [a.replace("$(POD_NAME)", "skillrun-hello-x7k2q")
         .replace(ppath, out + "/pod.profile")
         .replace("=/runs", "=" + out + "/runs")
        for a in c["args"]]
open(out + "/k8s.args", "w").write("\n".join(c["command"] + args) + "\n")
print("ok")
EOF
  rc=$?
  sed 's/^/# /' "$T/k8s.out"
  is "the Kubernetes manifest parses and has what skillrun-integration(7) says" "$rc" 0
  if [ $rc -eq 0 ]; then
    mapfile -t kargs < <(map_paths <"$T/k8s.args")
    check "the ConfigMap's profile is accepted" \
      sh -c '"$0" --explain -p "$1" "$2" >/dev/null' "$SKILLRUN" "$T/pod.profile" "$HELLO"
    # What a ConfigMap volume mounted as a directory would give: the key a
    # link into ..data/.  The example mounts the file instead (subPath).
    mkdir -p "$T/cm/..2025_01_01_00_00_00.1"
    cp "$T/pod.profile" "$T/cm/..2025_01_01_00_00_00.1/"
    ln -s ..2025_01_01_00_00_00.1 "$T/cm/..data"
    ln -s ..data/pod.profile "$T/cm/pod.profile"
    check "... which a directory mount's link would not be (hence subPath)" \
      sh -c '! "$0" --explain -p "$1" "$2" >/dev/null 2>&1' "$SKILLRUN" "$T/cm/pod.profile" "$HELLO"
    # The volume, mounted before the container starts: an emptyDir is the
    # kubelet's (root's) and mode 0777, without the sticky bit, which
    # skillrun accepts above a workspace root as the administrator's
    # layout.  The container runs as an ordinary user (runAsNonRoot): uid
    # $NOBODY here.  Run by an ordinary user, the test cannot make root's
    # directory: its stand-in is the caller's own, which others may not
    # write (one of the caller's that they may is refused, skillrun(1)
    # SECURITY).
    mkdir -p "$T/runs"
    if [ "$(id -u)" -eq 0 ]; then chmod 0777 "$T/runs"; else chmod 0755 "$T/runs"; fi
    k8s_as=("${AS_USER[@]}")
    [ -z "$_user_skip" ] || k8s_as=(env)
    # And, where the test may, a container's /proc/sys: bound read-only
    # (as Docker and the kubelet's runtimes do).
    k8s_ns=(env) k8s_what="proc tmpfs, an emptyDir volume"
    if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
      k8s_ns=(unshare -m --propagation private sh -c
        'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$@"' sh)
      k8s_what="$k8s_what, a read-only /proc/sys"
    fi
    run_check "the Job's container command runs the hello example ($k8s_what)" \
      sh -c '"$@" >"$0/k8s.audit" 2>/dev/null' "$T" "${k8s_ns[@]}" "${k8s_as[@]}" "${kargs[@]}"
    run_check "... its run directory is named after the pod" \
      test -f "$T/runs/skillrun/default/skillrun-hello-x7k2q/outputs/hello.txt"
    run_check "... its audit stream is the file on the volume, and verifies" \
      audit_ok "$T/runs/skillrun-hello-x7k2q.audit.jsonl"
    run_check "... and nothing of it is on standard output (the container's log)" \
      test ! -s "$T/k8s.audit"
  fi
else
  pass "# SKIP the Kubernetes manifest (python3-yaml is not installed)"
fi

# ---- Slurm
B=$I/slurm/skillrun-hello.sbatch
check "skillrun-hello.sbatch parses (bash -n)" bash -n "$B"
check "skillrun-hello.sbatch asks for more time than its --timeout" \
  grep -q '^#SBATCH --time=00:10:00$' "$B"
# A stand-in srun that drops its own options and runs the task.
cat >"$T/bin/srun" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
exec "$@"
EOF
chmod +x "$T/bin/srun"
ln -s "$SKILLRUN" "$T/bin/skillrun"
run_check "the batch script runs the hello example (through srun)" \
  env PATH="$T/bin:$PATH" SLURM_JOB_ID=4242 SKILLRUN_RUNS="$T/slurm" \
  bash -c '"$0" "$1" >"$2" 2>/dev/null' "$B" "$HELLO" "$T/slurm.audit"
run_check "... its run directory is named after the job" \
  test -f "$T/slurm/default/slurm-4242/outputs/hello.txt"

# ---- orchestrator
O=$I/orchestrator/run-skill.sh
check "run-skill.sh parses (sh -n)" sh -n "$O"
check "run_skill.py parses" "$PYTHON3" -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' \
  "$I/orchestrator/run_skill.py"
# Both are run against every kind of outcome by orchestrators.sh.
digest=$("$SKILLRUN" --digest "$HELLO" | cut -d' ' -f1)
echo "notes" >"$T/notes.txt"
chmod 644 "$T/notes.txt"
# As the least privileged user there is (lib.sh $MODES).
LEAST=${MODES##* }
W=$(mode_workspace "$LEAST")
if [ "$LEAST" = user ]; then pre=("${AS_USER[@]}" env); else pre=(env); fi
if [ $can_run = yes ]; then
  out=$("${pre[@]}" SKILLRUN="$SKILLRUN" SKILLRUN_WORKSPACE_ROOT="$W" TMPDIR="$W" \
    sh "$O" "$HELLO" "$digest" acme req-7 "$T/notes.txt" 2>"$T/err")
  rc=$?
  diag "$out"
  is "run-skill.sh: exit status 0" "$rc" 0
  is "run-skill.sh: status succeeded" "$(printf '%s' "$out" | "$JQ" -r .status)" succeeded
  is "run-skill.sh: the artifact and its digest" \
    "$(printf '%s' "$out" | "$JQ" -r '.artifacts[0].path')" hello.txt
  is "run-skill.sh: the input was given to the run" \
    "$("$JQ" -r '.inputs[].name' "$W/acme/req-7/metadata.json" 2>/dev/null)" notes.txt
  check "run-skill.sh: the audit it names verifies" \
    sh -c '"$0" --verify-audit "$1" >/dev/null' "$SKILLRUN" "$(printf '%s' "$out" | "$JQ" -r .audit)"
  out=$("${pre[@]}" SKILLRUN="$SKILLRUN" SKILLRUN_WORKSPACE_ROOT="$W" TMPDIR="$W" \
    sh "$O" "$HELLO" "sha256:$(printf '%064d' 0)" acme req-8 2>/dev/null)
  rc=$?
  is "run-skill.sh, another digest: exit status 123" "$rc" 123
  is "run-skill.sh, another digest: status refused" "$(printf '%s' "$out" | "$JQ" -r .status)" refused
  out=$("${pre[@]}" SKILLRUN="$SKILLRUN" SKILLRUN_WORKSPACE_ROOT="$W" TMPDIR="$W" \
    sh "$O" "$HELLO" "$digest" acme req-7 2>/dev/null)
  is "run-skill.sh, the same id again: status refused" "$(printf '%s' "$out" | "$JQ" -r .status)" refused
else
  pass "# SKIP run-skill.sh end to end (user namespaces are not available)"
fi
finish
