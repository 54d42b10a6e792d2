/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signed statements, trust tiers and execution capabilities.  The parsers
 * take a bounded buffer, accept exactly one byte layout and reject the rest
 * (they are fuzzed: tests/fuzz/fuzz-statement.c, fuzz-capability.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "fdutil.h"
#include "ossl.h"
#include "sha256.h"
#include "trust.h"
#include "util.h"

#define SR_KEY_MAX_BYTES (16 * 1024)

/*
 * A public key is an EVP_PKEY.  A private key (the audit anchoring key) is
 * kept only as its 32 bytes, in a page of its own that no child process
 * inherits (MADV_WIPEONFORK: the sandbox's init, a clone of the
 * supervisor, sees zeros there) and that no core dump holds; the EVP_PKEY
 * is made for each signature and freed at once (OpenSSL clears its
 * private half).  No private key is ever present in a process of the
 * sandbox.
 */
#define SEED_LEN 32
struct sr_trust_key {
  EVP_PKEY *pkey;      /* a public key; NULL for a private one */
  unsigned char *seed; /* a private key's bytes (SEED_LEN), or NULL */
  size_t seed_page;    /* the size of seed's mapping */
  bool private_key;
  char id[SR_KEY_ID_LEN + 1];
};

/* The key to sign or verify with: pkey itself, or for a private key one
 * made from its bytes, which the caller frees (*made). */
static EVP_PKEY *key_pkey(const struct sr_trust_key *k, bool *made) {
  *made = false;
  if (!k->seed)
    return k->pkey;
  *made = true;
  return sr_ossl.EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k->seed,
                                              SEED_LEN);
}

/* ---------------------------------------------------------------- keys */

/* OpenSSL's default for an encrypted key asks for its passphrase on the
 * terminal: --sign, or a run's audit-key, would stop and prompt (and take
 * what was typed).  skillrun takes no passphrase: an encrypted key is
 * refused, saying so. */
static int no_passphrase(char *buf, int size, int rwflag, void *u) {
  (void)buf, (void)size, (void)rwflag, (void)u;
  return -1;
}

/* A PEM key of either half, Ed25519 only, and its id (the public half's). */
static int parse_key(const char *pem, size_t len, bool private_key,
                     const char *name, EVP_PKEY **out,
                     char id[SR_KEY_ID_LEN + 1], struct sr_error *err) {
  unsigned char *der = NULL;
  unsigned char md[SR_SHA256_LEN];
  char hex[SR_SHA256_HEX_LEN + 1];
  EVP_PKEY *pkey;
  BIO *bio;
  int n;

  bio = sr_ossl.BIO_new_mem_buf(pem, (int)len);
  if (!bio)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "key_invalid", "%s", name);
  pkey = private_key
             ? sr_ossl.PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL)
             : sr_ossl.PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
  sr_ossl.BIO_free(bio);
  if (!pkey && private_key &&
      memmem(pem, len, "-----BEGIN ENCRYPTED PRIVATE KEY-----",
             strlen("-----BEGIN ENCRYPTED PRIVATE KEY-----")))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "%s: an encrypted private key: skillrun takes no "
                        "passphrase (openssl pkey -in KEY -out PLAIN writes "
                        "it unencrypted)",
                        name);
  if (!pkey)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "%s: not a PEM %s key", name,
                        private_key ? "private" : "public");
  /* Only Ed25519: a key of another type must not be accepted by accident. */
  if (!sr_ossl.EVP_PKEY_is_a(pkey, "ED25519")) {
    sr_ossl.EVP_PKEY_free(pkey);
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "%s: not an Ed25519 key", name);
  }
  /* The key id names the public half, whichever half was loaded. */
  n = sr_ossl.i2d_PUBKEY(pkey, &der);
  if (n <= 0 || sr_sha256(der, (size_t)n, md) < 0) {
    sr_ossl.CRYPTO_free(der, OPENSSL_FILE, OPENSSL_LINE);
    sr_ossl.EVP_PKEY_free(pkey);
    return sr_error_set(err, SR_EXIT_FAILED, EIO, "key_invalid",
                        "%s: cannot compute the key id", name);
  }
  sr_ossl.CRYPTO_free(der, OPENSSL_FILE, OPENSSL_LINE);
  sr_hex(md, sizeof(md), hex);
  memcpy(id, hex, SR_KEY_ID_LEN);
  id[SR_KEY_ID_LEN] = '\0';
  *out = pkey;
  return 0;
}

/* A page for a private key's bytes that no child inherits and no core
 * dump holds.  Fails closed: without MADV_WIPEONFORK (Linux 4.14) no
 * private key is kept. */
static int seed_page(struct sr_trust_key *k) {
  const long page = sysconf(_SC_PAGESIZE);
  void *p;

  if (page <= 0)
    return -EINVAL;
  p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return -errno;
  if (madvise(p, (size_t)page, MADV_WIPEONFORK) < 0) {
    int r = -errno;
    munmap(p, (size_t)page);
    return r;
  }
  (void)madvise(p, (size_t)page, MADV_DONTDUMP);
  k->seed = p;
  k->seed_page = (size_t)page;
  return 0;
}

/* In a child of its own: the private key parsed, its id and bytes (or the
 * error) written to fd.  OpenSSL's decoding leaves copies of the key in
 * memory it frees without clearing; they die with this process. */
_Noreturn static void parse_private_child(int fd, const char *pem, size_t len,
                                          const char *name) {
  struct sr_error err = {0};
  unsigned char msg[1 + SR_KEY_ID_LEN + SEED_LEN];
  char id[SR_KEY_ID_LEN + 1];
  size_t seed_len = SEED_LEN;
  EVP_PKEY *pkey = NULL;

  if (parse_key(pem, len, true, name, &pkey, id, &err) < 0 ||
      sr_ossl.EVP_PKEY_get_raw_private_key(pkey, msg + 1 + SR_KEY_ID_LEN,
                                           &seed_len) != 1 ||
      seed_len != SEED_LEN) {
    if (!sr_error_is_set(&err))
      sr_error_set(&err, SR_EXIT_FAILED, EIO, "key_invalid",
                   "%s: cannot read the private key", name);
    msg[0] = 1;
    (void)sr_write_all(fd, msg, 1);
    (void)sr_write_all(fd, &err, sizeof(err));
    _exit(1);
  }
  msg[0] = 0;
  memcpy(msg + 1, id, SR_KEY_ID_LEN);
  (void)sr_write_all(fd, msg, sizeof(msg));
  explicit_bzero(msg, sizeof(msg));
  _exit(0);
}

