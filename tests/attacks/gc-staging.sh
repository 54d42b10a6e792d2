#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, gc and a dead run's tmpfs staging: a run's
# marker names the tmpfs base its staging directory is in (the
# user.skillrun.staging attribute), and gc (--gc, or a run's clean-up
# before it starts) removes the staging directory there.  The marker is
# its run's owner's file, and so is the attribute.  Another user who owns
# a workspace root root cleans up, or who made .active first in a shared
# (sticky) one, plants a dead run whose attribute names a directory of
# theirs reached through /proc/PID/root: a tmpfs of their own in a mount
# namespace of their own (an unprivileged user namespace), where they
# bound a directory they may only read on the staging directory's name.
# root's gc followed that path into their namespace and removed, as root,
# everything in the bound directory.  gc must look for a staging base in
# its own mount namespace only: a base reached through a magic link is
# left alone, and the bound directory keeps every file.
# And the staging names derive from the workspace root's resolved path:
# --gc over a root reached through a path another user controls must not
# match their markers with the staging of runs under another root (its
# last two cases: a live run of root's lost its staging).
. "$(dirname "$0")/../integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: the victim is root's gc, the planter another user"
sandbox_possible || skip_all "user namespaces are not available"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"

# Tries of the race in the last case (34 took it before the fix; .ci/run's
# sanitized stage, which looks for memory errors, not for races, uses fewer).
TRIES=${SKILLRUN_ATTACK_GC_TRIES:-300}
OTHER=$NOBODY
AS_OTHER=(setpriv --reuid="$OTHER" --regid="$OTHER" --clear-groups --)
"${AS_OTHER[@]}" unshare -Urm true 2>/dev/null ||
  skip_all "uid $OTHER cannot make a user and mount namespace"

T=$(tmpdir)
B=$T/gc-staging-skill
mkbundle "$B"
chmod -R a+rX "$B"

# What root keeps and the other user may only read.
P=$T/precious
fill() {
  mkdir -p "$P/sub"
  echo keep >"$P/keep.txt"
  echo deep >"$P/sub/deep.txt"
  chmod -R a+rX,go-w "$P"
}
fill
precious() { (cd "$P" && find . | sort | tr '\n' ' '); }
before=$(precious)

# A shared workspace root, sticky as /tmp is (skillrun(1) SECURITY).
W=$(tmpdir)
chmod 1777 "$W"
# The other user's mount point, and their file saying it is ready.
M=$T/mnt
mkdir "$M" "$T/other"
chown "$OTHER:$OTHER" "$M" "$T/other"

# The tmpfs staging directory's name of marker TENANT:EXEC under W
# (workspace.c tmpfs_staging_name).
name_of() { printf '%s-%s' "$(printf %s "$(realpath "$W")" | sha256sum | cut -c1-16)" "$1"; }

# The other user's namespace: a tmpfs of theirs on $M (mode 0755, theirs:
# the namespace's root is their uid), with $P bound on the staging names
# of the two dead runs they plant.  Held until the test ends.
"${AS_OTHER[@]}" unshare -Urm sh -c '
  m=$1 p=$2 ready=$3
  shift 3
  mount -t tmpfs -o mode=0755 none "$m" || exit 1
  for n; do mkdir "$m/$n" && mount --bind "$p" "$m/$n" || exit 1; done
  echo ok >"$ready"
  exec sleep 600' sh "$M" "$P" "$T/other/ready" "$(name_of acme:e1)" "$(name_of acme:e2)" &
holder=$!
bg_pids+=("$holder")
for _ in $(seq 100); do [ -s "$T/other/ready" ] && break; sleep 0.05; done
check "the other user's namespace holds $P on the staging names" [ -s "$T/other/ready" ]
is "... which root reaches through /proc/$holder/root" \
  "$(ls "/proc/$holder/root$M/$(name_of acme:e1)" | tr '\n' ' ')" "keep.txt sub "

# plant EXEC: as the other user, a dead run acme/EXEC in W (an empty
# ledger, linked in as its marker, which they made .active for), whose
# marker says its staging is in their namespace's tmpfs.
"${AS_OTHER[@]}" sh -c 'umask 077 && mkdir "$1/.active" "$1/acme"' sh "$W"
plant() {
  "${AS_OTHER[@]}" sh -c 'umask 077 && mkdir "$1/acme/$2" && : >"$1/acme/$2/audit.jsonl" &&
    ln "$1/acme/$2/audit.jsonl" "$1/.active/acme:$2"' sh "$W" "$1"
  # The marker's owner may set its user.* attributes (setfattr(1)); the
  # test's python may not be theirs to run.
  "$PYTHON3" -c 'import os, sys; os.setxattr(sys.argv[1], "user.skillrun.staging", sys.argv[2].encode())' \
    "$W/.active/acme:$1" "/proc/$holder/root$M"
}

# root's --gc over the shared root.
plant e1
"$SKILLRUN" --gc --workspace-root "$W" >"$T/gc.out" 2>&1
is "root's --gc exits 0" "$?" 0
is "... and leaves what the other user bound untouched" "$(precious)" "$before"

# A run of root's in the shared root: its clean-up before it starts.
fill
plant e2
"$SKILLRUN" --workspace-root "$W" --tenant root-t --execution-id r1 "$B" -- /bin/true >/dev/null 2>"$T/run.err"
is "root's run in a root whose .active is another user's is refused (125)" "$?" 125
check "... naming .active" grep -q "run marker directory $(realpath "$W")/.active belongs to uid $OTHER" "$T/run.err"
is "... and its clean-up leaves what the other user bound untouched" "$(precious)" "$before"

