/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The low-level functions are the point of this file (see sha256.h). */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
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

/*
 * Read-ahead for a big file: a second thread reads the next chunks while
 * this one hashes (and copies) the last, so the copy out of the page cache
 * (a sixth of the time of hashing a cached file) overlaps the hash instead
 * of adding to it.  The reader stops at the end of the file, at an error,
 * once it has read more than max bytes, or when told to.
 */
#define AHEAD_SLOTS 4
#define AHEAD_CHUNK (256u * 1024u)
/* Below this a thread costs more than it saves. */
#define AHEAD_MIN (UINT64_C(8) * 1024 * 1024)

struct ahead {
  int fd;
  uint64_t max;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stop;
  bool full[AHEAD_SLOTS];
  ssize_t n[AHEAD_SLOTS];
  int err[AHEAD_SLOTS];
  unsigned char *buf; /* AHEAD_SLOTS * AHEAD_CHUNK */
};

static void *ahead_thread(void *arg) {
  struct ahead *a = arg;
  uint64_t total = 0;

  for (size_t s = 0;; s = (s + 1) % AHEAD_SLOTS) {
    ssize_t n;
    int e = 0;

    pthread_mutex_lock(&a->mu);
    while (a->full[s] && !a->stop)
      pthread_cond_wait(&a->cv, &a->mu);
    if (a->stop) {
      pthread_mutex_unlock(&a->mu);
      break;
    }
    pthread_mutex_unlock(&a->mu);
    do
      n = read(a->fd, a->buf + s * AHEAD_CHUNK, AHEAD_CHUNK);
    while (n < 0 && errno == EINTR);
    if (n < 0)
      e = errno;
    pthread_mutex_lock(&a->mu);
    a->n[s] = n;
    a->err[s] = e;
    a->full[s] = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    /* A short read is the end of a regular file (sr_sha256_copy_regular);
     * past max the consumer refuses the file anyway. */
    if (n < (ssize_t)AHEAD_CHUNK)
      break;
    total += (uint64_t)n;
    if (total > a->max)
      break;
  }
  return NULL;
}

static int ahead_copy(int in_fd, int out_fd, uint64_t max, void *keep,
                      struct sr_sha256 *h, uint64_t *ret_total,
                      enum sr_sha256_copy_step *ret_step) {
  struct ahead a = {.fd = in_fd,
                    .max = max,
                    .mu = PTHREAD_MUTEX_INITIALIZER,
                    .cv = PTHREAD_COND_INITIALIZER};
  enum sr_sha256_copy_step step = SR_SHA256_COPY_READ;
  uint64_t total = 0;
  pthread_t tid;
  int r = 0;

  a.buf = malloc((size_t)AHEAD_SLOTS * AHEAD_CHUNK);
  if (!a.buf)
    return copy_failed(ret_step, SR_SHA256_COPY_READ, -ENOMEM);
  r = -pthread_create(&tid, NULL, ahead_thread, &a);
  if (r < 0) {
    free(a.buf);
    return copy_failed(ret_step, SR_SHA256_COPY_READ, r);
  }
  for (size_t s = 0;; s = (s + 1) % AHEAD_SLOTS) {
    const unsigned char *buf = a.buf + s * AHEAD_CHUNK;
    ssize_t n;

    if (sr_cancel_poll()) {
      r = -ECANCELED;
      break;
    }
    pthread_mutex_lock(&a.mu);
    while (!a.full[s])
      pthread_cond_wait(&a.cv, &a.mu);
    n = a.n[s];
    pthread_mutex_unlock(&a.mu);
    if (n < 0) {
      r = -a.err[s];
      break;
    }
    if (n == 0)
      break;
    if ((uint64_t)n > max - total) {
      r = -EFBIG;
      break;
    }
    r = sr_sha256_update(h, buf, (size_t)n);
    if (r < 0) {
      step = SR_SHA256_COPY_HASH;
      break;
    }
    if (out_fd >= 0) {
      r = sr_write_all(out_fd, buf, (size_t)n);
      if (r < 0) {
        step = SR_SHA256_COPY_WRITE;
        break;
      }
    }
    if (keep)
      memcpy((unsigned char *)keep + total, buf, (size_t)n);
    total += (uint64_t)n;
    if (n < (ssize_t)AHEAD_CHUNK)
      break;
    pthread_mutex_lock(&a.mu);
    a.full[s] = false;
    pthread_cond_broadcast(&a.cv);
    pthread_mutex_unlock(&a.mu);
  }
  pthread_mutex_lock(&a.mu);
  a.stop = true;
  pthread_cond_broadcast(&a.cv);
  pthread_mutex_unlock(&a.mu);
  /* Fails only for a thread that is not joinable: never ours. */
  if (pthread_join(tid, NULL) != 0)
    abort();
  free(a.buf);
  if (r < 0)
    return copy_failed(ret_step, step, r);
  *ret_total = total;
  return 0;
}

static int copy_impl(int in_fd, int out_fd, uint64_t max, void *keep,
                     bool short_read_ends, uint64_t *ret_size,
                     unsigned char out[SR_SHA256_LEN],
                     enum sr_sha256_copy_step *ret_step) {
  _cleanup_sha256_ struct sr_sha256 h = {0};
  _cleanup_free_ unsigned char *buf = NULL;
  /* One byte more than max, so that a longer file shows in the first read
   * that goes past it. */
  size_t len =
      max < SR_SHA256_COPY_CHUNK ? (size_t)max + 1 : SR_SHA256_COPY_CHUNK;
  uint64_t total = 0;
  int r;

  r = sr_sha256_init(&h);
  if (r < 0)
    return copy_failed(ret_step, SR_SHA256_COPY_HASH, r);
  if (short_read_ends && max >= AHEAD_MIN) {
    r = ahead_copy(in_fd, out_fd, max, keep, &h, &total, ret_step);
    if (r < 0)
      return r;
    goto done;
  }
  buf = malloc(len);
  if (!buf)
    return copy_failed(ret_step, SR_SHA256_COPY_READ, -ENOMEM);
  for (;;) {
    ssize_t n;

    /* A long copy (a 256 MiB bundle) must not hold up a cancelled run;
     * sr_cancel_poll() asks the kernel at most once a millisecond, not once
     * per read of each of thousands of small files. */
    if (sr_cancel_poll())
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
    /* A regular file returns less than asked only at its end; the caller
     * checks the size again afterwards, so the read that would return 0
     * (one syscall per small file of a bundle) is not needed. */
    if (short_read_ends && (size_t)n < len)
      break;
  }
done:
  r = sr_sha256_final(&h, out);
  if (r < 0)
    return copy_failed(ret_step, SR_SHA256_COPY_HASH, r);
  *ret_size = total;
  return 0;
}

int sr_sha256_copy(int in_fd, int out_fd, uint64_t max, void *keep,
                   uint64_t *ret_size, unsigned char out[SR_SHA256_LEN],
                   enum sr_sha256_copy_step *ret_step) {
  return copy_impl(in_fd, out_fd, max, keep, false, ret_size, out, ret_step);
}

int sr_sha256_copy_regular(int in_fd, int out_fd, uint64_t max, void *keep,
                           uint64_t *ret_size, unsigned char out[SR_SHA256_LEN],
                           enum sr_sha256_copy_step *ret_step) {
  return copy_impl(in_fd, out_fd, max, keep, true, ret_size, out, ret_step);
}
