/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy's wire formats: HTTP request heads and SOCKS5 messages
 * from the sandbox, the proxy's replies, the records for the supervisor.
 * Pure code: every parser takes a buffer and a length, caps what it
 * accepts and is fuzzed (tests/fuzz/fuzz-proxyproto.c).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proxyproto.h"
#include "util.h"

static char lower(char c) {
  /* A table, not arithmetic: no int -> char narrowing. */
  if (c >= 'A' && c <= 'Z')
    return "abcdefghijklmnopqrstuvwxyz"[c - 'A'];
  return c;
}

/* RFC 9110 tchar. */
static bool is_tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
      (c >= 'A' && c <= 'Z'))
    return true;
  return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool ieq(const char *a, size_t alen, const char *b) {
  size_t blen = strlen(b);

  if (alen != blen)
    return false;
  for (size_t i = 0; i < alen; i++)
    if (lower(a[i]) != lower(b[i]))
      return false;
  return true;
}

static bool ihasprefix(const char *a, size_t alen, const char *prefix) {
  size_t n = strlen(prefix);
  return alen >= n && ieq(a, n, prefix);
}

static const char *find_crlf2(const char *buf, size_t len) {
  for (size_t i = 0; i + 3 < len; i++)
    if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' &&
        buf[i + 3] == '\n')
      return buf + i;
  return NULL;
}

static const char *find_crlf(const char *p, const char *end) {
  for (; p + 1 < end; p++)
    if (p[0] == '\r' && p[1] == '\n')
      return p;
  return NULL;
}

/* One header line within [p, end): name and value (OWS trimmed). */
struct header {
  const char *name, *value;
  size_t name_len, value_len, line_len; /* line_len includes CRLF */
};

/* Parses the header line at p (which ends in CRLF before end).  0 or
 * -EBADMSG. */
static int parse_header(const char *p, const char *end, struct header *h) {
  const char *eol = p, *colon = NULL, *v, *ve;

  while (eol + 1 < end && !(eol[0] == '\r' && eol[1] == '\n'))
    eol++;
  if (eol + 1 >= end)
    return -EBADMSG;
  for (const char *c = p; c < eol; c++)
    if (*c == ':') {
      colon = c;
      break;
    }
  if (!colon || colon == p)
    return -EBADMSG;
  for (const char *c = p; c < colon; c++)
    if (!is_tchar(*c))
      return -EBADMSG; /* also refuses "Name :" and obs-fold lines */
  v = colon + 1;
  ve = eol;
  for (const char *c = v; c < ve; c++) {
    unsigned char u = (unsigned char)*c;
    if ((u < 0x20 && u != '\t') || u == 0x7f)
      return -EBADMSG;
  }
  while (v < ve && (*v == ' ' || *v == '\t'))
    v++;
  while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
    ve--;
  h->name = p;
  h->name_len = (size_t)(colon - p);
  h->value = v;
  h->value_len = (size_t)(ve - v);
  h->line_len = (size_t)(eol + 2 - p);
  return 0;
}

/* host[:port] text (an authority) into host and port (default dflt). */
static int parse_authority(const char *s, size_t len, uint16_t dflt,
                           struct sr_nethost *host, uint16_t *port,
                           bool need_port) {
  const char *h;
  size_t hl;
  bool has_port = false;
  uint16_t p = dflt;

  if (sr_netallow_split_hostport(s, len, &h, &hl, &p, &has_port) < 0)
    return -EBADMSG;
  if (need_port && !has_port)
    return -EBADMSG;
  /* split_hostport strips brackets; nethost_parse takes the bare form. */
  if (sr_nethost_parse(h, hl, host) < 0)
    return -EINVAL;
  /* Brackets hold an IPv6 address and nothing else (RFC 3986, 3.2.2):
   * "[name]:port" and "[10.0.0.1]" are malformed; and an IPv6 address
   * must come in brackets. */
  if (s[0] == '[' ? !(host->is_addr && memchr(h, ':', hl))
                  : host->is_addr && memchr(h, ':', hl))
    return -EBADMSG;
  *port = p;
  return 0;
}

