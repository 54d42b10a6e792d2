# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Helpers shared by the skillrun benchmarks; sourced by bench/launch,
# bench/digest, bench/logpump and bench/rss, never run on its own.

bench_die() {
	echo "${BENCH_NAME:-bench}: $*" >&2
	exit 1
}

# Locate the binary under test: $SKILLRUN, else ./src/skillrun (a build
# directory), else ./skillrun.  An absolute path, because the benchmarks
# change directory.
bench_find_skillrun() {
	local cand
	if [ -n "${SKILLRUN:-}" ]; then
		cand=$SKILLRUN
	elif [ -x ./src/skillrun ]; then
		cand=./src/skillrun
	elif [ -x ./skillrun ]; then
		cand=./skillrun
	else
		bench_die "no skillrun: run from a build directory or set SKILLRUN=/path/to/skillrun"
	fi
	[ -x "$cand" ] || bench_die "SKILLRUN=$cand is not executable"
	SKILLRUN=$(realpath -- "$cand")
	export SKILLRUN
}

# bench_need TOOL[:PACKAGE]...: fail early, naming the Debian package.
bench_need() {
	local t tool pkg
	for t in "$@"; do
		tool=${t%%:*}
		pkg=${t#*:}
		command -v "$tool" >/dev/null 2>&1 ||
			bench_die "$tool not found (apt-get install $pkg)"
	done
}

# A private scratch directory removed on any exit.  Mode 0755 on purpose:
# as root, skillrun's sandbox runs as a uid-pool user and opens the staged
# bundle from inside its user namespace, so every directory above the
# workspace root must be searchable by others (a 0700 mktemp directory makes
# the run fail with EACCES on the bind source).
bench_setup_tmp() {
	BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/skillrun-bench.XXXXXX") ||
		bench_die "mktemp failed"
	chmod 0755 "$BENCH_TMP"
	trap 'rm -rf -- "$BENCH_TMP"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	BENCH_WS=$BENCH_TMP/ws
	mkdir -m 0755 "$BENCH_WS"
}

# bench_note_fs DIR: says when DIR is on ext4 without a journal.  There,
# allocating an inode skips every inode deleted in the last 60 s (300 s
# while its block is dirty; fs/ext4/ialloc.c, recently_deleted()), so each
# file a run creates costs more the more was deleted just before (a CI run,
# the previous benchmark's clean-up).
bench_note_fs() {
	local fstype dev
	read -r fstype dev < <(findmnt -no FSTYPE,SOURCE -T "$1" 2>/dev/null) || return 0
	[ "$fstype" = ext4 ] || return 0
	dev=$(basename -- "$dev")
	compgen -G "/proc/fs/jbd2/$dev-*" >/dev/null && return 0
	echo "# $BENCH_NAME: $1 is on ext4 without a journal ($dev): run directories cost more for minutes after mass deletions (see bench/README.md)"
}

# bwrap with the view skillrun's default profile gives the skill (read-only
# /usr, the merged-/usr symlinks, fresh /proc, minimal /dev, /tmp): what
# every launch benchmark compares with.  The command to run follows it.
# shellcheck disable=SC2034 # used by the scripts that source this file
BENCH_BWRAP_VIEW=(bwrap --unshare-all --die-with-parent --new-session
	--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib
	--symlink usr/lib64 /lib64 --symlink usr/sbin /sbin
	--proc /proc --dev /dev --tmpfs /tmp)

# A bundle holding only SKILL.md, at $1.
bench_make_bundle() {
	mkdir -p "$1"
	printf -- '---\nname: %s\ndescription: skillrun benchmark bundle\n---\n# bench\n' \
		"$(basename -- "$1")" >"$1/SKILL.md"
}

bench_note_identity() {
	if [ "$(id -u)" -eq 0 ]; then
		echo "# $BENCH_NAME: running as root (uid 0); skillrun uses its root mode (uid pool)"
	else
		echo "# $BENCH_NAME: running as uid $(id -u) (unprivileged user namespaces)"
	fi
	echo "# $BENCH_NAME: $(uname -sr), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), skillrun=$SKILLRUN"
}

# bench_median_ms JSON INDEX: median of a hyperfine result, in milliseconds.
bench_median_ms() {
	jq -r ".results[$2].median * 1000" "$1"
}

# bench_pooled_median_ms INDEX JSON...: median of the individual run times
# of result INDEX pooled over several hyperfine exports, in milliseconds.
bench_pooled_median_ms() {
	local idx=$1
	shift
	jq -s -r --argjson i "$idx" '
	  [ .[].results[$i].times[] ] | sort
	  | if length % 2 == 1 then .[length / 2 | floor]
	    else (.[length / 2 - 1] + .[length / 2]) / 2 end
	  | . * 1000' "$@"
}

# bench_pooled_pct_ms INDEX PCT JSON...: the PCT-th percentile (nearest
# rank) of result INDEX's run times pooled like bench_pooled_median_ms.
bench_pooled_pct_ms() {
	local idx=$1 pct=$2
	shift 2
	jq -s -r --argjson i "$idx" --argjson p "$pct" '
	  [ .[].results[$i].times[] ] | sort
	  | .[($p / 100 * (length - 1) + 0.5) | floor] * 1000' "$@"
}

# bench_ratio A B: A/B with two decimals.
bench_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'
}

bench_fmt() {
	awk -v a="$1" 'BEGIN { printf "%.2f", a }'
}
