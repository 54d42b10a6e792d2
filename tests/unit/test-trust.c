/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "trust.h"

#define DIGEST                                                                 \
  "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NOW INT64_C(1769752625)

/* A fresh Ed25519 key pair as PEM (private) and a public-only key. */
static void make_key(struct sr_trust_key **priv, struct sr_trust_key **pub) {
  struct sr_error err = {0};
  EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  BIO *b1 = BIO_new(BIO_s_mem()), *b2 = BIO_new(BIO_s_mem());
  char *p1, *p2;
  long n1, n2;

  assert_non_null(k);
  assert_int_equal(PEM_write_bio_PrivateKey(b1, k, NULL, NULL, 0, NULL, NULL),
                   1);
  assert_int_equal(PEM_write_bio_PUBKEY(b2, k), 1);
  n1 = BIO_get_mem_data(b1, &p1);
  n2 = BIO_get_mem_data(b2, &p2);
  assert_int_equal(sr_trust_key_from_pem(p1, (size_t)n1, true, "k", priv, &err),
                   0);
  assert_int_equal(sr_trust_key_from_pem(p2, (size_t)n2, false, "k", pub, &err),
                   0);
  /* The public half has the same id, whichever half was loaded. */
  assert_string_equal(sr_trust_key_id(*priv), sr_trust_key_id(*pub));
  /* A public key is not a private key. */
  {
    struct sr_trust_key *x = NULL;
    assert_true(sr_trust_key_from_pem(p2, (size_t)n2, true, "k", &x, &err) < 0);
    assert_string_equal(err.reason, "key_invalid");
  }
  BIO_free(b1);
  BIO_free(b2);
  EVP_PKEY_free(k);
}

static void test_tier_names(void **state) {
  (void)state;
  assert_int_equal(sr_tier_from_name("official"), SR_TIER_OFFICIAL);
  assert_int_equal(sr_tier_from_name("tenant"), SR_TIER_TENANT);
  assert_int_equal(sr_tier_from_name("unsigned"), -EINVAL);
  assert_int_equal(sr_tier_from_name("Official"), -EINVAL);
  assert_string_equal(sr_tier_name(SR_TIER_UNSIGNED), "unsigned");
  assert_null(sr_tier_name(-1));
  assert_null(sr_tier_name(SR_TIER_UNSIGNED + 1));
}

static void test_base64(void **state) {
  const unsigned char in[] = "\xfb\xff\x01hello";
  unsigned char out[32];
  char enc[32];
  size_t got = 0;
  (void)state;

  assert_int_equal(sr_base64_encode(in, 3, false, enc), 4);
  assert_string_equal(enc, "+/8B");
  assert_int_equal(sr_base64_encode(in, 3, true, enc), 4);
  assert_string_equal(enc, "-_8B");
  sr_base64_encode((const unsigned char *)"ab", 2, false, enc);
  assert_string_equal(enc, "YWI=");
  sr_base64_encode((const unsigned char *)"ab", 2, true, enc);
  assert_string_equal(enc, "YWI");
  assert_int_equal(sr_base64_decode("YWI=", 4, false, out, sizeof(out), &got),
                   0);
  assert_int_equal(got, 2);
  assert_memory_equal(out, "ab", 2);
  assert_int_equal(sr_base64_decode("YWI", 3, true, out, sizeof(out), &got), 0);
  assert_int_equal(got, 2);
  /* Strict: no padding in url form, no missing padding, no stray bits,
   * no foreign characters, no blanks. */
  assert_int_equal(sr_base64_decode("YWI=", 4, true, out, 32, &got), -EINVAL);
  assert_int_equal(sr_base64_decode("YWI", 3, false, out, 32, &got), -EINVAL);
  assert_int_equal(sr_base64_decode("YWJ=", 4, false, out, 32, &got), -EINVAL);
  assert_int_equal(sr_base64_decode("Y WI", 4, false, out, 32, &got), -EINVAL);
  assert_int_equal(sr_base64_decode("-_8B", 4, false, out, 32, &got), -EINVAL);
  assert_int_equal(sr_base64_decode("YWJj", 4, false, out, 2, &got), -ENOBUFS);
}