static bool same_host(const struct sr_nethost *a, const struct sr_nethost *b) {
  if (a->is_addr != b->is_addr)
    return false;
  if (a->is_addr)
    return memcmp(&a->addr, &b->addr, sizeof(a->addr)) == 0;
  return strcmp(a->name, b->name) == 0;
}

#define WHY(s)                                                                 \
  do {                                                                         \
    if (why)                                                                   \
      *why = (s);                                                              \
  } while (0)

int sr_http_parse_request(const char *buf, size_t len,
                          struct sr_http_request *req, const char **why) {
  struct sr_http_request r;
  const char *end, *p, *sp1, *sp2, *eol, *target;
  size_t scan = len < SR_HTTP_HEAD_MAX ? len : SR_HTTP_HEAD_MAX;
  size_t tlen, n_headers = 0;
  int hosts = 0;

  memset(&r, 0, sizeof(r));
  end = find_crlf2(buf, scan);
  if (!end) {
    if (memchr(buf, '\0', scan)) {
      WHY("NUL byte in the request head");
      return -EBADMSG;
    }
    if (len >= SR_HTTP_HEAD_MAX) {
      WHY("request head larger than 8 KiB");
      return -E2BIG;
    }
    return -EAGAIN;
  }
  end += 4; /* past the blank line */
  r.head_len = (size_t)(end - buf);
  for (const char *c = buf; c < end; c++)
    if (*c == '\0' || (*c == '\n' && (c == buf || c[-1] != '\r'))) {
      WHY("NUL byte or bare LF in the request head");
      return -EBADMSG;
    }

  /* Request line: METHOD SP TARGET SP HTTP/1.x CRLF */
  eol = find_crlf(buf, end);
  if (!eol) {
    WHY("no request line");
    return -EBADMSG;
  }
  if (ihasprefix(buf, (size_t)(eol - buf), "PRI * HTTP/2")) {
    WHY("HTTP/2 is not supported by the proxy");
    return -EPROTONOSUPPORT;
  }
  for (sp1 = buf; sp1 < eol && is_tchar(*sp1); sp1++)
    ;
  if (sp1 == buf || sp1 >= eol || *sp1 != ' ') {
    WHY("malformed request line");
    return -EBADMSG;
  }
  target = sp1 + 1;
  for (sp2 = target; sp2<eol && * sp2> 0x20 && *sp2 < 0x7f; sp2++)
    ;
  if (sp2 == target || sp2 >= eol || *sp2 != ' ') {
    WHY("malformed request line");
    return -EBADMSG;
  }
  tlen = (size_t)(sp2 - target);
  if ((size_t)(eol - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
      !(sp2[8] == '0' || sp2[8] == '1')) {
    WHY("only HTTP/1.0 and HTTP/1.1 are supported");
    return -EBADMSG;
  }
  r.minor = (unsigned)(sp2[8] - '0');

  /* Methods are case-sensitive (RFC 9110 9.1). */
  if ((size_t)(sp1 - buf) == 7 && memcmp(buf, "CONNECT", 7) == 0) {
    int e;
    r.kind = SR_HTTP_CONNECT;
    e = parse_authority(target, tlen, 0, &r.host, &r.port, true);
    if (e < 0) {
      WHY(e == -EINVAL ? "the CONNECT target is not a valid host"
                       : "the CONNECT target must be host:port");
      return e;
    }
  } else {
    const char *auth, *aend, *tend = target + tlen;
    int e;

    r.kind = SR_HTTP_FORWARD;
    r.method_off = 0;
    r.method_len = (size_t)(sp1 - buf);
    if (!ihasprefix(target, tlen, "http://")) {
      if (memchr(target, ':', tlen) && !(target[0] == '/')) {
        WHY("only http:// URLs are forwarded; use CONNECT for https");
      } else {
        WHY("not a proxy request (the target must be an absolute "
            "http:// URL)");
      }
      return -EPROTONOSUPPORT;
    }
    auth = target + 7;
    for (aend = auth;
         aend < tend && *aend != '/' && *aend != '?' && *aend != '#'; aend++)
      ;
    if (memchr(auth, '@', (size_t)(aend - auth))) {
      WHY("user info in the URL is not supported");
      return -EBADMSG;
    }
    if (memchr(aend, '#', (size_t)(tend - aend))) {
      WHY("a fragment in the request target");
      return -EBADMSG;
    }
    e = parse_authority(auth, (size_t)(aend - auth), 80, &r.host, &r.port,
                        false);
    if (e < 0) {
      WHY(e == -EINVAL ? "the URL's host is not a valid host"
                       : "malformed URL authority");
      return e;
    }
    r.authority_off = (size_t)(auth - buf);
    r.authority_len = (size_t)(aend - auth);
    r.path_off = (size_t)(aend - buf);
    r.path_len = (size_t)(tend - aend);
  }

  /* Headers. */
  for (p = eol + 2; p < end - 2;) {
    struct header h;

    if (++n_headers > SR_HTTP_HEADERS_MAX) {
      WHY("too many header lines");
      return -EBADMSG;
    }
    if (parse_header(p, end, &h) < 0) {
      WHY("malformed header line");
      return -EBADMSG;
    }
    if (ieq(h.name, h.name_len, "host")) {
      struct sr_nethost hh;
      uint16_t hp;

      if (++hosts > 1) {
        WHY("more than one Host header");
        return -EBADMSG;
      }
      if (r.kind == SR_HTTP_FORWARD &&
          (parse_authority(h.value, h.value_len, 80, &hh, &hp, false) < 0 ||
           !same_host(&hh, &r.host) || hp != r.port)) {
        WHY("the Host header does not match the request target");
        return -EBADMSG;
      }
    }
    p += h.line_len;
  }
  r.have_host_header = hosts > 0;
  *req = r;
  return 0;
}

static bool is_hop_by_hop(const char *name, size_t len) {
  static const char *const hop[] = {"connection",
                                    "proxy-connection",
                                    "keep-alive",
                                    "proxy-authorization",
                                    "proxy-authenticate",
                                    "te",
                                    "upgrade"};
  for (size_t i = 0; i < SR_ARRAY_SIZE(hop); i++)
    if (ieq(name, len, hop[i]))
      return true;
  return false;
}

/* Never removed, whatever Connection names: they frame the request. */
static bool is_framing(const char *name, size_t len) {
  return ieq(name, len, "host") || ieq(name, len, "content-length") ||
         ieq(name, len, "transfer-encoding");
}

/* Whether header `name` is listed in a Connection header of the head. */
static bool named_by_connection(const char *buf, size_t start, size_t end,
                                const char *name, size_t name_len) {
  for (size_t p = start; p + 2 < end;) {
    struct header h;
    if (parse_header(buf + p, buf + end, &h) < 0)
      return false;
    if (ieq(h.name, h.name_len, "connection")) {
      const char *v = h.value, *ve = h.value + h.value_len;
      while (v < ve) {
        const char *t = v, *te;
        while (v < ve && *v != ',')
          v++;
        te = v;
        while (t < te && (*t == ' ' || *t == '\t'))
          t++;
        while (te > t && (te[-1] == ' ' || te[-1] == '\t'))
          te--;
        if ((size_t)(te - t) == name_len) {
          bool same = true;
          for (size_t i = 0; i < name_len; i++)
            if (lower(t[i]) != lower(name[i]))
              same = false;
          if (same)
            return true;
        }
        if (v < ve)
          v++;
      }
    }
    p += h.line_len;
  }
  return false;
}

struct out {
  char *buf;
  size_t cap, len;
  bool overflow;
};

static void put(struct out *o, const char *s, size_t n) {
  if (o->overflow || n > o->cap - o->len) {
    o->overflow = true;
    return;
  }
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}
static void puts_(struct out *o, const char *s) {
  put(o, s, strlen(s));
}

int sr_http_forward_head(const char *buf, const struct sr_http_request *req,
                         char *out_buf, size_t cap, size_t *out_len) {
  struct out o = {.buf = out_buf, .cap = cap};
  const char *eol;
  size_t start, end = req->head_len;

  if (req->kind != SR_HTTP_FORWARD)
    return -EINVAL;
  put(&o, buf + req->method_off, req->method_len);
  puts_(&o, " ");
  if (req->path_len == 0 || buf[req->path_off] == '?')
    puts_(&o, "/");
  put(&o, buf + req->path_off, req->path_len);
  puts_(&o, req->minor ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");

  eol = find_crlf(buf, buf + end);
  if (!eol)
    return -EINVAL; /* parsed before: cannot happen */
  start = (size_t)(eol - buf) + 2;
  for (size_t p = start; p + 2 < end;) {
    struct header h;
    if (parse_header(buf + p, buf + end, &h) < 0)
      return -EINVAL; /* parsed before: cannot happen */
    if (is_framing(h.name, h.name_len) ||
        (!is_hop_by_hop(h.name, h.name_len) &&
         !named_by_connection(buf, start, end, h.name, h.name_len)))
      put(&o, buf + p, h.line_len);
    p += h.line_len;
  }
  if (!req->have_host_header) {
    puts_(&o, "Host: ");
    put(&o, buf + req->authority_off, req->authority_len);
    puts_(&o, "\r\n");
  }
  puts_(&o, "Connection: close\r\n\r\n");
  if (o.overflow)
    return -ENOBUFS;
  *out_len = o.len;
  return 0;
}

static const char *status_text(unsigned status) {
  switch (status) {
  case 200:
    return "Connection Established";
  case 400:
    return "Bad Request";
  case 403:
    return "Forbidden";
  case 408:
    return "Request Timeout";
  case 429:
    return "Too Many Requests";
  case 431:
    return "Request Header Fields Too Large";
  case 501:
    return "Not Implemented";
  case 502:
    return "Bad Gateway";
  case 503:
    return "Service Unavailable";
  case 504:
    return "Gateway Timeout";
  default:
    return "Error";
  }
}

size_t sr_http_response(unsigned status, const char *proxy_error,
                        const char *message, char *out, size_t cap) {
  int n;

  if (status == 200)
    n = snprintf(out, cap, "HTTP/1.1 200 Connection Established\r\n\r\n");
  else
    n = snprintf(out, cap,
                 "HTTP/1.1 %u %s\r\n%s%s%s"
                 "Content-Type: text/plain; charset=utf-8\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
                 status, status_text(status),
                 proxy_error ? "X-Proxy-Error: " : "",
                 proxy_error ? proxy_error : "", proxy_error ? "\r\n" : "",
                 strlen(message) + 1, message);
  if (n < 0 || (size_t)n >= cap)
    return 0;
  return (size_t)n;
}

/* ---------------------------------------------------------------- SOCKS5 */

int sr_socks_parse_greeting(const uint8_t *b, size_t len, size_t *used,
                            bool *noauth) {
  size_t n;

  if (len < 1)
    return -EAGAIN;
  if (b[0] != SR_SOCKS_VERSION)
    return -EBADMSG;
  if (len < 2)
    return -EAGAIN;
  n = b[1];
  if (n == 0)
    return -EBADMSG;
  if (len < 2 + n)
    return -EAGAIN;
  *noauth = memchr(b + 2, 0, n) != NULL;
  *used = 2 + n;
  return 0;
}

int sr_socks_parse_request(const uint8_t *b, size_t len, size_t *used,
                           struct sr_socks_request *req, uint8_t *rep) {
  struct sr_socks_request r;
  size_t need, alen = 0;

  memset(&r, 0, sizeof(r));
  *rep = SR_SOCKS_REP_FAILURE;
  if (len < 4)
    return -EAGAIN;
  if (b[0] != SR_SOCKS_VERSION || b[2] != 0)
    return -EBADMSG;
  r.cmd = b[1];
  r.atyp = b[3];
  switch (r.atyp) {
  case 1:
    alen = 4;
    need = 4 + 4 + 2;
    break;
  case 4:
    alen = 16;
    need = 4 + 16 + 2;
    break;
  case 3:
    if (len < 5)
      return -EAGAIN;
    alen = b[4];
    if (alen == 0)
      return -EBADMSG;
    need = 5 + alen + 2;
    break;
  default:
    *rep = SR_SOCKS_REP_ATYP_UNSUPPORTED;
    return -EPROTONOSUPPORT;
  }
  if (len < need)
    return -EAGAIN;
  if (r.cmd != 1) {
    *rep = SR_SOCKS_REP_CMD_UNSUPPORTED;
    return -EPROTONOSUPPORT;
  }
  r.port = (uint16_t)(b[need - 2] << 8 | b[need - 1]);
  if (r.port == 0)
    return -EBADMSG;
  if (r.atyp == 1) {
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0,    0,
                                       0, 0, 0, 0, 0xff, 0xff};
    r.host.is_addr = true;
    memcpy(r.host.addr.b, mapped, 12);
    memcpy(r.host.addr.b + 12, b + 4, 4);
  } else if (r.atyp == 4) {
    r.host.is_addr = true;
    memcpy(r.host.addr.b, b + 4, 16);
  } else {
    if (memchr(b + 5, '\0', alen) ||
        sr_nethost_parse((const char *)b + 5, alen, &r.host) < 0) {
      *rep = SR_SOCKS_REP_HOST_UNREACH;
      return -EINVAL;
    }
  }
  *used = need;
  *req = r;
  *rep = SR_SOCKS_REP_OK;
  return 0;
}

size_t sr_socks_reply(uint8_t rep, const struct sr_netaddr *bnd, uint16_t port,
                      uint8_t out[22]) {
  out[0] = SR_SOCKS_VERSION;
  out[1] = rep;
  out[2] = 0;
  if (bnd && !sr_netaddr_is_v4(bnd)) {
    out[3] = 4;
    memcpy(out + 4, bnd->b, 16);
    out[20] = (uint8_t)(port >> 8);
    out[21] = (uint8_t)port;
    return 22;
  }
  out[3] = 1;
  if (bnd)
    memcpy(out + 4, bnd->b + 12, 4);
  else
    memset(out + 4, 0, 4);
  out[8] = (uint8_t)(bnd ? port >> 8 : 0);
  out[9] = (uint8_t)(bnd ? port : 0);
  return 10;
}

/* ---------------------------------------------------------------- records */

void sr_proxy_record_encode(const struct sr_proxy_event *ev,
                            struct sr_proxy_wire *w) {
  const char *text = ev->type == SR_PROXY_REC_FATAL ? ev->message : ev->host;

  memset(w, 0, sizeof(*w));
  w->magic = SR_PROXY_WIRE_MAGIC;
  w->version = SR_PROXY_WIRE_VERSION;
  w->type = (uint16_t)ev->type;
  w->id = ev->id;
  w->protocol = (uint8_t)ev->protocol;
  w->allowed = ev->allowed ? 1 : 0;
  w->reason = (uint8_t)ev->reason;
  w->addr_class = (uint8_t)ev->addr_class;
  w->have_addr = ev->have_addr ? 1 : 0;
  w->port = ev->port;
  if (ev->have_addr)
    memcpy(w->addr, ev->addr.b, 16);
  w->bytes_out = ev->bytes_out;
  w->bytes_in = ev->bytes_in;
  w->duration_ms = ev->duration_ms;
  switch (ev->type) {
  case SR_PROXY_REC_SUMMARY:
    w->n1 = ev->connections;
    w->n2 = ev->denied;
    w->bytes_out = ev->total_out;
    w->bytes_in = ev->total_in;
    break;
  case SR_PROXY_REC_EGRESS_LIMIT:
    w->n1 = ev->limit;
    w->n2 = ev->used;
    break;
  default:
    break;
  }
  w->dropped = ev->dropped;
  (void)snprintf(w->text, sizeof(w->text), "%s", text);
}

int sr_proxy_record_decode(const void *buf, size_t len,
                           struct sr_proxy_event *ev) {
  struct sr_proxy_wire w;
  struct sr_proxy_event e;
  size_t tl;

  if (len != sizeof(w))
    return -EBADMSG;
  memcpy(&w, buf, sizeof(w));
  if (w.magic != SR_PROXY_WIRE_MAGIC || w.version != SR_PROXY_WIRE_VERSION ||
      w.type == 0 || w.type >= SR__PROXY_REC_MAX ||
      w.protocol >= SR__PROXY_PROTO_MAX || w.allowed > 1 ||
      w.reason >= SR__PROXY_REASON_MAX ||
      w.addr_class >= SR__NETADDR_CLASS_MAX || w.have_addr > 1)
    return -EBADMSG;
  tl = strnlen(w.text, sizeof(w.text));
  if (tl == sizeof(w.text))
    return -EBADMSG;
  for (size_t i = 0; i < tl; i++) {
    unsigned char c = (unsigned char)w.text[i];
    if (c < 0x20 || c >= 0x7f)
      return -EBADMSG;
  }

  memset(&e, 0, sizeof(e));
  e.type = (enum sr_proxy_rec_type)w.type;
  e.id = w.id;
  e.protocol = (enum sr_proxy_protocol)w.protocol;
  e.allowed = w.allowed;
  e.reason = (enum sr_proxy_reason)w.reason;
  e.addr_class = (enum sr_netaddr_class)w.addr_class;
  e.have_addr = w.have_addr;
  e.port = w.port;
  if (e.have_addr)
    memcpy(e.addr.b, w.addr, 16);
  e.dropped = w.dropped;
  switch (e.type) {
  case SR_PROXY_REC_CONNECTION:
    /* The host is what the proxy accepted as a host name or address; a
     * record that names anything else did not come from it. */
    if (tl) {
      struct sr_nethost h;
      if (sr_nethost_parse(w.text, tl, &h) < 0)
        return -EBADMSG;
    }
    memcpy(e.host, w.text, tl + 1);
    e.bytes_out = w.bytes_out;
    e.bytes_in = w.bytes_in;
    e.duration_ms = w.duration_ms;
    break;
  case SR_PROXY_REC_SUMMARY:
    e.connections = w.n1;
    e.denied = w.n2;
    e.total_out = w.bytes_out;
    e.total_in = w.bytes_in;
    break;
  case SR_PROXY_REC_EGRESS_LIMIT:
    e.limit = w.n1;
    e.used = w.n2;
    break;
  case SR_PROXY_REC_FATAL:
    memcpy(e.message, w.text, tl + 1);
    break;
  default:
    break;
  }
  *ev = e;
  return 0;
}

const char *sr_proxy_protocol_name(enum sr_proxy_protocol p) {
  static const char *const names[] = {
      [SR_PROXY_PROTO_UNKNOWN] = "unknown",
      [SR_PROXY_PROTO_CONNECT] = "connect",
      [SR_PROXY_PROTO_HTTP] = "http",
      [SR_PROXY_PROTO_SOCKS5] = "socks5",
  };
  if ((unsigned)p >= SR_ARRAY_SIZE(names))
    return "unknown";
  return names[p];
}

const char *sr_proxy_reason_name(enum sr_proxy_reason r) {
  static const char *const names[] = {
      [SR_PROXY_CLOSED] = "closed",
      [SR_PROXY_NOT_ALLOWLISTED] = "not_allowlisted",
      [SR_PROXY_BLOCKED_ADDRESS] = "blocked_address",
      [SR_PROXY_BAD_DESTINATION] = "bad_destination",
      [SR_PROXY_RESOLVE_FAILED] = "resolve_failed",
      [SR_PROXY_CONNECT_FAILED] = "connect_failed",
      [SR_PROXY_CONNECT_TIMEOUT] = "connect_timeout",
      [SR_PROXY_CONNECTION_LIMIT] = "connection_limit",
      [SR_PROXY_EGRESS_LIMIT] = "egress_limit",
      [SR_PROXY_PROTOCOL_ERROR] = "protocol_error",
      [SR_PROXY_UNSUPPORTED] = "unsupported",
      [SR_PROXY_HANDSHAKE_TIMEOUT] = "handshake_timeout",
      [SR_PROXY_IDLE_TIMEOUT] = "idle_timeout",
      [SR_PROXY_SHUTDOWN] = "shutdown",
      [SR_PROXY_INTERNAL_ERROR] = "internal_error",
  };
  if ((unsigned)r >= SR_ARRAY_SIZE(names))
    return "unknown";
  return names[r];
}

json_t *sr_proxy_event_json(const struct sr_proxy_event *ev) {
  char addr[64];

  if (ev->type == SR_PROXY_REC_SUMMARY)
    return json_pack(
        "{s:I, s:I, s:I, s:I, s:I}", "connections", (json_int_t)ev->connections,
        "denied", (json_int_t)ev->denied, "bytes_out",
        (json_int_t)ev->total_out, "bytes_in", (json_int_t)ev->total_in,
        "records_dropped", (json_int_t)ev->dropped);
  if (ev->type != SR_PROXY_REC_CONNECTION)
    return NULL;
  if (ev->have_addr)
    sr_netaddr_format(&ev->addr, addr, sizeof(addr));
  return json_pack(
      "{s:I, s:s, s:o, s:o, s:o, s:o, s:s, s:s, s:I, s:I, s:I}", "connection",
      (json_int_t)ev->id, "protocol", sr_proxy_protocol_name(ev->protocol),
      "host", ev->host[0] ? json_string(ev->host) : json_null(), "port",
      ev->port ? json_integer(ev->port) : json_null(), "address",
      ev->have_addr ? json_string(addr) : json_null(), "address_class",
      ev->have_addr ? json_string(sr_netaddr_class_name(ev->addr_class))
                    : json_null(),
      "decision", ev->allowed ? "allowed" : "denied", "reason",
      sr_proxy_reason_name(ev->reason), "bytes_out", (json_int_t)ev->bytes_out,
      "bytes_in", (json_int_t)ev->bytes_in, "duration_ms",
      (json_int_t)ev->duration_ms);
}

/* ---------------------------------------------------------------- env */

int sr_proxy_env(uint16_t port, struct sr_strv *env) {
  static const struct {
    const char *name, *scheme;
  } vars[SR_PROXY_ENV_N] = {
      {"http_proxy", "http"},   {"HTTP_PROXY", "http"},
      {"https_proxy", "http"},  {"HTTPS_PROXY", "http"},
      {"all_proxy", "socks5h"}, {"ALL_PROXY", "socks5h"},
      {"no_proxy", NULL},       {"NO_PROXY", NULL},
  };

  for (size_t i = 0; i < SR_PROXY_ENV_N; i++) {
    char buf[96];
    int r;

    if (vars[i].scheme)
      (void)snprintf(buf, sizeof(buf), "%s=%s://127.0.0.1:%u", vars[i].name,
                     vars[i].scheme, (unsigned)port);
    else
      (void)snprintf(buf, sizeof(buf), "%s=localhost,127.0.0.1,::1",
                     vars[i].name);
    r = sr_strv_push(env, buf);
    if (r < 0)
      return r;
  }
  return 0;
}
