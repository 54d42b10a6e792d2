#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the keys skillrun.conf names: root's alone, like
# the conf itself and its network-hosts.  skillrun.conf must be root's so
# that nobody else decides what is trusted, but the trust-key,
# capability-key and audit-key files it names were read whoever owned
# them: another local user who could write one (a key kept in their
# directory, or a 0666 file) put their own public key there, signed their
# own bundle with it, and it ran as tier official on a host that requires
# a signature.  Now each key skillrun.conf names must be a regular file
# owned by root and not writable by group or others, or the run stops
# (125) naming the file, its owner and its mode, and the skill never runs.
# A public key file that also held the private half (one PEM file for
# both) was accepted too, OpenSSL reading its first PUBLIC KEY block: every
# caller must read a trust key, so every local user could sign bundles (and
# capabilities) with the private one, and ran them as tier official.  Now a
# trust-key or capability-key file holds one PEM block, a public key, or
# the run stops (125, key_invalid) saying why.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
command -v openssl >/dev/null || skip_all "openssl command line not found"
. "$(dirname "$0")/common.sh"

OTHER=$((NOBODY - 1))
[ "$OTHER" -ne 0 ] || OTHER=$((NOBODY + 1))
K=$T/keys
mkdir -p "$K"
for k in official mallory audit; do
  openssl genpkey -algorithm ed25519 -out "$K/$k.key" 2>/dev/null
  openssl pkey -in "$K/$k.key" -pubout -out "$K/$k.pub" 2>/dev/null