static void test_time(void **state) {
  int64_t t = 0;
  char buf[21];
  (void)state;

  assert_int_equal(sr_parse_rfc3339_seconds("1970-01-01T00:00:00Z", 20, &t), 0);
  assert_int_equal(t, 0);
  assert_int_equal(sr_parse_rfc3339_seconds("2024-02-29T23:59:59Z", 20, &t), 0);
  assert_int_equal(t, 1709251199);
  sr_format_rfc3339_seconds(t, buf);
  assert_string_equal(buf, "2024-02-29T23:59:59Z");
  sr_format_rfc3339_seconds(NOW, buf);
  assert_int_equal(sr_parse_rfc3339_seconds(buf, 20, &t), 0);
  assert_int_equal(t, NOW);
  assert_int_equal(sr_parse_rfc3339_seconds("2023-02-29T00:00:00Z", 20, &t),
                   -EINVAL);
  assert_int_equal(sr_parse_rfc3339_seconds("2024-01-01T24:00:00Z", 20, &t),
                   -EINVAL);
  assert_int_equal(sr_parse_rfc3339_seconds("2024-01-01 00:00:00Z", 20, &t),
                   -EINVAL);
}

static void test_sign_and_verify(void **state) {
  struct sr_trust_key *priv = NULL, *pub = NULL, *cpriv = NULL, *cpub = NULL;
  struct sr_keyring kr = {0};
  struct sr_statement st;
  struct sr_error err = {0};
  char *text = NULL;
  size_t len = 0;
  (void)state;

  make_key(&priv, &pub);
  make_key(&cpriv, &cpub);
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_OFFICIAL, NULL, pub), 0);
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_COMMUNITY, NULL, cpub), 0);

  assert_int_equal(sr_statement_sign(priv, SR_TIER_OFFICIAL, NULL, "hello",
                                     "1.0", DIGEST, NOW, &text, &len, &err),
                   0);
  assert_non_null(strstr(text, "skillrun-statement/1\nname: hello\n"));
  assert_non_null(strstr(text, "\ntime: 2026-01-30T05:57:05Z\nsignature: "));
  assert_int_equal(sr_statement_parse(text, len, &st, &err), 0);
  assert_int_equal(st.tier, SR_TIER_OFFICIAL);
  assert_string_equal(st.key_id, sr_trust_key_id(priv));
  assert_int_equal(st.time_s, NOW);

#define VERIFY(tiers, d, n, v)                                                 \
  (memset(&err, 0, sizeof(err)),                                               \
   sr_statement_verify(&st, text, &kr, tiers, "acme", d, n, v, &err))
  assert_int_equal(VERIFY(SR_TIERS_ALL, DIGEST, "hello", "1.0"), 0);
  assert_true(VERIFY(1u << SR_TIER_COMMUNITY, DIGEST, "hello", "1.0") < 0);
  assert_string_equal(err.reason, "tier_not_allowed");
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_true(VERIFY(SR_TIERS_ALL, DIGEST "0", "hello", "1.0") < 0);
  assert_string_equal(err.reason, "digest_mismatch");
  assert_true(VERIFY(SR_TIERS_ALL, DIGEST, "hellp", "1.0") < 0);
  assert_string_equal(err.reason, "name_mismatch");
  assert_true(VERIFY(SR_TIERS_ALL, DIGEST, "hello", NULL) < 0);
  assert_string_equal(err.reason, "version_mismatch");

  /* A flipped byte in the signed text. */
  text[30] ^= 1;
  assert_true(VERIFY(SR_TIERS_ALL, DIGEST, "hello", "1.0") < 0);
  assert_string_equal(err.reason, "signature_invalid");
  free(text);

  /* A community key vouching for official. */
  assert_int_equal(sr_statement_sign(cpriv, SR_TIER_OFFICIAL, NULL, "hello",
                                     "1.0", DIGEST, NOW, &text, &len, &err),
                   0);
  assert_int_equal(sr_statement_parse(text, len, &st, &err), 0);
  assert_true(VERIFY(SR_TIERS_ALL, DIGEST, "hello", "1.0") < 0);
  assert_string_equal(err.reason, "tier_key_mismatch");
  free(text);
  /* No version: cannot sign. */
  assert_true(sr_statement_sign(priv, SR_TIER_OFFICIAL, NULL, "hello", NULL,
                                DIGEST, NOW, &text, &len, &err) < 0);
  /* An empty keyring knows no key. */
  {
    struct sr_keyring empty = {0};
    assert_int_equal(sr_statement_sign(priv, SR_TIER_OFFICIAL, NULL, "hello",
                                       "1.0", DIGEST, NOW, &text, &len, &err),
                     0);
    assert_int_equal(sr_statement_parse(text, len, &st, &err), 0);
    memset(&err, 0, sizeof(err));
    assert_true(sr_statement_verify(&st, text, &empty, SR_TIERS_ALL, "acme",
                                    DIGEST, "hello", "1.0", &err) < 0);
    assert_string_equal(err.reason, "unknown_key");
    free(text);
  }
  sr_keyring_done(&kr);
  sr_trust_key_free(priv);
  sr_trust_key_free(cpriv);
}

