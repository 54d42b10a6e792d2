/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "tier.h"

/*
 * Signed bundles, trust tiers (tier.h) and execution capabilities (skillrun(1),
 * "SIGNED BUNDLES" and "EXECUTION CAPABILITIES").  Everything here is pure
 * except sr_trust_key_load (one file read); the crypto is Ed25519 through
 * OpenSSL's EVP interface.
 */

#define SR_SIG_BYTES 64
#define SR_KEY_ID_LEN 16 /* hex digits: SHA-256 of the DER public key */

/* An Ed25519 key (public, or private with its public half). */
struct sr_trust_key;

/* From PEM text ("PUBLIC KEY" or, when private_key, "PRIVATE KEY").  Not
 * Ed25519, or unparsable: exit 125, reason "key_invalid", naming
 * display_name. */
int sr_trust_key_from_pem(const char *pem, size_t len, bool private_key,
                          const char *display_name, struct sr_trust_key **out,
                          struct sr_error *err);
/* Reads a PEM file (at most 16 KiB) and parses it.  A private key (the
 * publisher's, --sign) must also be the caller's alone: owned by the
 * caller or root, not readable or writable by group or others (a root-owned
 * key may be readable by its group), or exit 125, reason "key_invalid". */
int sr_trust_key_load(const char *path, bool private_key,
                      struct sr_trust_key **out, struct sr_error *err);
/* The same for a key skillrun.conf names (trust-key, capability-key,
 * audit-key): the opened file must also be root's alone (owned by root,
 * not writable by group or others), like the conf itself, or exit 125,
 * reason "key_invalid". */
int sr_trust_key_load_platform(const char *path, bool private_key,
                               struct sr_trust_key **out, struct sr_error *err);
const char *sr_trust_key_id(const struct sr_trust_key *k);
void sr_trust_key_free(struct sr_trust_key *k);
SR_DEFINE_CLEANUP(struct sr_trust_key *, sr_trust_key_free)
#define _cleanup_trust_key_ _cleanup_(sr_trust_key_freep)

/* Raw Ed25519 over msg.  sign: 0 or -EINVAL (public key) / -EIO.
 * verify: 0, or -EBADMSG when the signature does not verify. */
int sr_trust_sign(const struct sr_trust_key *k, const void *msg, size_t len,
                  unsigned char sig[SR_SIG_BYTES]);
int sr_trust_verify(const struct sr_trust_key *k, const void *msg, size_t len,
                    const unsigned char sig[SR_SIG_BYTES]);

/* Keys trusted per tier (skillrun.conf `trust-key TIER PATH`); a key of
 * the tenant tier is trusted for one tenant (`trust-key tenant:ID PATH`). */
struct sr_keyring_entry {
  int tier;
  char tenant[65]; /* SR_TIER_TENANT: the tenant it vouches for; else "" */
  struct sr_trust_key *key;
};
struct sr_keyring {
  struct sr_keyring_entry *v;
  size_t n;
};
/* Takes ownership of key on success.  tenant: a valid id for
 * SR_TIER_TENANT (required), NULL for every other tier (-EINVAL else). */
int sr_keyring_add(struct sr_keyring *kr, int tier, const char *tenant,
                   struct sr_trust_key *key);
void sr_keyring_done(struct sr_keyring *kr);
#define _cleanup_keyring_ _cleanup_(sr_keyring_done)

/* Base64 (RFC 4648 section 4, padded) or base64url (section 5, no
 * padding).  Encode: out needs 4*ceil(n/3)+1 bytes; returns the length.
 * Decode is strict (alphabet, padding, no blanks): 0 or -EINVAL/-ENOBUFS. */
size_t sr_base64_encode(const unsigned char *in, size_t n, bool url, char *out);
int sr_base64_decode(const char *in, size_t n, bool url, unsigned char *out,
                     size_t max, size_t *got);

/* "YYYY-MM-DDTHH:MM:SSZ" <-> seconds since the epoch (strict). */
int sr_parse_rfc3339_seconds(const char *s, size_t n, int64_t *out);
void sr_format_rfc3339_seconds(int64_t t, char buf[21]);

/* ---------------------------------------------------------- statements */

/*
 * The signed statement file (--signature FILE, or BUNDLE.sig), exactly:
 *   skillrun-statement/1\n
 *   name: NAME\n
 *   version: VERSION\n
 *   digest: sha256:HEX64\n
 *   tier: official|verified|community|tenant\n
 *   tenant: ID\n                 (tier tenant only, and always there)
 *   key-id: HEX16\n
 *   time: YYYY-MM-DDTHH:MM:SSZ\n
 *   signature: BASE64(64-byte Ed25519 signature)\n
 * The signature covers every byte before "signature: ".
 */
#define SR_STATEMENT_MAGIC "skillrun-statement/1"
#define SR_STATEMENT_MAX_BYTES 4096
#define SR_STATEMENT_NAME_MAX 256
#define SR_STATEMENT_VERSION_MAX 128

struct sr_statement {
  char name[SR_STATEMENT_NAME_MAX + 1];
  char version[SR_STATEMENT_VERSION_MAX + 1];
  char digest[72];
  int tier;
  char tenant[65]; /* tier tenant: the tenant it is published for; else "" */
  char key_id[SR_KEY_ID_LEN + 1];
  char time[21];
  int64_t time_s;
  size_t signed_len; /* bytes covered by the signature */
  unsigned char sig[SR_SIG_BYTES];
};