done
# The key the administrator meant, root's; and the "same" key file where
# another user could write it, who replaced it with their own.
cp "$K/mallory.pub" "$K/theirs.pub"
chown "$OTHER" "$K/theirs.pub"
cp "$K/official.pub" "$K/lax.pub"
chmod 666 "$K/lax.pub"
cp "$K/audit.key" "$K/audit-theirs.key"
chown "$OTHER" "$K/audit-theirs.key"
chmod 644 "$K"/*.pub "$K"/*.key
chmod 666 "$K/lax.pub"
# One file for both halves of the official key, root's: every caller must
# read a trust key, so every caller can read the private half too.  And a
# file of two public keys, of which OpenSSL read only the first.
cat "$K/official.key" "$K/official.pub" >"$K/both.pem"
cat "$K/official.pub" "$K/mallory.pub" >"$K/two.pub"
{ echo "A comment before the key is no PEM block"; cat "$K/official.pub"; } >"$K/one-text.pub"
chmod 644 "$K/both.pem" "$K/two.pub" "$K/one-text.pub"
# Mallory's bundle, signed by Mallory as official.
M=$T/mallory-skill
mkdir -p "$M"
printf -- '---\nname: mallory-skill\ndescription: A test skill.\nmetadata:\n  version: "1.0"\n---\n# m\n' >"$M/SKILL.md"
chmod 600 "$K/mallory.key" # --sign signs with a key of its owner's alone
"$SKILLRUN" --sign "$K/mallory.key" --tier official --signature "$M.sig" "$M" >/dev/null 2>&1 ||
  { echo "Bail out! cannot sign the test bundle"; exit 99; }
chmod -R a+rX "$T"

conf() { # conf NAME LINES...: a root-owned 0644 conf; its path
  printf '%s\n' "${@:2}" >"$T/$1"
  chmod 644 "$T/$1"
  echo "$T/$1"
}
C_GOOD=$(conf good.conf "require-signature yes" "trust-key official $K/official.pub")
C_THEIRS=$(conf theirs.conf "require-signature yes" "trust-key official $K/theirs.pub")
C_LAX=$(conf lax.conf "require-signature yes" "trust-key official $K/lax.pub")
C_CAP=$(conf cap.conf "require-capability yes" "capability-key $K/theirs.pub")
C_AUDIT=$(conf audit.conf "audit-key $K/audit-theirs.key")
C_BOTH=$(conf both.conf "require-signature yes" "trust-key official $K/both.pem")
C_TWO=$(conf two.conf "require-signature yes" "trust-key official $K/two.pub")
C_CAP_BOTH=$(conf cap-both.conf "require-capability yes" "capability-key $K/both.pem")
C_TEXT=$(conf text.conf "require-signature yes" "trust-key official $K/one-text.pub")

# mint OUT EXECUTION [KEY]: a capability for a run of $B, signed by Mallory
# (with her key, or with KEY).
DIGEST=$("$SKILLRUN" --digest "$B" | cut -d' ' -f1)
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
mint() {
  local now
  now=$(date +%s)
  printf 'skillrun-capability/1\ntenant: default\nexecution: %s\ndigest: %s\n' "$2" "$DIGEST" >"$T/cap"
  printf 'network: deny\nissued: %s\nexpires: %s\n' "$now" $((now + 60)) >>"$T/cap"
  openssl pkeyutl -sign -inkey "${3:-$K/mallory.key}" -rawin -in "$T/cap" -out "$T/cap.sig"
  echo "$(b64url <"$T/cap").$(b64url <"$T/cap.sig")" >"$1"
  chmod 644 "$1"
}

# try MODE CONF BUNDLE [ARGS...]: try_conf (common.sh), ids k1, k2...
try() { try_conf k "$@"; }

for mode in root user; do
  # The control: with the administrator's key, Mallory's bundle is refused.
  try $mode "$C_GOOD" "$M"
  is "$mode: root's trust key: Mallory's bundle is refused" \
    "$rc:$RAN:$(field "$AUDIT" bundle_rejected .reason)" 123:no:unknown_key

  try $mode "$C_THEIRS" "$M"
  is "$mode: a trust-key another user owns stops the run (125)" "$rc" 125
  check "$mode: ... naming the file, its owner and its mode" \
    grep -q "key $K/theirs.pub is not root's alone (owner uid $OTHER, mode 0644)" "$ERR"
  is "$mode: ... Mallory's bundle never ran" "$RAN" no
  is "$mode: ... recorded as key_invalid" "$(field "$AUDIT" error .reason)" key_invalid
  is "$mode: ... with its terminal record" "$(field "$AUDIT" execution_completed .status)" error

  try $mode "$C_LAX" "$M"
  is "$mode: a trust-key anyone may write stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying so" grep -q "key $K/lax.pub is not root's alone (owner uid 0, mode 0666)" "$ERR"

  # A capability Mallory minted for the next run, where one is required.
  mint "$T/cap-$mode" "k$((_try_conf_n + 1))"
  try $mode "$C_CAP" "$B" --capability "$T/cap-$mode"
  check "$mode: a capability-key another user owns stops the run" \
    grep -q "key $K/theirs.pub is not root's alone" "$ERR"
  is "$mode: ... (125), the skill never ran" "$rc:$RAN" 125:no

  try $mode "$C_AUDIT" "$B"
  is "$mode: an audit-key another user owns stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... naming it" grep -q "key $K/audit-theirs.key is not root's alone" "$ERR"

  # Mallory reads the private half out of the trust-key file and signs her
  # own bundle as official with it.
  # (She copies it out first, into a directory of hers: --sign takes no
  # key that others can read, nor one in a directory another user owns.)
  if [ $mode = user ]; then
    pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --) kd=$WS_user
  else pre=(env) kd=$T; fi
  rm -f "$WS_user/both-$mode.sig" "$kd/both-$mode.key"
  "${pre[@]}" sh -c 'umask 077 && cat "$1" >"$2"' sh "$K/both.pem" "$kd/both-$mode.key"
  "${pre[@]}" "$SKILLRUN" --sign "$kd/both-$mode.key" --tier official --signature "$WS_user/both-$mode.sig" "$M" \
    >/dev/null 2>&1 && chmod 644 "$WS_user/both-$mode.sig"
  try $mode "$C_BOTH" "$M" --signature "$WS_user/both-$mode.sig"
  is "$mode: a trust-key file that holds the private key too stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying why" grep -q "$K/both.pem: holds a private key" "$ERR"
  is "$mode: ... recorded as key_invalid" "$(field "$AUDIT" error .reason)" key_invalid
  mint "$T/capb-$mode" "k$((_try_conf_n + 1))" "$K/both.pem"
  try $mode "$C_CAP_BOTH" "$B" --capability "$T/capb-$mode"
  is "$mode: so does such a capability-key (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying why" grep -q "$K/both.pem: holds a private key" "$ERR"
  try $mode "$C_TWO" "$M"
  is "$mode: a trust-key file of two public keys stops the run (125)" "$rc:$RAN" 125:no
  check "$mode: ... saying so" grep -q "$K/two.pub: holds 2 PEM blocks" "$ERR"
  try $mode "$C_TEXT" "$M"
  is "$mode: text around the one public key is fine (Mallory's bundle: unknown_key)" \
    "$rc:$RAN:$(field "$AUDIT" bundle_rejected .reason)" 123:no:unknown_key
done
host_unchanged conf-keys
finish