/* A tenant's key vouches for that tenant's bundles, run for that tenant. */
static void test_tenant_tier(void **state) {
  struct sr_trust_key *apriv = NULL, *apub = NULL, *gpriv = NULL, *gpub = NULL;
  struct sr_keyring kr = {0};
  struct sr_statement st;
  struct sr_error err = {0};
  char *text = NULL;
  size_t len = 0;
  (void)state;

  make_key(&apriv, &apub);
  make_key(&gpriv, &gpub);
  /* A tenant key needs its tenant; no other tier's key has one. */
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_TENANT, NULL, apub), -EINVAL);
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_TENANT, "a/b", apub), -EINVAL);
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_OFFICIAL, "acme", apub),
                   -EINVAL);
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_TENANT, "acme", apub), 0);
  assert_int_equal(sr_keyring_add(&kr, SR_TIER_TENANT, "globex", gpub), 0);

  /* Signing: the tenant tier needs a tenant, the others refuse one. */
  assert_true(sr_statement_sign(apriv, SR_TIER_TENANT, NULL, "hello", "1.0",
                                DIGEST, NOW, &text, &len, &err) < 0);
  assert_true(sr_statement_sign(apriv, SR_TIER_OFFICIAL, "acme", "hello", "1.0",
                                DIGEST, NOW, &text, &len, &err) < 0);
  assert_int_equal(sr_statement_sign(apriv, SR_TIER_TENANT, "acme", "hello",
                                     "1.0", DIGEST, NOW, &text, &len, &err),
                   0);
  assert_non_null(strstr(text, "\ntier: tenant\ntenant: acme\nkey-id: "));
  assert_int_equal(sr_statement_parse(text, len, &st, &err), 0);
  assert_string_equal(st.tenant, "acme");

#define TVERIFY(tenant)                                                        \
  (memset(&err, 0, sizeof(err)),                                               \
   sr_statement_verify(&st, text, &kr, SR_TIERS_ALL, tenant, DIGEST, "hello",  \
                       "1.0", &err))
  assert_int_equal(TVERIFY("acme"), 0);
  assert_true(TVERIFY("globex") < 0);
  assert_string_equal(err.reason, "tenant_mismatch");
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_true(TVERIFY(NULL) < 0);
  assert_string_equal(err.reason, "tenant_mismatch");
  free(text);

  /* acme's key signing a statement that claims globex. */
  assert_int_equal(sr_statement_sign(apriv, SR_TIER_TENANT, "globex", "hello",
                                     "1.0", DIGEST, NOW, &text, &len, &err),
                   0);
  assert_int_equal(sr_statement_parse(text, len, &st, &err), 0);
  assert_true(TVERIFY("globex") < 0);
  assert_string_equal(err.reason, "tier_key_mismatch");
  assert_non_null(strstr(err.msg, "tenant acme"));
  free(text);
  /* globex's own key for globex's bundle. */
  assert_int_equal(sr_statement_sign(gpriv, SR_TIER_TENANT, "globex", "hello",
                                     "1.0", DIGEST, NOW, &text, &len, &err),
                   0);
  assert_int_equal(sr_statement_parse(text, len, &st, &err), 0);
  assert_int_equal(TVERIFY("globex"), 0);
  assert_true(TVERIFY("acme") < 0);
  assert_string_equal(err.reason, "tenant_mismatch");
  free(text);
  sr_keyring_done(&kr);
  sr_trust_key_free(apriv);
  sr_trust_key_free(gpriv);
}

