/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/*
 * SHA-256, the one hash skillrun uses (bundle digest, input files, the
 * audit chain, the seccomp program's name), in one place.
 *
 * OpenSSL 3's EVP interface builds its name map and the provider's method
 * store on the first fetch: about 0.7 ms on the reference machine, a tenth
 * of a whole sandboxed run of /bin/true (bench/launch).  The low-level
 * SHA256_* functions are the same implementation without that store.  They
 * are deprecated since OpenSSL 3.0 but still shipped; where a build of
 * OpenSSL hides them (OPENSSL_NO_DEPRECATED_3_0), or with
 * SR_SHA256_FORCE_EVP, the EVP path is used instead.  Either way hashing does
 * not go through openssl.cnf: skillrun never loads it.
 *
 * By default (configure --enable-static-sha256) the low-level functions are
 * linked in from libcrypto.a, about 25 KB, and the shared libcrypto is not
 * mapped at all unless a key is needed (ossl.h).
 *
 * Every function returns 0 or a negative errno (-ENOMEM, -EIO: only
 * possible on the EVP path).  After a failed call the context is released.
 * sr_sha256_copy() also reads and writes files, and fails as they do.
 */

#define SR_SHA256_LEN 32
#define SR_SHA256_HEX_LEN 64

/* Opaque: OpenSSL's SHA256_CTX lives in `state` (sha256.c checks it fits),
 * so a hash needs no allocation; the EVP path keeps its context in `evp`. */
struct sr_sha256 {
  void *evp;
  union {
    unsigned char bytes[128];
    uint64_t align;
  } state;
};

int sr_sha256_init(struct sr_sha256 *h);
int sr_sha256_update(struct sr_sha256 *h, const void *data, size_t len);
/* Writes the digest and releases the context. */
int sr_sha256_final(struct sr_sha256 *h, unsigned char out[SR_SHA256_LEN]);
/* Releases a context without a result (error paths); idempotent. */
void sr_sha256_done(struct sr_sha256 *h);
#define _cleanup_sha256_ _cleanup_(sr_sha256_done)

int sr_sha256(const void *data, size_t len, unsigned char out[SR_SHA256_LEN]);
/* Lowercase hex, NUL-terminated. */
int sr_sha256_hex(const void *data, size_t len,
                  char out[SR_SHA256_HEX_LEN + 1]);
/* "lowlevel" or "evp": which path this build uses (tests, --version). */
const char *sr_sha256_backend(void);

/* The read size of sr_sha256_copy(): large reads keep the per-syscall cost
 * well below the hashing cost (bench/digest). */
#define SR_SHA256_COPY_CHUNK (128u * 1024u)

/* Which step of sr_sha256_copy() failed, so the caller can say which side
 * (its source or its copy) is at fault. */
enum sr_sha256_copy_step {
  SR_SHA256_COPY_READ,  /* reading in_fd, or more than max bytes (-EFBIG) */
  SR_SHA256_COPY_WRITE, /* writing out_fd */
  SR_SHA256_COPY_HASH,  /* the hash itself (-ENOMEM, -EIO) */
};

/*
 * Copy-while-hash, the one loop behind the bundle's staging copy, the
 * staged inputs and the harvested outputs.  Reads in_fd once, to its end;
 * every chunk read goes to SHA-256, to out_fd (unless -1: hash only) and
 * into keep (unless NULL; room for max bytes) before the next read, so a
 * copy holds exactly the bytes hashed.  More than max bytes: -EFBIG, and
 * nothing past max is hashed, written or kept.  The read buffer (at most
 * SR_SHA256_COPY_CHUNK, and at most max + 1 bytes) is allocated per call.
 * Returns 0 with *ret_size and out set, or a negative errno with *ret_step
 * (when not NULL) naming the step that failed; a partial copy may remain
 * in out_fd and keep.  A pending cancellation stops it before the next
 * read with -ECANCELED (sr_cancel_poll(): noticed within a millisecond).
 */
int sr_sha256_copy(int in_fd, int out_fd, uint64_t max, void *keep,
                   uint64_t *ret_size, unsigned char out[SR_SHA256_LEN],
                   enum sr_sha256_copy_step *ret_step);

/*
 * The same for a regular file whose size and mtime the caller compares
 * again after the copy (the bundle's staging): a read shorter than asked is
 * taken as the end of the file, saving the read that returns 0.  A file
 * that grows after it, or a file system that returns a short read before
 * the end, shows in the caller's check (a size other than expected).  A
 * file of max >= 8 MiB is read ahead by a second thread (joined before
 * return) while this one hashes and writes, in chunks of 256 KiB.
 */
int sr_sha256_copy_regular(int in_fd, int out_fd, uint64_t max, void *keep,
                           uint64_t *ret_size, unsigned char out[SR_SHA256_LEN],
                           enum sr_sha256_copy_step *ret_step);