/* A private key: parsed apart (parse_private_child), its bytes read
 * straight into k's page. */
static int load_private(struct sr_trust_key *k, const char *pem, size_t len,
                        const char *name, struct sr_error *err) {
  _cleanup_close_ int rd = -1;
  int fds[2], status = 0, r;
  unsigned char st = 1;
  size_t got = 0;
  pid_t pid;

  r = seed_page(k);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "key_invalid",
                        "%s: cannot keep the private key where the sandbox "
                        "does not inherit it",
                        name);
  if (pipe2(fds, O_CLOEXEC) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "key_invalid", "%s", name);
  pid = fork();
  if (pid == 0) {
    safe_close(fds[0]);
    parse_private_child(fds[1], pem, len, name);
  }
  safe_close(fds[1]);
  rd = fds[0];
  if (pid < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "key_invalid", "%s", name);
  r = sr_read_full(rd, &st, 1, &got);
  if (r >= 0 && got == 1 && st == 0) {
    r = sr_read_full(rd, k->id, SR_KEY_ID_LEN, &got);
    if (r >= 0 && got == SR_KEY_ID_LEN)
      r = sr_read_full(rd, k->seed, SEED_LEN, &got);
    if (r >= 0 && got != SEED_LEN)
      r = -EIO;
  } else if (r >= 0 && got == 1) {
    struct sr_error child = {0};
    r = sr_read_full(rd, &child, sizeof(child), &got);
    if (r >= 0 && got == sizeof(child) && sr_error_is_set(&child)) {
      child.msg[sizeof(child.msg) - 1] = '\0';
      child.reason[sizeof(child.reason) - 1] = '\0';
      *err = child;
      r = -EINVAL;
    } else {
      r = -EIO;
    }
  } else if (r >= 0) {
    r = -EIO;
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  k->id[SR_KEY_ID_LEN] = '\0';
  if (r == -EINVAL)
    return r;
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "key_invalid",
                        "%s: cannot read the private key", name);
  return 0;
}

/*
 * A public key file holds that one key and nothing else PEM.  OpenSSL
 * reads the first PUBLIC KEY block and skips the rest: a trust-key file
 * that also held the private half (one file for both) was accepted, and
 * since every caller must be able to read it, every local user could then
 * sign bundles (or capabilities) with it; a second public key was
 * silently not trusted.  PEM blocks begin with "-----BEGIN " at the start
 * of a line, as OpenSSL's reader finds them.
 */
static int public_pem_alone(const char *pem, size_t len, const char *name,
                            struct sr_error *err) {
  static const char begin[] = "-----BEGIN ";
  const size_t blen = sizeof(begin) - 1;
  unsigned blocks = 0;

  for (size_t i = 0; i < len; i++) {
    const char *eol;
    size_t n;

    if ((i > 0 && pem[i - 1] != '\n') || len - i < blen ||
        memcmp(pem + i, begin, blen) != 0)
      continue;
    blocks++;
    eol = memchr(pem + i, '\n', len - i);
    n = eol ? (size_t)(eol - (pem + i)) : len - i;
    if (memmem(pem + i, n, "PRIVATE KEY", strlen("PRIVATE KEY")))
      return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                          "%s: holds a private key: a public key file must "
                          "hold the public key alone (openssl pkey -pubout), "
                          "since whoever can read it could sign with the "
                          "private one",
                          name);
  }
  if (blocks > 1)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "%s: holds %u PEM blocks: a public key file holds "
                        "exactly one key",
                        name, blocks);
  return 0;
}

int sr_trust_key_from_pem(const char *pem, size_t len, bool private_key,
                          const char *display_name, struct sr_trust_key **out,
                          struct sr_error *err) {
  const char *name = display_name ? display_name : "key";
  struct sr_trust_key *k;
  int r;

  if (!pem || len > SR_KEY_MAX_BYTES || len > INT32_MAX)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "%s: not a PEM key", name);
  if (!private_key && (r = public_pem_alone(pem, len, name, err)) < 0)
    return r;
  r = sr_ossl_load(err);
  if (r < 0)
    return r;
  k = calloc(1, sizeof(*k));
  if (!k)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "key_invalid", "%s", name);
  k->private_key = private_key;
  r = private_key ? load_private(k, pem, len, name, err)
                  : parse_key(pem, len, false, name, &k->pkey, k->id, err);
  if (r < 0) {
    sr_trust_key_free(k);
    return r;
  }
  *out = k;
  return 0;
}

/*
 * A private key given on the command line (--sign) must be its owner's
 * alone, as OpenSSH wants of an identity file: owned by the caller or by
 * root (a key another user owns is theirs to replace, so what the caller
 * signs would be signed with their key), writable by nobody else (whoever
 * can write it chooses the key), and readable by no other user, since any
 * local user who can read it can sign as its publisher and the key must
 * then be considered leaked.  One exception: a key owned by root may be
 * readable by its group, the way a signing service is given a key that an
 * administrator keeps (as sshd's host keys are in group ssh_keys); a key
 * of the caller's own is refused group read, as ssh refuses it.  Checked
 * on the opened descriptor, so no rename can swap the file afterwards.
 */
