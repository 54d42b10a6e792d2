/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "dlib.h"
#include "ossl.h"

struct sr_ossl sr_ossl;

SR_DLOPEN_NOTE(sr_ossl_note, "crypto",
               "Ed25519 keys: signed bundles, capabilities, signed audit",
               SR_LIBCRYPTO_SONAME);

SR_DLIB_LOADER(load, sr_ossl, SR_OSSL_FUNCTIONS, SR_LIBCRYPTO_SONAME)

int sr_ossl_load(struct sr_error *err) {
  static bool initialised;
  int r = load("Ed25519 keys", err);

  if (r < 0 || initialised)
    return r;
  /* Keys must not depend on openssl.cnf or $OPENSSL_CONF either. */
  if (sr_ossl.OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "library_unavailable",
                        "%s failed to initialise", SR_LIBCRYPTO_SONAME);
  initialised = true;
  return 0;
}
