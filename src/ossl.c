/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>

#include "ossl.h"

struct sr_ossl sr_ossl;

/* The dlopen metadata note (https://systemd.io/ELF_DLOPEN_METADATA/), so
 * that packaging tools see the dependency the ELF dynamic section lacks. */
#define SR_NOTE_JSON                                                           \
  "[{\"feature\":\"crypto\",\"description\":\"Ed25519 keys: signed "           \
  "bundles, capabilities, signed audit\",\"priority\":\"required\","           \
  "\"soname\":[\"" SR_LIBCRYPTO_SONAME "\"]}]"
struct sr_dlopen_note {
  unsigned int namesz, descsz, type;
  char name[4];
  char desc[(sizeof(SR_NOTE_JSON) + 3) & ~(size_t)3];
};
__attribute__((used, section(".note.dlopen"), aligned(4)))
const struct sr_dlopen_note sr_dlopen_note = {
    .namesz = 4,
    .descsz = sizeof(SR_NOTE_JSON),
    .type = 0x407c0c0aU, /* NT_FDO_DLOPEN_METADATA */
    .name = "FDO",
    .desc = SR_NOTE_JSON,
};

int sr_ossl_load(struct sr_error *err) {
  static bool loaded;
  struct sr_ossl s;
  void *h;

  if (loaded)
    return 0;
  /* Already mapped when the whole build links libcrypto dynamically. */
  h = dlopen(SR_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!h)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "crypto_unavailable",
                        "keys need OpenSSL's %s, which cannot be loaded (%s): "
                        "install it (Debian, Ubuntu: libssl3t64 or libssl3)",
                        SR_LIBCRYPTO_SONAME, dlerror());
#define SR_OSSL_SYM(name)                                                      \
  s.name = (__typeof__(s.name))dlsym(h, #name);                                \
  if (!s.name)                                                                 \
    return sr_error_set(err, SR_EXIT_FAILED, 0, "crypto_unavailable",          \
                        "%s lacks %s: it is not OpenSSL %d",                   \
                        SR_LIBCRYPTO_SONAME, #name, OPENSSL_VERSION_MAJOR);
  SR_OSSL_FUNCTIONS(SR_OSSL_SYM)
#undef SR_OSSL_SYM
  /* Keys must not depend on openssl.cnf or $OPENSSL_CONF either. */
  if (s.OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "crypto_unavailable",
                        "%s failed to initialise", SR_LIBCRYPTO_SONAME);
  sr_ossl = s;
  loaded = true;
  return 0;
}