static int private_key_alone(int fd, const char *path, const struct stat *st,
                             struct sr_error *err) {
  const unsigned mode = (unsigned)(st->st_mode & 07777);
  const uid_t me = geteuid();

  if (sr_fd_owner_unmapped(fd, st))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "private key %s " SR_UNMAPPED_OWNER_FMT
                        " (keep your key in a file of your own, mode 600)",
                        path, (unsigned)st->st_uid);
  if (st->st_uid != me && st->st_uid != 0)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "private key %s belongs to uid %u, not to you "
                        "(uid %u) or root: it is not used (keep your key in "
                        "a file of your own, mode 600)",
                        path, (unsigned)st->st_uid, (unsigned)me);
  if ((st->st_mode & (S_IWGRP | S_IWOTH | S_IROTH)) ||
      ((st->st_mode & S_IRGRP) && st->st_uid != 0))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "private key %s can be read or written by other "
                        "users (mode %04o): it must be yours alone: chmod "
                        "600 %s",
                        path, mode, path);
  /* With an access ACL the group bits are its mask: root's key of mode
   * 0600 and `user:mallory:r` shows as 0640, and the group's read it
   * seems to be is mallory's.  Only the plain group read is excepted,
   * and a named entry for the caller (a systemd credential: root's, 0400,
   * `user:CALLER:r--`, which shows as 0440), or one the mask voids. */
  if ((st->st_mode & S_IRGRP) && sr_fd_acl_grants_others(fd, 4, me))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "private key %s has an access ACL that may let other "
                        "users read it (mode %04o): it must be yours alone: "
                        "setfacl -b %s && chmod 600 %s",
                        path, mode, path, path);
  return 0;
}

static int load_key(const char *path, bool private_key, bool root_only,
                    struct sr_trust_key **out, struct sr_error *err) {
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int fd = -1, dir = -1;
  struct sr_dir_fault fault;
  struct stat st;
  char why[PATH_MAX * 2 + 128];
  size_t len = 0;
  int r;

  fd = sr_open_regular_in(AT_FDCWD, path, SR_KEY_MAX_BYTES, &st,
                          root_only || private_key ? &dir : NULL);
  if (fd < 0)
    return sr_error_set(
        err, SR_EXIT_FAILED, sr_open_regular_errno(fd), "key_invalid",
        "key %s %s", path,
        sr_open_regular_why(fd, &st, SR_KEY_MAX_BYTES, why, sizeof(why)));
  /* What skillrun.conf trusts is root's to decide, the key as much as
   * the conf that names it: one another user could write would let them
   * sign bundles and capabilities, or the audit's anchors.  Checked on
   * the opened fd, so a rename race cannot swap it. */
  if (root_only && st.st_uid != 0 && sr_fd_owner_unmapped(fd, &st))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "key %s " SR_UNMAPPED_OWNER_FMT
                        " (run skillrun where root is mapped, or have "
                        "skillrun.conf name a key of root's as mapped here)",
                        path, (unsigned)st.st_uid);
  if (root_only && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                        "key %s is not root's alone (owner uid %u, mode "
                        "%04o): a key skillrun.conf names must be owned by "
                        "root and not writable by group or others",
                        path, (unsigned)st.st_uid,
                        (unsigned)(st.st_mode & 07777));
  /* Nor a directory above it: whoever could write one could rename
   * another of root's keys over its name (community.pub as official.pub),
   * or remove it. */
  if (root_only && (r = sr_check_dir_chain(dir, 0, NULL, 0, &fault)) < 0)
    return r == -EPERM
               ? sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                              "key %s %s", path,
                              sr_dir_fault_why(&fault, why, sizeof(why)))
               : sr_error_set(err, SR_EXIT_FAILED, -r, "key_invalid",
                              "key %s: cannot check the directories above it",
                              path);
  if (private_key && !root_only &&
      (r = private_key_alone(fd, path, &st, err)) < 0)
    return r;
  /* The private key's directories are the caller's or root's, as a
   * profile's found by name are (its owner's private group may write
   * them): whoever else can write one can rename another file of the
   * caller's over the key's name, and the caller signs with a key it did
   * not name. */
  if (private_key && !root_only &&
      (r = sr_check_dir_chain(dir, geteuid(), sr_dir_group_is_owners, 0,
                              &fault)) < 0)
    return r == -EPERM
               ? sr_error_set(err, SR_EXIT_FAILED, 0, "key_invalid",
                              "private key %s %s", path,
                              sr_dir_fault_why(&fault, why, sizeof(why)))
               : sr_error_set(err, SR_EXIT_FAILED, -r, "key_invalid",
                              "private key %s: cannot check the directories "
                              "above it",
                              path);
  /* One buffer of the largest size, never grown: a realloc would leave a
   * copy of private key bytes in freed memory, which every later fork
   * (the sandbox's init) would inherit. */
  buf = malloc(SR_KEY_MAX_BYTES + 1);
  if (!buf)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "key_invalid", "%s", path);
  r = sr_read_full(fd, buf, SR_KEY_MAX_BYTES + 1, &len);
  if (r >= 0 && len > SR_KEY_MAX_BYTES)
    r = -EFBIG;
  if (r >= 0)
    r = sr_trust_key_from_pem(buf, len, private_key, path, out, err);
  else
    sr_error_set(err, SR_EXIT_FAILED, -r, "key_invalid", "cannot read key %s",
                 path);
  explicit_bzero(buf, SR_KEY_MAX_BYTES + 1);
  return r;
}

int sr_trust_key_load(const char *path, bool private_key,
                      struct sr_trust_key **out, struct sr_error *err) {
  return load_key(path, private_key, false, out, err);
}

int sr_trust_key_load_platform(const char *path, bool private_key,
                               struct sr_trust_key **out,
                               struct sr_error *err) {
  return load_key(path, private_key, true, out, err);
}

const char *sr_trust_key_id(const struct sr_trust_key *k) {
  return k ? k->id : NULL;
}

void sr_trust_key_free(struct sr_trust_key *k) {
  if (!k)
    return;
  sr_ossl.EVP_PKEY_free(k->pkey);
  if (k->seed) {
    explicit_bzero(k->seed, k->seed_page);
    munmap(k->seed, k->seed_page);
  }
  free(k);
}