kill -KILL "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# root's --gc over a workspace root the other user owns, through a path
# they control ($A/ws): between gc opening it and resolving it (the tmpfs
# staging names derive from the resolved path), they switch $A/ws from
# their own root to one of root's, where a run of root's is live.  gc
# then matched their dead run's marker (default:victim, no attribute)
# with the live run's staging on root's tmpfs base and removed it.
W0=$(tmpdir)
A=$T/other-home
mkdir "$A"
chown "$OTHER:$OTHER" "$A"
"$SKILLRUN" --workspace-root "$W0" --execution-id victim "$B" \
  -- /bin/sh -c 'sleep 60' >"$T/victim.audit" 2>/dev/null &
victim=$!
bg_pids+=("$victim")
for _ in $(seq 200); do grep -q '"state":"running"' "$T/victim.audit" 2>/dev/null && break; sleep 0.05; done
staging=$(field "$T/victim.audit" bundle_verified .staging)
if ! command -v perl >/dev/null; then
  pass "# SKIP the switch of a root's path by another user: needs perl"
elif [ "${staging#"$(realpath "$W0")"/}" != "$staging" ]; then
  pass "# SKIP root's live run is staged in its run directory, not on a tmpfs base"
else
  check "root's live run is staged on a tmpfs base ($staging)" [ -f "$staging/bundle/SKILL.md" ]
  # The other user: their root $A/real, a dead run default:victim planted
  # again whenever gc closed it, and $A/ws switched between $A/real and
  # $W0 by rename until $A/stop appears (perl: a shell's switches are a
  # process each, too slow to meet gc's window).
  "${AS_OTHER[@]}" perl -e '
    my ($a, $w0) = @ARGV;
    my $r = "$a/real";
    umask 077;
    mkdir "$r" and chmod(0755, "$r") and mkdir "$r/.active" and mkdir "$r/default" or die;
    until (-e "$a/stop") {
      unless (-e "$r/.active/default:victim") {
        system("rm", "-rf", "$r/default/victim");
        mkdir "$r/default/victim";
        open(my $f, ">", "$r/default/victim/audit.jsonl") and close $f;
        link "$r/default/victim/audit.jsonl", "$r/.active/default:victim";
      }
      for my $t ("real", $w0) {
        unlink "$a/ws.new";
        symlink($t, "$a/ws.new") and rename("$a/ws.new", "$a/ws");
      }
    }' "$A" "$W0" &
  flipper=$!
  bg_pids+=("$flipper")
  for _ in $(seq 100); do [ -L "$A/ws" ] && break; sleep 0.05; done
  tries=0
  while [ $tries -lt "$TRIES" ] && [ -f "$staging/bundle/SKILL.md" ]; do
    tries=$((tries + 1))
    "$SKILLRUN" --gc --workspace-root "$A/ws" >/dev/null 2>&1
  done
  touch "$A/stop"
  wait "$flipper" 2>/dev/null
  check "$tries runs of root's --gc over $A/ws leave root's live run's staging alone" \
    [ -f "$staging/bundle/SKILL.md" ]
fi
kill -TERM "$victim" 2>/dev/null
wait "$victim" 2>/dev/null

# root's workspace root in a directory the other user may write, without
# a race: they move it aside and make their own at its path, with a dead
# run named after root's live one and no attribute (as an older version's
# marker has none).  gc looked for such a marker's staging in its own
# tmpfs bases, under the name the path and the marker give, and removed
# the live run's verified bundle.  A run no longer starts in such a root
# (ownership.sh): the directory becomes the other user's once the run
# is live (as one of an older version's, or one chowned later).
R=$T/later-theirs/rootws
mkdir -p "$R"
"$SKILLRUN" --workspace-root "$R" --execution-id victim2 "$B" \
  -- /bin/sh -c 'sleep 60' >"$T/victim2.audit" 2>/dev/null &
victim=$!
bg_pids+=("$victim")
for _ in $(seq 200); do grep -q '"state":"running"' "$T/victim2.audit" 2>/dev/null && break; sleep 0.05; done
chown "$OTHER:$OTHER" "$T/later-theirs"
staging=$(field "$T/victim2.audit" bundle_verified .staging)
if [ "${staging#"$(realpath "$R")"/}" != "$staging" ]; then
  pass "# SKIP root's live run is staged in its run directory, not on a tmpfs base"
else
  check "root's live run in $R is staged on a tmpfs base ($staging)" [ -f "$staging/bundle/SKILL.md" ]
  "${AS_OTHER[@]}" sh -c 'umask 077 && mv "$1" "$1.old" && mkdir -p "$1/.active" "$1/default/victim2" &&
    chmod 755 "$1" && : >"$1/default/victim2/audit.jsonl" &&
    ln "$1/default/victim2/audit.jsonl" "$1/.active/default:victim2"' sh "$R"
  check "the other user moved $R aside" [ -d "$R.old/default/victim2" ]
  check "... and planted default:victim2 in its place" [ -f "$R/.active/default:victim2" ]
  "$SKILLRUN" --gc --workspace-root "$R" >"$T/gc2.out" 2>&1
  is "root's --gc over the planted root exits 0" "$?" 0
  check "... and leaves root's live run's staging alone" [ -f "$staging/bundle/SKILL.md" ]
fi
kill -TERM "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
finish
