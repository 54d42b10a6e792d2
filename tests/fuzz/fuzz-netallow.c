/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer: the network allowlist (netallow.c).  The first byte picks what
 * the rest is fed to; each branch checks the properties users rely on:
 * canonical text parses back to the same entry, an intersection never
 * permits what either side refuses, matching agrees with normalisation.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netallow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_roundtrip(const struct sr_netallow_entry *e, unsigned flags) {
  struct sr_netallow_entry back;
  char buf[SR_NETALLOW_FORMAT_MAX], why[256];

  sr_netallow_format(e, buf, sizeof(buf));
  if (sr_netallow_parse_entry(buf, flags, SR_NETALLOW_ORIGIN_CONF, NULL, &back,
                              why, sizeof(why)) < 0)
    abort();
  if (back.kind != e->kind || back.port != e->port ||
      strcmp(back.host, e->host) != 0 || back.prefix != e->prefix ||
      memcmp(&back.addr, &e->addr, sizeof(e->addr)) != 0)
    abort();
  if (e->port == 0 || strlen(e->host) > SR_NETALLOW_NAME_MAX)
    abort();
}

/* A name the entry must admit (for names and wildcards). */
static void probe_name(const struct sr_netallow_entry *e, char *buf,
                       size_t len) {
  if (e->kind == SR_NETALLOW_SUFFIX)
    (void)snprintf(buf, len, "x.%s", e->host);
  else
    (void)snprintf(buf, len, "%s", e->host);
}

static void fuzz_intersect(const char *text) {
  struct sr_netallow req = {0}, perm = {0}, out = {0}, dropped = {0};
  const char *bar = strchr(text, '|');
  char *left, why[256];

  if (!bar)
    return;
  left = strndup(text, (size_t)(bar - text));
  if (!left)
    abort();
  (void)sr_netallow_parse_list(left, SR_NETALLOW_LITERALS,
                               SR_NETALLOW_ORIGIN_MANIFEST, "m", &req, why,
                               sizeof(why));
  (void)sr_netallow_parse_list(bar + 1, SR_NETALLOW_LITERALS,
                               SR_NETALLOW_ORIGIN_PROFILE, "p", &perm, why,
                               sizeof(why));
  for (unsigned flags = 0; flags < 2; flags++) {
    if (sr_netallow_intersect(&req, &perm, flags, &out, &dropped) < 0)
      break;
    for (size_t i = 0; i < out.n; i++) {
      const struct sr_netallow_entry *e = &out.v[i];
      check_roundtrip(e, SR_NETALLOW_LITERALS);
      if (e->kind == SR_NETALLOW_RANGE) {
        /* The network address lies in both lists' ranges (unless the
         * permitted ranges were kept as they are). */
        if (!sr_netallow_match_addr(&perm, &e->addr, e->port))
          abort();
        if (!flags && !sr_netallow_match_addr(&req, &e->addr, e->port))
          abort();
        continue;
      }
      char name[SR_NETALLOW_NAME_MAX + 8];
      probe_name(e, name, sizeof(name));
      if (strlen(name) <= SR_NETALLOW_NAME_MAX &&
          (!sr_netallow_match_name(&req, name, e->port) ||
           !sr_netallow_match_name(&perm, name, e->port)))
        abort();
      if (e->origin != SR_NETALLOW_ORIGIN_MANIFEST)
        abort();
    }
    /* Every request entry is either in the result or dropped. */
    if (out.n == 0 && dropped.n < req.n && !flags)
      abort();
    sr_netallow_done(&out);
    sr_netallow_done(&dropped);
  }
  sr_netallow_done(&req);
  sr_netallow_done(&perm);
  free(left);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s, why[256];
  uint8_t mode;

  if (size < 1 || size > 4096)
    return 0;
  mode = data[0];
  data++;
  size--;
  s = malloc(size + 1);
  if (!s)
    abort();
  memcpy(s, data, size);
  s[size] = '\0';

  switch (mode % 5) {
  case 0: {
    struct sr_netallow_entry e;
    unsigned flags = (mode & 0x80) ? SR_NETALLOW_LITERALS : 0;
    if (sr_netallow_parse_entry(s, flags, SR_NETALLOW_ORIGIN_CONF, "w", &e, why,
                                sizeof(why)) == 0) {
      check_roundtrip(&e, flags);
      if (!flags && e.kind == SR_NETALLOW_RANGE)
        abort();
      if (e.kind != SR_NETALLOW_RANGE) {
        struct sr_netallow l = {0};
        char name[SR_NETALLOW_NAME_MAX + 8];
        if (sr_netallow_add(&l, &e) < 0)
          abort();
        probe_name(&e, name, sizeof(name));
        if (strlen(name) <= SR_NETALLOW_NAME_MAX &&
            !sr_netallow_match_name(&l, name, e.port))
          abort();
        /* A suffix never admits itself. */
        if (e.kind == SR_NETALLOW_SUFFIX &&
            sr_netallow_match_name(&l, e.host, e.port))
          abort();
        sr_netallow_done(&l);
      }
    } else if (!why[0]) {
      abort(); /* every refusal says why */
    }
    struct sr_netallow_entry t;
    (void)sr_netallow_parse_tool(s, &t, why, sizeof(why));
    break;
  }
  case 1:
    fuzz_intersect(s);
    break;
  case 2: {
    struct sr_nethosts h = {0};
    size_t line = 0;
    if (sr_nethosts_parse((const char *)data, size, &h, &line, why,
                          sizeof(why)) == 0) {
      for (size_t i = 0; i < h.n; i++) {
        struct sr_netaddr a[4];
        if (sr_nethosts_lookup(&h, h.v[i].name, a, 4) == 0)
          abort();
      }
      sr_nethosts_done(&h);
    }
    break;
  }
  case 3: {
    struct sr_nethost h;
    const char *host;
    size_t hl;
    uint16_t port = 0;
    bool has;
    if (sr_nethost_parse((const char *)data, size, &h) == 0 && !h.is_addr) {
      /* A normalised name is a fixed point. */
      struct sr_nethost again;
      if (sr_nethost_parse(h.name, strlen(h.name), &again) < 0 ||
          strcmp(again.name, h.name) != 0)
        abort();
    }
    if (sr_netallow_split_hostport((const char *)data, size, &host, &hl, &port,
                                   &has) == 0 &&
        (hl == 0 || host < (const char *)data ||
         host + hl > (const char *)data + size || (has && port == 0)))
      abort();
    break;
  }
  case 4: {
    struct sr_netaddr a;
    if (sr_netaddr_parse((const char *)data, size, &a) == 0) {
      char buf[64];
      struct sr_netaddr back;
      enum sr_netaddr_class c = sr_netaddr_classify(&a);
      if (c >= SR__NETADDR_CLASS_MAX || c == SR_NETADDR_HOST)
        abort();
      sr_netaddr_format(&a, buf, sizeof(buf));
      if (sr_netaddr_parse(buf, strlen(buf), &back) < 0 ||
          memcmp(&a, &back, sizeof(a)) != 0)
        abort();
    }
    break;
  }
  }
  free(s);
  return 0;
}