int sr_trust_sign(const struct sr_trust_key *k, const void *msg, size_t len,
                  unsigned char sig[SR_SIG_BYTES]) {
  EVP_MD_CTX *ctx;
  EVP_PKEY *pkey;
  size_t sig_len = SR_SIG_BYTES;
  bool made;
  int ok;

  if (!k || !k->private_key)
    return -EINVAL;
  pkey = key_pkey(k, &made);
  if (!pkey)
    return -ENOMEM;
  ctx = sr_ossl.EVP_MD_CTX_new();
  /* Ed25519 is one-shot: no digest name, EVP_DigestSign over the message. */
  ok = ctx && sr_ossl.EVP_DigestSignInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
       sr_ossl.EVP_DigestSign(ctx, sig, &sig_len, msg, len) == 1 &&
       sig_len == SR_SIG_BYTES;
  sr_ossl.EVP_MD_CTX_free(ctx);
  if (made)
    sr_ossl.EVP_PKEY_free(pkey);
  return ok ? 0 : -EIO;
}

int sr_trust_verify(const struct sr_trust_key *k, const void *msg, size_t len,
                    const unsigned char sig[SR_SIG_BYTES]) {
  EVP_MD_CTX *ctx;
  EVP_PKEY *pkey;
  bool made;
  int r;

  if (!k)
    return -EINVAL;
  pkey = key_pkey(k, &made);
  if (!pkey)
    return -ENOMEM;
  ctx = sr_ossl.EVP_MD_CTX_new();
  if (!ctx || sr_ossl.EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) != 1)
    r = -EIO;
  else
    r = sr_ossl.EVP_DigestVerify(ctx, sig, SR_SIG_BYTES, msg, len) == 1
            ? 0
            : -EBADMSG;
  sr_ossl.EVP_MD_CTX_free(ctx);
  if (made)
    sr_ossl.EVP_PKEY_free(pkey);
  return r;
}

int sr_keyring_add(struct sr_keyring *kr, int tier, const char *tenant,
                   struct sr_trust_key *key) {
  struct sr_keyring_entry *v;

  if (!kr || !key || tier < 0 || tier >= SR__TIER_MAX)
    return -EINVAL;
  /* A tenant key without its tenant would vouch for every tenant. */
  if ((tier == SR_TIER_TENANT) != (tenant != NULL) ||
      (tenant && !sr_valid_id(tenant)))
    return -EINVAL;
  v = realloc(kr->v, (kr->n + 1) * sizeof(*v));
  if (!v)
    return -ENOMEM;
  kr->v = v;
  memset(&kr->v[kr->n], 0, sizeof(kr->v[kr->n]));
  kr->v[kr->n].tier = tier;
  if (tenant)
    snprintf(kr->v[kr->n].tenant, sizeof(kr->v[kr->n].tenant), "%s", tenant);
  kr->v[kr->n].key = key;
  kr->n++;
  return 0;
}

void sr_keyring_done(struct sr_keyring *kr) {
  if (!kr)
    return;
  for (size_t i = 0; i < kr->n; i++)
    sr_trust_key_free(kr->v[i].key);
  free(kr->v);
  kr->v = NULL;
  kr->n = 0;
}

/* -------------------------------------------------------------- base64 */

static const char b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t sr_base64_encode(const unsigned char *in, size_t n, bool url,
                        char *out) {
  const char *a = url ? b64_url : b64_std;
  size_t o = 0, i;

  for (i = 0; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    out[o++] = a[(v >> 6) & 63];
    out[o++] = a[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)in[i] << 16;
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    if (!url) {
      out[o++] = '=';
      out[o++] = '=';
    }
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    out[o++] = a[(v >> 6) & 63];
    if (!url)
      out[o++] = '=';
  }
  out[o] = '\0';
  return o;
}

static int b64_value(char c, bool url) {
  const char *a = url ? b64_url : b64_std;
  const char *p = c ? strchr(a, c) : NULL;
  return p ? (int)(p - a) : -1;
}

int sr_base64_decode(const char *in, size_t n, bool url, unsigned char *out,
                     size_t max, size_t *got) {
  size_t pad = 0, full, rest, o = 0;
  uint32_t v;

  if (!url) {
    /* Padded: a multiple of 4, at most two '=' at the end. */
    if (n % 4 != 0)
      return -EINVAL;
    while (pad < 2 && n > pad && in[n - 1 - pad] == '=')
      pad++;
    n -= pad;
  }
  rest = n % 4;
  if (rest == 1 || (!url && pad != (rest ? 4 - rest : 0)))
    return -EINVAL;
  full = n - rest;
  if (full / 4 * 3 + (rest ? rest - 1 : 0) > max)
    return -ENOBUFS;
  for (size_t i = 0; i < full; i += 4) {
    int a = b64_value(in[i], url), b = b64_value(in[i + 1], url),
        c = b64_value(in[i + 2], url), d = b64_value(in[i + 3], url);
    if ((a | b | c | d) < 0)
      return -EINVAL;
    v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
    out[o++] = (unsigned char)(v >> 16);
    out[o++] = (unsigned char)(v >> 8);
    out[o++] = (unsigned char)v;
  }
  if (rest) {
    int a = b64_value(in[full], url), b = b64_value(in[full + 1], url);
    int c = rest == 3 ? b64_value(in[full + 2], url) : 0;
    if ((a | b | c) < 0)
      return -EINVAL;
    v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6;
    /* Non-zero unused bits: a second spelling of the same bytes. */
    if ((rest == 2 && (v & 0xffff)) || (rest == 3 && (v & 0xff)))
      return -EINVAL;
    out[o++] = (unsigned char)(v >> 16);
    if (rest == 3)
      out[o++] = (unsigned char)(v >> 8);
  }
  *got = o;
  return 0;
}

