/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer: the pure pieces of the bundle digest.  Input layout:
 *   byte 0: record type ('f' when even, 'd' when odd; any byte when > 0xf0)
 *   byte 1: mode_exec (low bit)
 *   bytes 2..9: size (little endian)
 *   the rest: path A, '\0', path B (B optional)
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sign(int v) {
  return (v > 0) - (v < 0);
}

/* Every '/'-separated component acceptable, no empty component. */
static bool path_ok(const char *p) {
  char *copy, *save = NULL, *c;
  bool ok = *p && p[0] != '/' && p[strlen(p) - 1] != '/' && !strstr(p, "//");

  copy = strdup(p);
  if (!copy)
    abort();
  for (c = strtok_r(copy, "/", &save); ok && c; c = strtok_r(NULL, "/", &save))
    ok = sr_valid_filename(c);
  free(copy);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char hex[] =
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  char *a, *b, *rec, want[4096];
  const char *nul;
  char type;
  bool exec;
  uint64_t fsize = 0;
  size_t rest;

  if (size < 10 || size > 8192)
    return 0;
  type = data[0] > 0xf0 ? (char)data[0] : (data[0] % 2 ? 'd' : 'f');
  exec = data[1] & 1;
  for (int i = 0; i < 8; i++)
    fsize |= (uint64_t)data[2 + i] << (8 * i);
  data += 10;
  rest = size - 10;
  nul = memchr(data, '\0', rest);
  a = strndup((const char *)data,
              nul ? (size_t)(nul - (const char *)data) : rest);
  b = strndup(nul ? nul + 1 : "",
              nul ? rest - (size_t)(nul + 1 - (const char *)data) : 0);
  if (!a || !b)
    abort();

  /* The record order must be a total order: antisymmetric and reflexive. */
  if (sr_bundle_path_cmp(a, a) != 0 ||
      sign(sr_bundle_path_cmp(a, b)) != -sign(sr_bundle_path_cmp(b, a)))
    abort();
  /* Documented name rules. */
  if (sr_valid_filename(a) && (!*a || strchr(a, '/') || !strcmp(a, ".") ||
                               !strcmp(a, "..") || strlen(a) > 255))
    abort();
  for (const char *p = a; *p && sr_valid_filename(a); p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      abort();

  rec = sr_bundle_record(type, exec, fsize, hex, a);
  if (rec && path_ok(a) && strlen(a) < 1024 && (type == 'f' || type == 'd')) {
    /* For a valid path the record is exactly the documented line. */
    if (type == 'f')
      snprintf(want, sizeof(want), "f %s %" PRIu64 " %s %s\n",
               exec ? "0755" : "0644", fsize, hex, a);
    else
      snprintf(want, sizeof(want), "d 0755 0 - %s/\n", a);
    if (strcmp(rec, want) != 0)
      abort();
  }
  /* A record is one line.  Only for paths without control characters:
   * sr_bundle_record leaves refusing those to its caller (sr_bundle_stage
   * checks each name with sr_valid_filename first). */
  if (rec && !sr_has_control_chars(a) &&
      strchr(rec, '\n') != rec + strlen(rec) - 1)
    abort();
  free(rec);
  free(a);
  free(b);
  return 0;
}