static void test_statement_parser_rejects(void **state) {
  static const char good[] =
      "skillrun-statement/1\nname: a\nversion: 1\ndigest: " DIGEST
      "\ntier: tenant\ntenant: acme\nkey-id: 0123456789abcdef\n"
      "time: 2026-01-01T00:00:00Z\n"
      "signature: "
      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
      "AAAAAAAAAAAAAAAA==\n";
  static const struct {
    const char *from, *to;
  } bad[] = {
      {"skillrun-statement/1", "skillrun-statement/2"},
      {"name: a\n", "name: a b\n"},
      {"name: a\n", "name:a\n"},
      {"version: 1\n", "version: \n"},
      {"tier: tenant", "tier: unsigned"},
      {"key-id: 0123456789abcdef", "key-id: 0123456789ABCDEF"},
      {"time: 2026-01-01T00:00:00Z", "time: 2026-01-01T00:00:00+00:00"},
      {"==\n", "=\n"},
      {"==\n", "==\nextra\n"},
      {"==\n", "=="},
      {"\ntier: tenant\ntenant: acme\nkey-id", "\nkey-id"},
      /* The tenant tier names its tenant, a valid id; no other tier does. */
      {"tenant: acme\n", ""},
      {"tenant: acme\n", "tenant: \n"},
      {"tenant: acme\n", "tenant: ../x\n"},
      {"tenant: acme\n", "tenant:acme\n"},
      {"tier: tenant", "tier: official"},
      {"tier: tenant\ntenant: acme\n", "tier: tenant\ntenant: acme\n"
                                       "tenant: acme\n"},
  };
  struct sr_statement st;
  struct sr_error err = {0};
  (void)state;

  assert_int_equal(sr_statement_parse(good, strlen(good), &st, &err), 0);
  assert_int_equal(st.signed_len, strlen(good) - strlen("signature: ") - 89);
  assert_int_equal(st.tier, SR_TIER_TENANT);
  assert_string_equal(st.tenant, "acme");
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char buf[1024];
    const char *at = strstr(good, bad[i].from);
    assert_non_null(at);
    snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - good), good, bad[i].to,
             at + strlen(bad[i].from));
    memset(&err, 0, sizeof(err));
    if (sr_statement_parse(buf, strlen(buf), &st, &err) == 0)
      fail_msg("accepted: %s", buf);
    assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
    assert_string_equal(err.reason, "statement_invalid");
    assert_non_null(strstr(err.msg, "statement:"));
  }
  /* A NUL byte in a value: the C string read from it would be a prefix of
   * what was signed ("acme" for "acme\0globex", "tenant" for the tier). */
  for (size_t i = 0; i < 2; i++) {
    static const char *const at[] = {"tenant: acme", "tier: tenant"};
    const char *p = strstr(good, at[i]) + strlen(at[i]);
    char buf[1024];
    size_t n = (size_t)(p - good);

    memcpy(buf, good, n);
    memcpy(buf + n, "\0globex", 7);
    memcpy(buf + n + 7, p, strlen(p));
    memset(&err, 0, sizeof(err));
    assert_true(sr_statement_parse(buf, strlen(good) + 7, &st, &err) < 0);
    assert_non_null(strstr(err.msg, "a NUL byte"));
  }
}

static void test_capability(void **state) {
  struct sr_trust_key *priv = NULL, *pub = NULL, *opriv = NULL, *opub = NULL;
  struct sr_capability cap;
  struct sr_error err = {0};
  char *tok = NULL;
  (void)state;

  make_key(&priv, &pub);
  make_key(&opriv, &opub);
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_DENY, NULL, NOW, NOW + 60,
                                      &tok, &err),
                   0);
  assert_non_null(strchr(tok, '.'));
  assert_int_equal(sr_capability_parse(tok, strlen(tok), &cap, &err), 0);
  assert_string_equal(cap.tenant, "acme");
  assert_string_equal(cap.execution, "run-1");
  assert_int_equal(cap.network, SR_CAP_NET_DENY);
  assert_string_equal(cap.network_allow, "");

#define CHECK_AT(key, t, e, when, place, req)                                  \
  (memset(&err, 0, sizeof(err)),                                               \
   sr_capability_check(&cap, key,                                              \
                       &(struct sr_capability_scope){                          \
                           .tenant = (t),                                      \
                           .execution = (e),                                   \
                           .placement = (place),                               \
                           .require_placement = (req),                         \
                           .now = (when),                                      \
                       },                                                      \
                       &err))