/* Strict parser.  Errors: exit 123, reason "statement_invalid", message
 * "statement:LINE: what is wrong".  *out is untouched on failure. */
int sr_statement_parse(const char *buf, size_t len, struct sr_statement *out,
                       struct sr_error *err);

/*
 * Checks a parsed statement (buf is the text it was parsed from) against
 * the keyring, the allowed tiers (bit mask of 1u << tier), the run's
 * tenant and the bundle.  Each refusal is exit 123 with its own reason:
 * unknown_key, tier_key_mismatch (the key is trusted, but not for this
 * tier, or for tier tenant not for the statement's tenant),
 * signature_invalid, tier_not_allowed, tenant_mismatch (a tenant-tier
 * statement run for another tenant), digest_mismatch, name_mismatch,
 * version_mismatch.  version NULL (the manifest has none) never matches.
 */
int sr_statement_verify(const struct sr_statement *st, const char *buf,
                        const struct sr_keyring *kr, unsigned tiers_allowed,
                        const char *tenant, const char *digest,
                        const char *name, const char *version,
                        struct sr_error *err);

/* Writes a signed statement file's text (malloc'd, NUL-terminated).
 * tenant: required for SR_TIER_TENANT, NULL for the other tiers. */
int sr_statement_sign(const struct sr_trust_key *k, int tier,
                      const char *tenant, const char *name, const char *version,
                      const char *digest, int64_t now, char **out, size_t *len,
                      struct sr_error *err);

/* -------------------------------------------------------- capabilities */

/*
 * An execution capability: base64url(PAYLOAD) "." base64url(SIGNATURE),
 * optionally followed by one '\n'.  PAYLOAD, exactly:
 *   skillrun-capability/1\n
 *   tenant: ID\n
 *   execution: ID\n
 *   digest: sha256:HEX64\n
 *   network: deny|allow|allowlist[ ENTRY...]\n
 *   issued: UNIX-SECONDS\n
 *   expires: UNIX-SECONDS\n
 *   placement: ID\n              (optional: the host it may run on)
 * SIGNATURE is Ed25519 over the PAYLOAD bytes with the control-plane key.
 */
#define SR_CAPABILITY_MAGIC "skillrun-capability/1"
#define SR_CAPABILITY_MAX_BYTES 2048
#define SR_CAPABILITY_MAX_LIFETIME 120 /* seconds from issued to expires */
#define SR_CAPABILITY_SKEW 15          /* clock-skew tolerance, seconds */

/* A capability's network field: the widest network the run may have.
 * `allow` (host) narrows nothing, as before the allowlist existed;
 * `allowlist` narrows host to allowlist, and with entries (names, as in
 * SKILL.md's sandbox.network-allow) narrows the effective list too. */
enum sr_capability_network {
  SR_CAP_NET_DENY = 0,
  SR_CAP_NET_ALLOW,
  SR_CAP_NET_ALLOWLIST,
};

struct sr_capability {
  char tenant[65];
  char execution[65];
  char digest[72];
  enum sr_capability_network network;
  /* SR_CAP_NET_ALLOWLIST: the entries after the word (each after one
   * blank, none empty, printable ASCII, unchecked here: the policy parses
   * them), or "". */
  char network_allow[1024];
  char placement[65]; /* "" when the token names none */
  int64_t issued, expires;
  char payload[1024];
  size_t payload_len;
  unsigned char sig[SR_SIG_BYTES];
};

/* Strict parser: exit 123, reason "capability_invalid". */
int sr_capability_parse(const char *buf, size_t len, struct sr_capability *out,
                        struct sr_error *err);
/* What a token must match on this host, for this run. */
struct sr_capability_scope {
  const char *tenant;
  const char *execution;
  const char *placement;  /* skillrun.conf placement-id; NULL: none */
  bool require_placement; /* skillrun.conf require-placement yes */
  int64_t now;
};
/*
 * Everything known before the bundle is hashed: signature
 * (capability_signature), expiry with SR_CAPABILITY_SKEW
 * (capability_expired), issue time in the future (capability_not_yet_valid),
 * lifetime over SR_CAPABILITY_MAX_LIFETIME (capability_lifetime), tenant
 * (capability_tenant), execution id (capability_execution) and placement
 * (capability_placement: the token names another placement, or one this
 * host does not have, or none where one is required).
 */
int sr_capability_check(const struct sr_capability *c,
                        const struct sr_trust_key *key,
                        const struct sr_capability_scope *want,
                        struct sr_error *err);
/* The bundle digest, once known (capability_digest). */
int sr_capability_check_digest(const struct sr_capability *c,
                               const char *digest, struct sr_error *err);
/* Makes a token (tests, and orchestrators linking the library);
 * placement NULL: a token without a placement line. */
int sr_capability_mint(const struct sr_trust_key *k, const char *tenant,
                       const char *execution, const char *placement,
                       const char *digest, enum sr_capability_network network,
                       const char *network_allow, int64_t issued,
                       int64_t expires, char **out, struct sr_error *err);
