/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The low-level functions are the point of this file (see sha256.h). */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "fdutil.h"
#include "sha256.h"
#include "util.h"

#if defined(OPENSSL_NO_DEPRECATED_3_0) || defined(SR_SHA256_FORCE_EVP)
#define SR_SHA256_USE_EVP 1
#else
#define SR_SHA256_USE_EVP 0
_Static_assert(sizeof(SHA256_CTX) <= sizeof(((struct sr_sha256 *)0)->state),
               "struct sr_sha256 is too small for SHA256_CTX");
#endif

const char *sr_sha256_backend(void) {
  return SR_SHA256_USE_EVP ? "evp" : "lowlevel";
}

void sr_sha256_done(struct sr_sha256 *h) {
#if SR_SHA256_USE_EVP
  EVP_MD_CTX_free(h->evp); /* NULL-safe */
#endif
  h->evp = NULL;
}

int sr_sha256_init(struct sr_sha256 *h) {
  memset(h, 0, sizeof(*h));
#if SR_SHA256_USE_EVP
  /* Before the first fetch: hashing must not depend on openssl.cnf or
   * $OPENSSL_CONF (nor pay for reading it). */
  if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
    return -EIO;
  h->evp = EVP_MD_CTX_new();
  if (!h->evp)
    return -ENOMEM;
  if (EVP_DigestInit_ex(h->evp, EVP_sha256(), NULL) != 1) {
    sr_sha256_done(h);
    return -EIO;
  }
  return 0;
#else
  return SHA256_Init((SHA256_CTX *)h->state.bytes) == 1 ? 0 : -EIO;
#endif
}

int sr_sha256_update(struct sr_sha256 *h, const void *data, size_t len) {
#if SR_SHA256_USE_EVP
  if (!h->evp)
    return -EINVAL;
  if (EVP_DigestUpdate(h->evp, data, len) != 1) {
    sr_sha256_done(h);
    return -EIO;
  }
  return 0;
#else
  return SHA256_Update((SHA256_CTX *)h->state.bytes, data, len) == 1 ? 0 : -EIO;
#endif
}

int sr_sha256_final(struct sr_sha256 *h, unsigned char out[SR_SHA256_LEN]) {
#if SR_SHA256_USE_EVP
  unsigned int n = 0;
  int r = 0;

  if (!h->evp)
    return -EINVAL;
  if (EVP_DigestFinal_ex(h->evp, out, &n) != 1 || n != SR_SHA256_LEN)
    r = -EIO;
  sr_sha256_done(h);
  return r;
#else
  int ok = SHA256_Final(out, (SHA256_CTX *)h->state.bytes);
  /* The state held message-derived words; do not leave them around. */
  memset(&h->state, 0, sizeof(h->state));
  return ok == 1 ? 0 : -EIO;
#endif
}

int sr_sha256(const void *data, size_t len, unsigned char out[SR_SHA256_LEN]) {
  struct sr_sha256 h;
  int r = sr_sha256_init(&h);

  if (r == 0)
    r = sr_sha256_update(&h, data, len);
  if (r == 0)
    r = sr_sha256_final(&h, out);
  return r;
}

int sr_sha256_hex(const void *data, size_t len,
                  char out[SR_SHA256_HEX_LEN + 1]) {
  unsigned char md[SR_SHA256_LEN];
  int r = sr_sha256(data, len, md);

  if (r == 0)
    sr_hex(md, sizeof(md), out);
  return r;
}

static int copy_failed(enum sr_sha256_copy_step *ret_step,
                       enum sr_sha256_copy_step step, int r) {
  if (ret_step)
    *ret_step = step;
  return r;
}

int sr_sha256_copy(int in_fd, int out_fd, uint64_t max, void *keep,
                   uint64_t *ret_size, unsigned char out[SR_SHA256_LEN],
                   enum sr_sha256_copy_step *ret_step) {
  _cleanup_sha256_ struct sr_sha256 h = {0};
  _cleanup_free_ unsigned char *buf = NULL;
  /* One byte more than max, so that a longer file shows in the first read
   * that goes past it. */
  size_t len =
      max < SR_SHA256_COPY_CHUNK ? (size_t)max + 1 : SR_SHA256_COPY_CHUNK;
  uint64_t total = 0;
  int r;

  buf = malloc(len);
  if (!buf)
    return copy_failed(ret_step, SR_SHA256_COPY_READ, -ENOMEM);
  r = sr_sha256_init(&h);
  if (r < 0)
    return copy_failed(ret_step, SR_SHA256_COPY_HASH, r);
  for (;;) {
    ssize_t n;

    /* A long copy (a 256 MiB bundle) must not hold up a cancelled run. */
    if (sr_cancel_pending())
      return copy_failed(ret_step, SR_SHA256_COPY_READ, -ECANCELED);
    n = read(in_fd, buf, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return copy_failed(ret_step, SR_SHA256_COPY_READ, -errno);
    if (n == 0)
      break;
    if ((uint64_t)n > max - total)
      return copy_failed(ret_step, SR_SHA256_COPY_READ, -EFBIG);
    r = sr_sha256_update(&h, buf, (size_t)n);
    if (r < 0)
      return copy_failed(ret_step, SR_SHA256_COPY_HASH, r);
    if (out_fd >= 0) {
      r = sr_write_all(out_fd, buf, (size_t)n);
      if (r < 0)
        return copy_failed(ret_step, SR_SHA256_COPY_WRITE, r);
    }
    if (keep)
      memcpy((unsigned char *)keep + total, buf, (size_t)n);
    total += (uint64_t)n;
  }
  r = sr_sha256_final(&h, out);
  if (r < 0)
    return copy_failed(ret_step, SR_SHA256_COPY_HASH, r);
  *ret_size = total;
  return 0;
}