/* ---------------------------------------------------------------- time */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  /* Proleptic Gregorian day count from 1970-01-01 (era arithmetic). */
  int64_t era;
  unsigned yoe, doy, doe;

  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = (unsigned)(y - era * 400);
  doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static bool leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int num(const char *s, size_t n) {
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

int sr_parse_rfc3339_seconds(const char *s, size_t n, int64_t *out) {
  static const unsigned mdays[] = {31, 28, 31, 30, 31, 30,
                                   31, 31, 30, 31, 30, 31};
  int y, mo, d, h, mi, se;

  if (n != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':' || s[19] != 'Z')
    return -EINVAL;
  y = num(s, 4);
  mo = num(s + 5, 2);
  d = num(s + 8, 2);
  h = num(s + 11, 2);
  mi = num(s + 14, 2);
  se = num(s + 17, 2);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 ||
      mi > 59 || se < 0 || se > 59)
    return -EINVAL;
  if ((unsigned)d > mdays[mo - 1] + (mo == 2 && leap(y)))
    return -EINVAL;
  *out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
         mi * 60 + se;
  return 0;
}

void sr_format_rfc3339_seconds(int64_t t, char buf[21]) {
  /* Inverse of days_from_civil (same era arithmetic). */
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t secs = t - days * 86400, z = days + 719468, era, y;
  unsigned doe, yoe, doy, mp, d, m;

  era = (z >= 0 ? z : z - 146096) / 146097;
  doe = (unsigned)(z - era * 146097);
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = (int64_t)yoe + era * 400;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  {
    /* Wide enough for any int, so the compiler sees no truncation; the
     * values are in range, so the text is always 20 bytes. */
    char tmp[80];
    snprintf(tmp, sizeof(tmp), "%04u-%02u-%02uT%02u:%02u:%02uZ",
             (unsigned)(y < 0 ? 0 : y % 10000), m, d, (unsigned)(secs / 3600),
             (unsigned)(secs / 60 % 60), (unsigned)(secs % 60));
    snprintf(buf, 21, "%.20s", tmp);
  }
}

/* ------------------------------------------------------------ parsing */

/* Cursor over "key: value\n" lines. */
struct cursor {
  const char *buf;
  size_t len, pos;
  unsigned line;
  const char *what; /* "statement", "capability" */
  const char *reason;
  struct sr_error *err;
};

static int bad(struct cursor *c, const char *fmt, ...) _printf_(2, 3);
static int bad(struct cursor *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;

  va_start(ap, fmt);
  /* False positive: va_start() just above initialised ap; clang 14's
   * valist checker reports this call all the same.
   * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return sr_error_set(c->err, SR_EXIT_REFUSED, 0, c->reason, "%s:%u: %s",
                      c->what, c->line, msg);
}

/* The next line must be "key: VALUE\n" (or exactly `key` + "\n" when key
 * ends the header line); returns VALUE and its length. */
static int next_field(struct cursor *c, const char *key, const char **val,
                      size_t *vlen) {
  const char *line = c->buf + c->pos;
  size_t rest = c->len - c->pos, klen = strlen(key), n;
  const char *nl;

  /* Set on every path, so that no caller's analyzer sees them unset
   * after a failure (which returns bad(), always < 0). */
  *val = line;
  *vlen = 0;
  c->line++;
  nl = rest ? memchr(line, '\n', rest) : NULL;
  if (!nl)
    return bad(c, "expected '%s' on a line of its own ending in a newline",
               key);
  n = (size_t)(nl - line);
  /* Values are then read as C strings: "execution: run-1\0x" would be
   * run-1 here and something else to whoever signed it. */
  if (memchr(line, '\0', n))
    return bad(c, "a NUL byte in the '%s' line", key);
  if (n < klen + 2 || memcmp(line, key, klen) != 0 || line[klen] != ':' ||
      line[klen + 1] != ' ')
    return bad(c, "expected '%s: ' at the start of the line", key);
  *val = line + klen + 2;
  *vlen = n - klen - 2;
  c->pos += n + 1;
  return 0;
}

/* Whether the next line starts with "key:" (an optional field). */
static bool field_follows(const struct cursor *c, const char *key) {
  size_t rest = c->len - c->pos, klen = strlen(key);

  return rest > klen && memcmp(c->buf + c->pos, key, klen) == 0 &&
         c->buf[c->pos + klen] == ':';
}

static int expect_magic(struct cursor *c, const char *magic) {
  size_t m = strlen(magic);

  c->line = 1;
  if (c->len < m + 1 || memcmp(c->buf, magic, m) != 0 || c->buf[m] != '\n')
    return bad(c, "first line must be exactly '%s'", magic);
  c->pos = m + 1;
  return 0;
}

/* Visible ASCII or UTF-8 bytes: no blanks, no control characters. */
static bool visible(const char *s, size_t n, bool ascii_only) {
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch <= 0x20 || ch == 0x7f || (ascii_only && ch >= 0x80))
      return false;
  }
  return true;
}

static int copy_value(struct cursor *c, const char *key, const char *v,
                      size_t n, size_t max, bool ascii_only, char *dst) {
  if (n == 0 || n > max)
    return bad(c, "%s: must be 1 to %zu bytes", key, max);
  if (!visible(v, n, ascii_only))
    return bad(c, "%s: blank, control or non-ASCII character", key);
  memcpy(dst, v, n);
  dst[n] = '\0';
  return 0;
}

static int parse_id(struct cursor *c, const char *key, const char *v, size_t n,
                    char dst[65]) {
  if (n == 0 || n > 64)
    return bad(c, "%s: not a valid id", key);
  memcpy(dst, v, n);
  dst[n] = '\0';
  if (!sr_valid_id(dst))
    return bad(c, "%s: not a valid id", key);
  return 0;
}

static int parse_digest(struct cursor *c, const char *v, size_t n,
                        char dst[72]) {
  char hex[65];

  if (n != 71 || memcmp(v, "sha256:", 7) != 0)
    return bad(c, "digest: expected sha256: and 64 lowercase hex digits");
  memcpy(hex, v + 7, 64);
  hex[64] = '\0';
  if (!sr_valid_hex(hex, 64))
    return bad(c, "digest: expected sha256: and 64 lowercase hex digits");
  memcpy(dst, v, 71);
  dst[71] = '\0';
  return 0;
}