#define CHECK(key, t, e, now) CHECK_AT(key, t, e, now, NULL, false)
  assert_int_equal(CHECK(pub, "acme", "run-1", NOW), 0);
  /* 15 seconds of skew either way, not 16. */
  assert_int_equal(CHECK(pub, "acme", "run-1", NOW + 75), 0);
  assert_true(CHECK(pub, "acme", "run-1", NOW + 76) < 0);
  assert_string_equal(err.reason, "capability_expired");
  assert_int_equal(CHECK(pub, "acme", "run-1", NOW - 15), 0);
  assert_true(CHECK(pub, "acme", "run-1", NOW - 16) < 0);
  assert_string_equal(err.reason, "capability_not_yet_valid");
  assert_true(CHECK(pub, "acmf", "run-1", NOW) < 0);
  assert_string_equal(err.reason, "capability_tenant");
  assert_true(CHECK(pub, "acme", "run-2", NOW) < 0);
  assert_string_equal(err.reason, "capability_execution");
  assert_true(CHECK(opub, "acme", "run-1", NOW) < 0);
  assert_string_equal(err.reason, "capability_signature");
  assert_int_equal(sr_capability_check_digest(&cap, DIGEST, &err), 0);
  memset(&err, 0, sizeof(err));
  assert_true(sr_capability_check_digest(&cap, DIGEST "x", &err) < 0);
  assert_string_equal(err.reason, "capability_digest");

  /* A flipped payload byte breaks the signature. */
  cap.payload[30] ^= 1;
  assert_true(CHECK(pub, "acme", "run-1", NOW) < 0);
  assert_string_equal(err.reason, "capability_signature");
  free(tok);

  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_ALLOW, NULL, NOW, NOW + 121,
                                      &tok, &err),
                   0);
  assert_int_equal(sr_capability_parse(tok, strlen(tok), &cap, &err), 0);
  assert_int_equal(cap.network, SR_CAP_NET_ALLOW);
  assert_true(CHECK(pub, "acme", "run-1", NOW) < 0);
  assert_string_equal(err.reason, "capability_lifetime");
  free(tok);

  /* network: allowlist, bare and with entries (kept as text for the
   * policy, which parses them). */
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_ALLOWLIST, NULL, NOW, NOW + 60,
                                      &tok, &err),
                   0);
  assert_int_equal(sr_capability_parse(tok, strlen(tok), &cap, &err), 0);
  assert_int_equal(cap.network, SR_CAP_NET_ALLOWLIST);
  assert_string_equal(cap.network_allow, "");
  assert_int_equal(CHECK(pub, "acme", "run-1", NOW), 0);
  free(tok);
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_ALLOWLIST,
                                      "api.example.com *.pypi.org:443", NOW,
                                      NOW + 60, &tok, &err),
                   0);
  assert_int_equal(sr_capability_parse(tok, strlen(tok), &cap, &err), 0);
  assert_int_equal(cap.network, SR_CAP_NET_ALLOWLIST);
  assert_string_equal(cap.network_allow, "api.example.com *.pypi.org:443");
  assert_int_equal(CHECK(pub, "acme", "run-1", NOW), 0);
  free(tok);
  /* "allowlisted" is not a mode; a control character is not an entry. */
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_ALLOWLIST, "a\tb", NOW,
                                      NOW + 60, &tok, &err),
                   0);
  memset(&err, 0, sizeof(err));
  assert_true(sr_capability_parse(tok, strlen(tok), &cap, &err) < 0);
  assert_non_null(strstr(err.msg, "printable ASCII"));
  free(tok);
  /* A blank that separates no two entries has no meaning: refused. */
  for (size_t i = 0; i < 3; i++) {
    static const char *const blanks[] = {" ", "a.test  b.test", "a.test "};
    assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                        SR_CAP_NET_ALLOWLIST, blanks[i], NOW,
                                        NOW + 60, &tok, &err),
                     0);
    memset(&err, 0, sizeof(err));
    assert_true(sr_capability_parse(tok, strlen(tok), &cap, &err) < 0);
    assert_non_null(strstr(err.msg, "separated by one blank"));
    free(tok);
  }

  /* Parser rejections. */
  memset(&err, 0, sizeof(err));
  assert_true(sr_capability_parse("abc", 3, &cap, &err) < 0);
  assert_string_equal(err.reason, "capability_invalid");
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_DENY, NULL, NOW + 5, NOW, &tok,
                                      &err),
                   0);
  memset(&err, 0, sizeof(err));
  assert_true(sr_capability_parse(tok, strlen(tok), &cap, &err) < 0);
  assert_non_null(strstr(err.msg, "expires must be after issued"));
  free(tok);
  assert_true(sr_capability_mint(priv, "a b", "run-1", NULL, DIGEST,
                                 SR_CAP_NET_DENY, NULL, NOW, NOW + 5, &tok,
                                 &err) == 0);
  assert_true(sr_capability_parse(tok, strlen(tok), &cap, &err) < 0);
  free(tok);
  /* "execution: run-1\0mine" is not execution run-1 (parsed before the
   * signature is checked: the signature here is zeros). */
  {
    static const char payload[] =
        "skillrun-capability/1\ntenant: acme\nexecution: run-1\0mine\n"
        "digest: " DIGEST "\nnetwork: deny\nissued: 1\nexpires: 2\n";
    char t[512];
    size_t n = sr_base64_encode((const unsigned char *)payload,
                                sizeof(payload) - 1, true, t);

    snprintf(t + n, sizeof(t) - n, ".%086d", 0);
    for (char *z = t + n + 1; *z; z++)
      *z = 'A';
    memset(&err, 0, sizeof(err));
    assert_true(sr_capability_parse(t, strlen(t), &cap, &err) < 0);
    assert_non_null(strstr(err.msg, "a NUL byte"));
  }

  /* Placement: a token bound to one host runs there only; a token without
   * one runs anywhere unless the host requires one. */
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", "worker-7", DIGEST,
                                      SR_CAP_NET_DENY, NULL, NOW, NOW + 60,
                                      &tok, &err),
                   0);
  assert_int_equal(sr_capability_parse(tok, strlen(tok), &cap, &err), 0);
  assert_string_equal(cap.placement, "worker-7");
  assert_true(memmem(cap.payload, cap.payload_len, "\nplacement: worker-7\n",
                     21) != NULL);
  assert_int_equal(CHECK_AT(pub, "acme", "run-1", NOW, "worker-7", false), 0);
  assert_int_equal(CHECK_AT(pub, "acme", "run-1", NOW, "worker-7", true), 0);
  assert_true(CHECK_AT(pub, "acme", "run-1", NOW, "worker-8", false) < 0);
  assert_string_equal(err.reason, "capability_placement");
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_true(CHECK_AT(pub, "acme", "run-1", NOW, NULL, false) < 0);
  assert_string_equal(err.reason, "capability_placement");
  free(tok);
  assert_int_equal(sr_capability_mint(priv, "acme", "run-1", NULL, DIGEST,
                                      SR_CAP_NET_DENY, NULL, NOW, NOW + 60,
                                      &tok, &err),
                   0);
  assert_int_equal(sr_capability_parse(tok, strlen(tok), &cap, &err), 0);
  assert_string_equal(cap.placement, "");
  assert_int_equal(CHECK_AT(pub, "acme", "run-1", NOW, "worker-7", false), 0);
  assert_true(CHECK_AT(pub, "acme", "run-1", NOW, "worker-7", true) < 0);
  assert_string_equal(err.reason, "capability_placement");
  free(tok);
  /* The placement line is strict: a valid id, last, once. */
  {
    static const char *const bad[] = {
        "placement: a b\n",
        "placement: ..\n",
        "placement: x\nplacement: x\n",
        "placement: x\nextra\n",
        "placement:x\n",
        "placement: x",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      char payload[512], p64[700], s64[100];
      unsigned char sig[SR_SIG_BYTES];
      char token[900];
      int n = snprintf(payload, sizeof(payload),
                       "skillrun-capability/1\ntenant: acme\nexecution: r\n"
                       "digest: " DIGEST "\nnetwork: deny\nissued: 1\n"
                       "expires: 2\n%s",
                       bad[i]);
      assert_int_equal(sr_trust_sign(priv, payload, (size_t)n, sig), 0);
      sr_base64_encode((const unsigned char *)payload, (size_t)n, true, p64);
      sr_base64_encode(sig, sizeof(sig), true, s64);
      snprintf(token, sizeof(token), "%s.%s", p64, s64);
      memset(&err, 0, sizeof(err));
      if (sr_capability_parse(token, strlen(token), &cap, &err) == 0)
        fail_msg("accepted: %s", bad[i]);
      assert_string_equal(err.reason, "capability_invalid");
    }
  }

  sr_trust_key_free(priv);
  sr_trust_key_free(pub);
  sr_trust_key_free(opriv);
  sr_trust_key_free(opub);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tier_names),
      cmocka_unit_test(test_base64),
      cmocka_unit_test(test_time),
      cmocka_unit_test(test_sign_and_verify),
      cmocka_unit_test(test_tenant_tier),
      cmocka_unit_test(test_statement_parser_rejects),
      cmocka_unit_test(test_capability),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("trust", tests, NULL, NULL);
}
