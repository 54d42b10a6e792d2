/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer: the proxy's wire formats (proxyproto.c): HTTP request heads
 * and the head forwarded from them, SOCKS5 messages, and the records the
 * supervisor decodes.  The first byte picks the parser.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proxyproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_http(const char *buf, size_t len) {
  struct sr_http_request r;
  const char *why = NULL;
  int e = sr_http_parse_request(buf, len, &r, &why);

  if (e != 0) {
    if (e != -EAGAIN && !why)
      abort(); /* every refusal says why */
    return;
  }
  if (r.head_len > len || r.head_len > SR_HTTP_HEAD_MAX || r.port == 0)
    abort();
  if (!r.host.is_addr &&
      (r.host.name[0] == '\0' || strlen(r.host.name) > SR_NETALLOW_NAME_MAX))
    abort();
  if (r.kind == SR_HTTP_FORWARD) {
    size_t cap = r.head_len + SR_HTTP_FORWARD_EXTRA, n = 0;
    char *out = malloc(cap);
    if (!out)
      abort();
    if (sr_http_forward_head(buf, &r, out, cap, &n) < 0)
      abort(); /* the documented room always suffices */
    if (n < 4 || n > cap || memcmp(out + n - 4, "\r\n\r\n", 4) != 0)
      abort();
    /* No hop-by-hop header survives, and the head is one request. */
    for (size_t i = 0; i + 2 < n; i++) {
      if (out[i] == '\n' &&
          (strncasecmp(out + i + 1, "proxy-connection:", 17) == 0 ||
           strncasecmp(out + i + 1, "proxy-authorization:", 20) == 0 ||
           strncasecmp(out + i + 1, "keep-alive:", 11) == 0))
        abort();
      if (out[i] == '\r' && out[i + 1] == '\n' && out[i + 2] == '\r' &&
          i + 4 != n)
        abort();
    }
    free(out);
  }
}

static void fuzz_socks(const uint8_t *b, size_t len) {
  struct sr_socks_request r;
  size_t used = 0;
  bool noauth;
  uint8_t rep = 0, out[22];
  int e;

  if (sr_socks_parse_greeting(b, len, &used, &noauth) == 0 && used > len)
    abort();
  e = sr_socks_parse_request(b, len, &used, &r, &rep);
  if (e == 0) {
    if (used > len || r.port == 0 || rep != 0)
      abort();
    if (sr_socks_reply(0, r.host.is_addr ? &r.host.addr : NULL, r.port, out) >
        sizeof(out))
      abort();
  } else if (e != -EAGAIN && rep == 0) {
    abort(); /* a refusal always has a reply code */
  }
}

static void fuzz_record(const uint8_t *b, size_t len) {
  struct sr_proxy_event ev, again;
  struct sr_proxy_wire w;
  json_t *o;

  if (sr_proxy_record_decode(b, len, &ev) < 0)
    return;
  /* What decodes re-encodes to something that decodes the same. */
  sr_proxy_record_encode(&ev, &w);
  if (sr_proxy_record_decode(&w, sizeof(w), &again) < 0 ||
      memcmp(&ev, &again, sizeof(ev)) != 0)
    abort();
  o = sr_proxy_event_json(&ev);
  if (ev.type == SR_PROXY_REC_CONNECTION || ev.type == SR_PROXY_REC_SUMMARY) {
    if (!o)
      abort();
    char *s = json_dumps(o, JSON_COMPACT);
    if (!s)
      abort();
    free(s);
  }
  json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf;

  if (size < 1 || size > 3 * SR_HTTP_HEAD_MAX)
    return 0;
  buf = malloc(size);
  if (!buf)
    abort();
  memcpy(buf, data + 1, size - 1);
  switch (data[0] % 3) {
  case 0:
    fuzz_http(buf, size - 1);
    break;
  case 1:
    fuzz_socks((const uint8_t *)buf, size - 1);
    break;
  case 2:
    /* Records are fixed-size: pad short inputs so the decoder's checks
     * past the size are reached too. */
    if (size - 1 < sizeof(struct sr_proxy_wire)) {
      uint8_t w[sizeof(struct sr_proxy_wire)] = {0};
      struct sr_proxy_wire head = {.magic = SR_PROXY_WIRE_MAGIC,
                                   .version = SR_PROXY_WIRE_VERSION};
      memcpy(w, &head, 8);
      memcpy(w + 8, buf, size - 1 < sizeof(w) - 8 ? size - 1 : sizeof(w) - 8);
      fuzz_record(w, sizeof(w));
    } else {
      fuzz_record((const uint8_t *)buf, size - 1);
    }
    break;
  }
  free(buf);
  return 0;
}