int sr_statement_parse(const char *buf, size_t len, struct sr_statement *out,
                       struct sr_error *err) {
  struct cursor c = {.buf = buf,
                     .len = len,
                     .what = "statement",
                     .reason = "statement_invalid",
                     .err = err};
  struct sr_statement st;
  const char *v;
  char tmp[32];
  size_t n, got = 0;
  int r;

  memset(&st, 0, sizeof(st));
  if (!buf || len > SR_STATEMENT_MAX_BYTES)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "statement_invalid",
                        "statement: larger than %d bytes",
                        SR_STATEMENT_MAX_BYTES);
  if ((r = expect_magic(&c, SR_STATEMENT_MAGIC)) < 0)
    return r;

  /* False positive: next_field() sets v and n whenever it returns 0; its
   * failures return bad(), always < 0, which the analyzer does not follow. */
  if ((r = next_field(&c, "name", &v, &n)) < 0 ||
      /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage) */
      (r = copy_value(&c, "name", v, n, SR_STATEMENT_NAME_MAX, false,
                      st.name)) < 0)
    return r;
  if ((r = next_field(&c, "version", &v, &n)) < 0 ||
      (r = copy_value(&c, "version", v, n, SR_STATEMENT_VERSION_MAX, true,
                      st.version)) < 0)
    return r;
  if ((r = next_field(&c, "digest", &v, &n)) < 0 ||
      (r = parse_digest(&c, v, n, st.digest)) < 0)
    return r;
  if ((r = next_field(&c, "tier", &v, &n)) < 0)
    return r;
  if (n >= sizeof(tmp))
    return bad(&c, "tier: not official, verified, community or tenant");
  memcpy(tmp, v, n);
  tmp[n] = '\0';
  st.tier = sr_tier_from_name(tmp);
  if (st.tier < 0)
    return bad(&c, "tier: not official, verified, community or tenant");
  /* The tenant tier is published for one tenant, and says which; no other
   * tier names one (a line a verifier would ignore must not be signed). */
  if (st.tier == SR_TIER_TENANT) {
    if ((r = next_field(&c, "tenant", &v, &n)) < 0 ||
        (r = parse_id(&c, "tenant", v, n, st.tenant)) < 0)
      return r;
  } else if (field_follows(&c, "tenant")) {
    c.line++;
    return bad(&c, "tenant: only a statement of tier tenant names a tenant");
  }
  if ((r = next_field(&c, "key-id", &v, &n)) < 0)
    return r;
  if (n != SR_KEY_ID_LEN)
    return bad(&c, "key-id: expected %d lowercase hex digits", SR_KEY_ID_LEN);
  memcpy(st.key_id, v, n);
  st.key_id[n] = '\0';
  if (!sr_valid_hex(st.key_id, SR_KEY_ID_LEN))
    return bad(&c, "key-id: expected %d lowercase hex digits", SR_KEY_ID_LEN);
  if ((r = next_field(&c, "time", &v, &n)) < 0)
    return r;
  if (sr_parse_rfc3339_seconds(v, n, &st.time_s) < 0)
    return bad(&c, "time: expected YYYY-MM-DDTHH:MM:SSZ");
  memcpy(st.time, v, n);
  st.time[n] = '\0';

  st.signed_len = c.pos;
  if ((r = next_field(&c, "signature", &v, &n)) < 0)
    return r;
  if (n != 88 ||
      sr_base64_decode(v, n, false, st.sig, sizeof(st.sig), &got) < 0 ||
      got != SR_SIG_BYTES)
    return bad(&c, "signature: expected the base64 of a 64-byte Ed25519 "
                   "signature");
  if (c.pos != len) {
    c.line++;
    return bad(&c, "unexpected data after the signature line");
  }
  *out = st;
  return 0;
}

/* "tier community" or "tier tenant for tenant acme". */
static void describe_scope(int tier, const char *tenant, char *buf,
                           size_t len) {
  if (tier == SR_TIER_TENANT)
    snprintf(buf, len, "tier tenant for tenant %s", tenant);
  else
    snprintf(buf, len, "tier %s", sr_tier_name(tier));
}

int sr_statement_verify(const struct sr_statement *st, const char *buf,
                        const struct sr_keyring *kr, unsigned tiers_allowed,
                        const char *tenant, const char *digest,
                        const char *name, const char *version,
                        struct sr_error *err) {
  const struct sr_trust_key *key = NULL;
  const struct sr_keyring_entry *other = NULL;

  /* A key vouches for one tier, and a tenant key for one tenant: acme's
   * key cannot publish for globex. */
  for (size_t i = 0; kr && i < kr->n; i++) {
    const char *id = sr_trust_key_id(kr->v[i].key);

    if (!id || strcmp(id, st->key_id) != 0)
      continue;
    if (kr->v[i].tier == st->tier &&
        (st->tier != SR_TIER_TENANT || !strcmp(kr->v[i].tenant, st->tenant))) {
      key = kr->v[i].key;
      break;
    }
    other = &kr->v[i];
  }
  if (!key && other) {
    char trusted[128], claimed[128];
    describe_scope(other->tier, other->tenant, trusted, sizeof(trusted));
    describe_scope(st->tier, st->tenant, claimed, sizeof(claimed));
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "tier_key_mismatch",
                        "statement: key %s is trusted for %s, not for %s",
                        st->key_id, trusted, claimed);
  }
  if (!key)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "unknown_key",
                        "statement: key %s is not a trusted key "
                        "(skillrun.conf trust-key)",
                        st->key_id);
  if (sr_trust_verify(key, buf, st->signed_len, st->sig) < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "signature_invalid",
                        "statement: the signature does not verify with key %s",
                        st->key_id);
  /* Only a verified statement's claims are worth comparing. */
  if (!(tiers_allowed & (1u << st->tier)))
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "tier_not_allowed",
                        "tier %s is not allowed to run by the profile or "
                        "skillrun.conf",
                        sr_tier_name(st->tier));
  if (st->tier == SR_TIER_TENANT &&
      (!tenant || strcmp(tenant, st->tenant) != 0))
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "tenant_mismatch",
                        "statement: tier tenant, published for tenant '%s', "
                        "not for tenant '%s'",
                        st->tenant, tenant ? tenant : "(none)");
  if (!digest || strcmp(digest, st->digest) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "digest_mismatch",
                        "statement digest %s does not match the bundle "
                        "digest %s",
                        st->digest, digest ? digest : "(none)");
  if (!name || strcmp(name, st->name) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "name_mismatch",
                        "statement names skill '%s', SKILL.md says '%s'",
                        st->name, name ? name : "(none)");
  if (!version || strcmp(version, st->version) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "version_mismatch",
                        "statement names version '%s', SKILL.md says '%s'",
                        st->version, version ? version : "(none)");
  return 0;
}

