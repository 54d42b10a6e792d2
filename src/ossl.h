/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "dlib.h"
#include "error.h"

/*
 * OpenSSL's libcrypto, opened with dlopen(3) the first time a key is needed
 * (signed bundles, execution capabilities, signed audit anchors: trust.c).
 *
 * A run without keys hashes and nothing else, and SHA-256 is linked in from
 * libcrypto.a where it can be (configure --enable-static-sha256, the default
 * when the archive and the low-level SHA-256 API exist; see sha256.h).  The
 * shared libcrypto is 4.5 MB with ~3,500 symbol and ~18,000 relative
 * relocations: mapping, relocating and later forking and unmapping it cost
 * about 1.7 ms of a 9 ms sandboxed run of /bin/true on the reference machine
 * (bench/README.md), for functions such a run never calls.
 *
 * The library is opened as dlib.h describes; its configuration file is never
 * read (OPENSSL_INIT_NO_LOAD_CONFIG).
 */

#define SR_OSSL_FUNCTIONS(X)                                                   \
  X(OPENSSL_init_crypto)                                                       \
  X(OpenSSL_version)                                                           \
  X(CRYPTO_free)                                                               \
  X(BIO_new_mem_buf)                                                           \
  X(BIO_free)                                                                  \
  X(PEM_read_bio_PrivateKey)                                                   \
  X(PEM_read_bio_PUBKEY)                                                       \
  X(EVP_PKEY_is_a)                                                             \
  X(EVP_PKEY_free)                                                             \
  X(EVP_PKEY_get_raw_private_key)                                              \
  X(EVP_PKEY_new_raw_private_key)                                              \
  X(i2d_PUBKEY)                                                                \
  X(EVP_MD_CTX_new)                                                            \
  X(EVP_MD_CTX_free)                                                           \
  X(EVP_DigestSignInit)                                                        \
  X(EVP_DigestSign)                                                            \
  X(EVP_DigestVerifyInit)                                                      \
  X(EVP_DigestVerify)

struct sr_ossl {
  SR_OSSL_FUNCTIONS(SR_DLIB_MEMBER)
};

/* Filled in by sr_ossl_load; read only after it returned 0. */
extern struct sr_ossl sr_ossl;

/* Opens the library (once; later calls return at once).  Failure: exit 125,
 * reason "library_unavailable", naming the library and what dlopen said. */
int sr_ossl_load(struct sr_error *err);
