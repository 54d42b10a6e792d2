/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Landlock, by its system calls (landlock.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "fdutil.h"
#include "landlock.h"
#include "macro.h"
#include "view.h"

/*
 * The uapi spelled here: the distribution's <linux/landlock.h> may predate
 * the ABI the kernel offers (scoping is Linux 6.12).
 */
struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4 */
  uint64_t scoped;             /* ABI 6 */
};
struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

#define LL_CREATE_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define FS_WRITE_FILE (1ULL << 1)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)    /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define SCOPE_SIGNAL (1ULL << 1)

/* Writing to a file that exists (a device node, /proc/self/...). */
#define WRITE_EXISTING (FS_WRITE_FILE | FS_TRUNCATE)
/* Everything a writable directory allows, but device nodes. */
#define WRITE_TREE                                                             \
  (FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR |              \
   FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_SYM | FS_REFER |        \
   FS_TRUNCATE)

struct bit_name {
  uint64_t bit;
  const char *name;
};
static const struct bit_name fs_names[] = {
    {FS_WRITE_FILE, "write_file"},
    {FS_REMOVE_DIR, "remove_dir"},
    {FS_REMOVE_FILE, "remove_file"},
    {FS_MAKE_CHAR, "make_char"},
    {FS_MAKE_DIR, "make_dir"},
    {FS_MAKE_REG, "make_reg"},
    {FS_MAKE_SOCK, "make_sock"},
    {FS_MAKE_FIFO, "make_fifo"},
    {FS_MAKE_BLOCK, "make_block"},
    {FS_MAKE_SYM, "make_sym"},
    {FS_REFER, "refer"},
    {FS_TRUNCATE, "truncate"},
};
static const struct bit_name scope_names[] = {
    {SCOPE_ABSTRACT_UNIX, "abstract_unix_socket"},
    {SCOPE_SIGNAL, "signal"},
};

int sr_landlock_abi(void) {
  long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
  return v > 0 ? (int)v : 0;
}

uint64_t sr_landlock_handled_fs(int abi) {
  uint64_t h = FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR |
               FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO |
               FS_MAKE_BLOCK | FS_MAKE_SYM;

  if (abi < 1)
    return 0;
  if (abi >= 2)
    h |= FS_REFER;
  if (abi >= 3)
    h |= FS_TRUNCATE;
  return h;
}

uint64_t sr_landlock_scoped(int abi) {
  return abi >= SR_LANDLOCK_ABI_SCOPE ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0;
}

size_t sr_landlock_rules(struct sr_landlock_rule *rules, size_t max) {
  static const struct sr_landlock_rule fixed[] = {
      {"/dev/shm", WRITE_TREE},
      {"/dev", WRITE_EXISTING},
      {"/proc", WRITE_EXISTING},
  };
  size_t n = 0;

  /* The view's writable tmpfs mounts: /tmp, scratch, outputs. */
  for (size_t i = 0; i < sr_view_len; i++) {
    if (sr_view[i].type != SR_VIEW_TMPFS || sr_view[i].ro)
      continue;
    if (n >= max)
      return 0;
    rules[n++] = (struct sr_landlock_rule){sr_view[i].dst, WRITE_TREE};
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(fixed); i++) {
    if (n >= max)
      return 0;
    rules[n++] = fixed[i];
  }
  return n;
}

/* The names of the bits of mask in table, NULL-terminated in names. */
static size_t names_of(const struct bit_name *table, size_t len, uint64_t mask,
                       const char **names, size_t max) {
  size_t n = 0;

  for (size_t i = 0; i < len && n + 1 < max; i++)
    if (mask & table[i].bit)
      names[n++] = table[i].name;
  if (max)
    names[n] = NULL;
  return n;
}

size_t sr_landlock_fs_names(uint64_t mask, const char **names, size_t max) {
  return names_of(fs_names, SR_ARRAY_SIZE(fs_names), mask, names, max);
}

size_t sr_landlock_scope_names(uint64_t mask, const char **names, size_t max) {
  return names_of(scope_names, SR_ARRAY_SIZE(scope_names), mask, names, max);
}

static int add_rule(int ruleset, const struct sr_landlock_rule *rule,
                    uint64_t handled, struct sr_error *err) {
  struct ll_path_beneath_attr pb = {.allowed_access = rule->access & handled};
  _cleanup_close_ int fd = -1;

  fd = open(rule->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return sr_error_layer(err, "landlock", errno, "open %s", rule->path);
  pb.parent_fd = fd;
  if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
    return sr_error_layer(err, "landlock", errno, "landlock_add_rule %s",
                          rule->path);
  return 0;
}

int sr_landlock_apply(int abi, struct sr_error *err) {
  struct ll_ruleset_attr attr = {
      .handled_access_fs = sr_landlock_handled_fs(abi),
      .scoped = sr_landlock_scoped(abi),
  };
  struct sr_landlock_rule rules[SR_LANDLOCK_RULES_MAX];
  /* The attribute as long as this ABI knows it: a longer one with fields
   * it does not know is refused (E2BIG). */
  size_t size = abi >= SR_LANDLOCK_ABI_SCOPE ? sizeof(attr)
                : abi >= 4
                    ? offsetof(struct ll_ruleset_attr, scoped)
                    : offsetof(struct ll_ruleset_attr, handled_access_net);
  _cleanup_close_ int ruleset = -1;
  size_t n;
  int r;

  if (abi < 1)
    return 0;
  n = sr_landlock_rules(rules, SR_ARRAY_SIZE(rules));
  if (n == 0)
    return sr_error_layer(err, "landlock", EOVERFLOW, "too many rules");
  ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0)
    return sr_error_layer(err, "landlock", errno,
                          "landlock_create_ruleset (ABI %d)", abi);
  for (size_t i = 0; i < n; i++) {
    r = add_rule(ruleset, &rules[i], attr.handled_access_fs, err);
    if (r < 0)
      return r;
  }
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
    return sr_error_layer(err, "landlock", errno, "landlock_restrict_self");
  return 0;
}