int sr_statement_sign(const struct sr_trust_key *k, int tier,
                      const char *tenant, const char *name, const char *version,
                      const char *digest, int64_t now, char **out, size_t *len,
                      struct sr_error *err) {
  unsigned char sig[SR_SIG_BYTES];
  char b64[4 * ((SR_SIG_BYTES + 2) / 3) + 1];
  char when[21], tenant_line[80] = "";
  char *text = NULL, *full = NULL;
  struct sr_statement check;
  int n, r;

  if (!version || !*version)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "usage",
                        "SKILL.md has no metadata.version; a signed "
                        "statement names the version it vouches for");
  if (!sr_tier_name(tier) || tier >= SR__TIER_MAX)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "usage", "invalid tier");
  if (tier == SR_TIER_TENANT && (!tenant || !sr_valid_id(tenant)))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "usage",
                        "a statement of tier tenant names its tenant: give "
                        "--tenant ID");
  if (tier != SR_TIER_TENANT && tenant)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "usage",
                        "only a statement of tier tenant names a tenant");
  if (tenant)
    snprintf(tenant_line, sizeof(tenant_line), "tenant: %s\n", tenant);
  sr_format_rfc3339_seconds(now, when);
  n = asprintf(&text,
               SR_STATEMENT_MAGIC "\nname: %s\nversion: %s\ndigest: %s\n"
                                  "tier: %s\n%skey-id: %s\ntime: %s\n",
               name, version, digest, sr_tier_name(tier), tenant_line,
               sr_trust_key_id(k), when);
  if (n < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "sign", "statement");
  r = sr_trust_sign(k, text, (size_t)n, sig);
  if (r < 0) {
    free(text);
    return sr_error_set(err, SR_EXIT_FAILED, -r, "sign",
                        "cannot sign the statement (is %s a private key?)",
                        sr_trust_key_id(k));
  }
  sr_base64_encode(sig, sizeof(sig), false, b64);
  n = asprintf(&full, "%ssignature: %s\n", text, b64);
  free(text);
  if (n < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "sign", "statement");
  /* Never hand out a statement our own parser would refuse (a name or
   * version with blanks, say). */
  r = sr_statement_parse(full, (size_t)n, &check, err);
  if (r < 0) {
    free(full);
    err->exit_code = SR_EXIT_FAILED;
    return r;
  }
  *out = full;
  *len = (size_t)n;
  return 0;
}

/* -------------------------------------------------------- capabilities */

static int parse_i64(struct cursor *c, const char *key, const char *v, size_t n,
                     int64_t *out) {
  int64_t x = 0;

  if (n == 0 || n > 12 || (n > 1 && v[0] == '0'))
    return bad(c, "%s: expected Unix seconds", key);
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return bad(c, "%s: expected Unix seconds", key);
    x = x * 10 + (v[i] - '0');
  }
  *out = x;
  return 0;
}

int sr_capability_parse(const char *buf, size_t len, struct sr_capability *out,
                        struct sr_error *err) {
  struct sr_capability cap;
  struct cursor c = {
      .what = "capability", .reason = "capability_invalid", .err = err};
  const char *dot, *v;
  size_t n, got = 0;
  int r;

  memset(&cap, 0, sizeof(cap));
  if (!buf || len > SR_CAPABILITY_MAX_BYTES)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_invalid",
                        "capability: larger than %d bytes",
                        SR_CAPABILITY_MAX_BYTES);
  if (len > 0 && buf[len - 1] == '\n')
    len--;
  dot = memchr(buf, '.', len);
  if (!dot)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_invalid",
                        "capability: expected PAYLOAD.SIGNATURE in base64url");
  if (sr_base64_decode(buf, (size_t)(dot - buf), true,
                       (unsigned char *)cap.payload, sizeof(cap.payload) - 1,
                       &cap.payload_len) < 0 ||
      sr_base64_decode(dot + 1, len - (size_t)(dot - buf) - 1, true, cap.sig,
                       sizeof(cap.sig), &got) < 0 ||
      got != SR_SIG_BYTES)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_invalid",
                        "capability: expected PAYLOAD.SIGNATURE in base64url, "
                        "with a 64-byte signature");
  cap.payload[cap.payload_len] = '\0';

  c.buf = cap.payload;
  c.len = cap.payload_len;
  if ((r = expect_magic(&c, SR_CAPABILITY_MAGIC)) < 0)
    return r;
  /* v and n are set: see sr_statement_parse(). */
  if ((r = next_field(&c, "tenant", &v, &n)) < 0 ||
      /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage) */
      (r = parse_id(&c, "tenant", v, n, cap.tenant)) < 0)
    return r;
  if ((r = next_field(&c, "execution", &v, &n)) < 0 ||
      (r = parse_id(&c, "execution", v, n, cap.execution)) < 0)
    return r;
  if ((r = next_field(&c, "digest", &v, &n)) < 0 ||
      (r = parse_digest(&c, v, n, cap.digest)) < 0)
    return r;
  if ((r = next_field(&c, "network", &v, &n)) < 0)
    return r;
  if (n == 4 && !memcmp(v, "deny", 4))
    cap.network = SR_CAP_NET_DENY;
  else if (n == 5 && !memcmp(v, "allow", 5))
    cap.network = SR_CAP_NET_ALLOW;
  else if (n >= 9 && !memcmp(v, "allowlist", 9) && (n == 9 || v[9] == ' ')) {
    cap.network = SR_CAP_NET_ALLOWLIST;
    for (size_t i = 9; i < n; i++)
      if (v[i] < 0x20 || v[i] > 0x7e)
        return bad(&c, "network: allowlist entries must be printable ASCII");
    /* One blank before each entry and none elsewhere: "allowlist " (an
     * empty list joined) would narrow nothing, and two blanks to
     * nothing, so neither has a meaning. */
    for (size_t i = 9; i < n; i++)
      if (v[i] == ' ' && (i + 1 == n || v[i + 1] == ' '))
        return bad(&c, "network: allowlist entries are separated by one "
                       "blank, with none before the first (after "
                       "'allowlist ') or after the last");
    /* The payload is at most 1024 bytes: it fits. */
    memcpy(cap.network_allow, v + (n > 9 ? 10 : 9), n > 9 ? n - 10 : 0);
  } else
    return bad(&c, "network: expected deny, allow or allowlist [ENTRY...]");
  if ((r = next_field(&c, "issued", &v, &n)) < 0 ||
      (r = parse_i64(&c, "issued", v, n, &cap.issued)) < 0)
    return r;
  if ((r = next_field(&c, "expires", &v, &n)) < 0 ||
      (r = parse_i64(&c, "expires", v, n, &cap.expires)) < 0)
    return r;
  /* Optional and last, so that tokens minted before it existed parse. */
  if (c.pos != c.len &&
      ((r = next_field(&c, "placement", &v, &n)) < 0 ||
       (r = parse_id(&c, "placement", v, n, cap.placement)) < 0))
    return r;
  if (c.pos != c.len) {
    c.line++;
    return bad(&c, "unexpected data after '%s'",
               cap.placement[0] ? "placement" : "expires");
  }
  if (cap.expires <= cap.issued)
    return bad(&c, "expires must be after issued");
  *out = cap;
  return 0;
}

