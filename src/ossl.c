/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdbool.h>

#include "dlib.h"
#include "ossl.h"

struct sr_ossl sr_ossl;

SR_DLOPEN_NOTE(sr_ossl_note, "crypto",
               "Ed25519 keys: signed bundles, capabilities, signed audit",
               SR_LIBCRYPTO_SONAME);

int sr_ossl_load(struct sr_error *err) {
  static const char soname[] = SR_LIBCRYPTO_SONAME;
  static bool loaded;
  struct sr_ossl s;
  void *h;

  if (loaded)
    return 0;
  h = sr_dlib_open(soname, "Ed25519 keys", err);
  if (!h)
    return -ENOENT;
  SR_OSSL_FUNCTIONS(SR_DLIB_RESOLVE)
  /* Keys must not depend on openssl.cnf or $OPENSSL_CONF either. */
  if (s.OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "library_unavailable",
                        "%s failed to initialise", soname);
  sr_ossl = s;
  loaded = true;
  return 0;
}