/* The token's placement against this host's (skillrun.conf). */
static int check_placement(const struct sr_capability *c,
                           const struct sr_capability_scope *want,
                           struct sr_error *err) {
  if (!c->placement[0]) {
    if (want->require_placement)
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_placement",
                          "capability: names no placement, and skillrun.conf "
                          "requires one (require-placement yes)");
    return 0;
  }
  if (!want->placement)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_placement",
                        "capability: issued for placement '%s', and this "
                        "host names none (skillrun.conf placement-id)",
                        c->placement);
  if (strcmp(want->placement, c->placement) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_placement",
                        "capability: issued for placement '%s', not '%s'",
                        c->placement, want->placement);
  return 0;
}

int sr_capability_check(const struct sr_capability *c,
                        const struct sr_trust_key *key,
                        const struct sr_capability_scope *want,
                        struct sr_error *err) {
  const char *tenant = want->tenant, *execution = want->execution;
  const int64_t now = want->now;

  if (!key || sr_trust_verify(key, c->payload, c->payload_len, c->sig) < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_signature",
                        "capability: the signature does not verify with the "
                        "control-plane key");
  if (c->expires - c->issued > SR_CAPABILITY_MAX_LIFETIME)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_lifetime",
                        "capability: lifetime %" PRId64
                        "s exceeds the maximum %ds",
                        c->expires - c->issued, SR_CAPABILITY_MAX_LIFETIME);
  if (now > c->expires + SR_CAPABILITY_SKEW)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_expired",
                        "capability: expired %" PRId64 "s ago",
                        now - c->expires);
  if (c->issued > now + SR_CAPABILITY_SKEW)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_not_yet_valid",
                        "capability: issued %" PRId64 "s in the future",
                        c->issued - now);
  if (!tenant || strcmp(tenant, c->tenant) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_tenant",
                        "capability: issued for tenant '%s', not '%s'",
                        c->tenant, tenant ? tenant : "(none)");
  if (!execution || strcmp(execution, c->execution) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_execution",
                        "capability: issued for execution '%s', not '%s'",
                        c->execution, execution ? execution : "(none)");
  return check_placement(c, want, err);
}

int sr_capability_check_digest(const struct sr_capability *c,
                               const char *digest, struct sr_error *err) {
  if (!digest || strcmp(digest, c->digest) != 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_digest",
                        "capability: issued for bundle %s, not %s", c->digest,
                        digest ? digest : "(none)");
  return 0;
}

int sr_capability_mint(const struct sr_trust_key *k, const char *tenant,
                       const char *execution, const char *placement,
                       const char *digest, enum sr_capability_network network,
                       const char *network_allow, int64_t issued,
                       int64_t expires, char **out, struct sr_error *err) {
  unsigned char sig[SR_SIG_BYTES];
  static const char *const net[] = {
      [SR_CAP_NET_DENY] = "deny",
      [SR_CAP_NET_ALLOW] = "allow",
      [SR_CAP_NET_ALLOWLIST] = "allowlist",
  };
  char payload[1024], p64[1400], s64[100];
  bool list =
      network == SR_CAP_NET_ALLOWLIST && network_allow && *network_allow;
  int n, r;

  if ((unsigned)network >= SR_ARRAY_SIZE(net))
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "capability", "network");
  n = snprintf(payload, sizeof(payload),
               SR_CAPABILITY_MAGIC "\ntenant: %s\nexecution: %s\ndigest: %s\n"
                                   "network: %s%s%s\nissued: %" PRId64
                                   "\nexpires: %" PRId64 "\n%s%s%s",
               tenant, execution, digest, net[network], list ? " " : "",
               list ? network_allow : "", issued, expires,
               placement ? "placement: " : "", placement ? placement : "",
               placement ? "\n" : "");
  if (n < 0 || (size_t)n >= sizeof(payload))
    return sr_error_set(err, SR_EXIT_FAILED, E2BIG, "capability", "payload");
  r = sr_trust_sign(k, payload, (size_t)n, sig);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "capability", "sign");
  sr_base64_encode((const unsigned char *)payload, (size_t)n, true, p64);
  sr_base64_encode(sig, sizeof(sig), true, s64);
  if (asprintf(out, "%s.%s", p64, s64) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "capability", "token");
  return 0;
}
