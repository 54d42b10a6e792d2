/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The network allowlist: entries, matching, intersection, address classes,
 * hosts files.  Pure code (no syscalls): everything here is a function of
 * its arguments, so the unit tests and the fuzzer reach all of it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "netallow.h"

_printf_(3, 4) static int fail(char *why, size_t why_len, const char *fmt,
                               ...) {
  va_list ap;

  va_start(ap, fmt);
  if (why && why_len)
    /* False positive: va_start() just above initialised ap; clang 14's
     * valist checker reports this call all the same.
     * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    (void)vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

static char lower(char c) {
  /* A table, not arithmetic: no int -> char narrowing. */
  if (c >= 'A' && c <= 'Z')
    return "abcdefghijklmnopqrstuvwxyz"[c - 'A'];
  return c;
}
static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
static bool is_alpha(char c) {
  c = lower(c);
  return c >= 'a' && c <= 'z';
}

/* ---------------------------------------------------------------- addresses
 */

bool sr_netaddr_is_v4(const struct sr_netaddr *a) {
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return memcmp(a->b, mapped, sizeof(mapped)) == 0;
}

static void set_v4(struct sr_netaddr *a, const uint8_t v4[4]) {
  memset(a->b, 0, 10);
  a->b[10] = 0xff;
  a->b[11] = 0xff;
  memcpy(a->b + 12, v4, 4);
}

/* Strict dotted quad: four decimal parts 0..255, no leading zeros (which
 * inet_aton would read as octal), nothing else. */
static int parse_v4(const char *s, size_t len, uint8_t out[4]) {
  size_t i = 0;

  for (int part = 0; part < 4; part++) {
    unsigned v = 0, digits = 0;

    if (part > 0) {
      if (i >= len || s[i] != '.')
        return -EINVAL;
      i++;
    }
    while (i < len && is_digit(s[i])) {
      if (digits > 0 && v == 0)
        return -EINVAL; /* leading zero */
      v = v * 10 + (unsigned)(s[i] - '0');
      if (v > 255)
        return -EINVAL;
      digits++;
      i++;
    }
    if (digits == 0)
      return -EINVAL;
    out[part] = (uint8_t)v;
  }
  return i == len ? 0 : -EINVAL;
}

int sr_netaddr_parse(const char *s, size_t len, struct sr_netaddr *out) {
  uint8_t v4[4];
  char buf[INET6_ADDRSTRLEN + 1];
  struct in6_addr in6;

  if (!s || len == 0)
    return -EINVAL;
  if (memchr(s, ':', len) == NULL) {
    if (parse_v4(s, len, v4) < 0)
      return -EINVAL;
    set_v4(out, v4);
    return 0;
  }
  if (len >= sizeof(buf) || memchr(s, '\0', len))
    return -EINVAL;
  memcpy(buf, s, len);
  buf[len] = '\0';
  /* inet_pton takes hex groups and an embedded dotted quad, never a zone
   * ("%eth0") or other shorthand. */
  if (inet_pton(AF_INET6, buf, &in6) != 1)
    return -EINVAL;
  memcpy(out->b, in6.s6_addr, 16);
  return 0;
}

void sr_netaddr_format(const struct sr_netaddr *a, char *buf, size_t len) {
  const void *src = a->b;
  int af = AF_INET6;

  if (sr_netaddr_is_v4(a)) {
    src = a->b + 12;
    af = AF_INET;
  }
  if (!inet_ntop(af, src, buf, (socklen_t)len) && len)
    buf[0] = '\0';
}

int sr_netaddr_from_sockaddr(const struct sockaddr *sa, size_t len,
                             struct sr_netaddr *out, uint16_t *port) {
  if (len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
    struct sockaddr_in sin;
    memcpy(&sin, sa, sizeof(sin));
    set_v4(out, (const uint8_t *)&sin.sin_addr.s_addr);
    if (port)
      *port = ntohs(sin.sin_port);
    return 0;
  }
  if (len >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6) {
    struct sockaddr_in6 sin6;
    memcpy(&sin6, sa, sizeof(sin6));
    memcpy(out->b, sin6.sin6_addr.s6_addr, 16);
    if (port)
      *port = ntohs(sin6.sin6_port);
    return 0;
  }
  return -EAFNOSUPPORT;
}

size_t sr_netaddr_to_sockaddr(const struct sr_netaddr *a, uint16_t port,
                              void *ss, size_t ss_len) {
  if (sr_netaddr_is_v4(a)) {
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (ss_len < sizeof(sin))
      return 0;
    memcpy(&sin.sin_addr.s_addr, a->b + 12, 4);
    memcpy(ss, &sin, sizeof(sin));
    return sizeof(sin);
  }
  struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6,
                              .sin6_port = htons(port)};
  if (ss_len < sizeof(sin6))
    return 0;
  memcpy(sin6.sin6_addr.s6_addr, a->b, 16);
  memcpy(ss, &sin6, sizeof(sin6));
  return sizeof(sin6);
}

/* True when the first `prefix` bits of a and net agree. */
static bool in_prefix(const struct sr_netaddr *a, const struct sr_netaddr *net,
                      unsigned prefix) {
  unsigned full = prefix / 8, rest = prefix % 8;

  if (memcmp(a->b, net->b, full) != 0)
    return false;
  if (rest == 0)
    return true;
  uint8_t mask = (uint8_t)(0xffu << (8 - rest));
  return (a->b[full] & mask) == (net->b[full] & mask);
}

static bool host_bits_zero(const struct sr_netaddr *a, unsigned prefix) {
  for (unsigned bit = prefix; bit < 128; bit++)
    if (a->b[bit / 8] & (0x80u >> (bit % 8)))
      return false;
  return true;
}

struct range {
  const char *net; /* text, IPv4 or IPv6 */
  unsigned len;    /* prefix length in the text's own family */
  enum sr_netaddr_class cls;
};

/* IANA IPv4 and IPv6 special-purpose address registries (RFC 6890 and
 * updates), plus multicast.  Order does not matter: ranges in one class
 * table do not overlap with another class's. */
static const struct range v4_ranges[] = {
    {"0.0.0.0", 8, SR_NETADDR_UNSPECIFIED},
    {"10.0.0.0", 8, SR_NETADDR_PRIVATE},
    {"100.64.0.0", 10, SR_NETADDR_SHARED},
    {"127.0.0.0", 8, SR_NETADDR_LOOPBACK},
    {"169.254.0.0", 16, SR_NETADDR_LINK_LOCAL},
    {"172.16.0.0", 12, SR_NETADDR_PRIVATE},
    {"192.0.0.0", 24, SR_NETADDR_RESERVED},
    {"192.0.2.0", 24, SR_NETADDR_DOCUMENTATION},
    {"192.31.196.0", 24, SR_NETADDR_RESERVED}, /* AS112-v4 */
    {"192.52.193.0", 24, SR_NETADDR_RESERVED}, /* AMT */
    {"192.88.99.0", 24, SR_NETADDR_RESERVED},  /* 6to4 relay anycast */
    {"192.168.0.0", 16, SR_NETADDR_PRIVATE},
    {"192.175.48.0", 24, SR_NETADDR_RESERVED}, /* AS112 direct delegation */
    {"198.18.0.0", 15, SR_NETADDR_RESERVED},   /* benchmarking */
    {"198.51.100.0", 24, SR_NETADDR_DOCUMENTATION},
    {"203.0.113.0", 24, SR_NETADDR_DOCUMENTATION},
    {"224.0.0.0", 4, SR_NETADDR_MULTICAST},
    {"240.0.0.0", 4, SR_NETADDR_RESERVED}, /* incl. 255.255.255.255 */
};
static const struct range v6_ranges[] = {
    {"::", 128, SR_NETADDR_UNSPECIFIED},
    {"::1", 128, SR_NETADDR_LOOPBACK},
    {"::", 96, SR_NETADDR_RESERVED},          /* IPv4-compatible, deprecated */
    {"64:ff9b:1::", 48, SR_NETADDR_RESERVED}, /* local-use NAT64 */
    {"100::", 64, SR_NETADDR_RESERVED},       /* discard-only */
    {"2001:db8::", 32, SR_NETADDR_DOCUMENTATION},
    {"2001::", 23, SR_NETADDR_RESERVED}, /* IETF protocol assignments */
    {"2002::", 16, SR_NETADDR_RESERVED}, /* 6to4: carries any IPv4 */
    {"3fff::", 20, SR_NETADDR_DOCUMENTATION},
    {"5f00::", 16, SR_NETADDR_RESERVED}, /* SRv6 SIDs */
    {"fc00::", 7, SR_NETADDR_UNIQUE_LOCAL},
    {"fe80::", 10, SR_NETADDR_LINK_LOCAL},
    {"fec0::", 10, SR_NETADDR_PRIVATE}, /* site-local, deprecated */
    {"ff00::", 8, SR_NETADDR_MULTICAST},
};

static enum sr_netaddr_class classify_table(const struct sr_netaddr *a,
                                            const struct range *t, size_t n,
                                            bool v4) {
  enum sr_netaddr_class found = SR_NETADDR_PUBLIC;
  unsigned best = 0;

  /* The longest matching prefix wins (:: and ::1 inside ::/96). */
  for (size_t i = 0; i < n; i++) {
    struct sr_netaddr net;
    unsigned len = v4 ? t[i].len + 96 : t[i].len;

    if (sr_netaddr_parse(t[i].net, strlen(t[i].net), &net) < 0)
      continue; /* the table is constant; never happens */
    if (in_prefix(a, &net, len) && (found == SR_NETADDR_PUBLIC || len > best)) {
      found = t[i].cls;
      best = len;
    }
  }
  return found;
}

/* IPv6 forms that carry an IPv4 address the host would reach
 * (::ffff:0:a.b.c.d SIIT, 64:ff9b::a.b.c.d NAT64): true, and that
 * address (IPv4-mapped) into *v4. */
static bool carried_v4(const struct sr_netaddr *addr, struct sr_netaddr *v4) {
  static const uint8_t translated[12] = {0, 0, 0,    0,    0, 0,
                                         0, 0, 0xff, 0xff, 0, 0};
  static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0,
                                    0, 0,    0,    0,    0, 0};

  if (memcmp(addr->b, translated, 12) != 0 && memcmp(addr->b, nat64, 12) != 0)
    return false;
  set_v4(v4, addr->b + 12);
  return true;
}

enum sr_netaddr_class sr_netaddr_classify(const struct sr_netaddr *addr) {
  struct sr_netaddr v4;

  if (sr_netaddr_is_v4(addr))
    return classify_table(addr, v4_ranges, SR_ARRAY_SIZE(v4_ranges), true);
  /* A form that carries an IPv4 address: judge the IPv4 address. */
  if (carried_v4(addr, &v4))
    return classify_table(&v4, v4_ranges, SR_ARRAY_SIZE(v4_ranges), true);
  return classify_table(addr, v6_ranges, SR_ARRAY_SIZE(v6_ranges), false);
}

const char *sr_netaddr_class_name(enum sr_netaddr_class c) {
  static const char *const names[] = {
      [SR_NETADDR_PUBLIC] = "public",
      [SR_NETADDR_UNSPECIFIED] = "unspecified",
      [SR_NETADDR_LOOPBACK] = "loopback",
      [SR_NETADDR_PRIVATE] = "private",
      [SR_NETADDR_SHARED] = "shared",
      [SR_NETADDR_LINK_LOCAL] = "link_local",
      [SR_NETADDR_UNIQUE_LOCAL] = "unique_local",
      [SR_NETADDR_MULTICAST] = "multicast",
      [SR_NETADDR_DOCUMENTATION] = "documentation",
      [SR_NETADDR_RESERVED] = "reserved",
      [SR_NETADDR_HOST] = "host",
  };
  if ((unsigned)c >= SR_ARRAY_SIZE(names))
    return "unknown";
  return names[c];
}

/* ---------------------------------------------------------------- names */

/*
 * Validates and normalises a host name of len bytes into out (lowercase,
 * one trailing dot removed).  min_labels: 1 for names, 2 for a wildcard's
 * suffix.  0 or -EINVAL with why.
 */
static int normalise_name(const char *s, size_t len, unsigned min_labels,
                          char out[SR_NETALLOW_NAME_MAX + 1], char *why,
                          size_t why_len) {
  size_t label = 0, labels = 0, last_start = 0;

  if (len > 0 && s[len - 1] == '.')
    len--;
  if (len == 0)
    return fail(why, why_len, "empty host name");
  if (len > SR_NETALLOW_NAME_MAX)
    return fail(why, why_len, "host name longer than %d bytes",
                SR_NETALLOW_NAME_MAX);
  for (size_t i = 0; i <= len; i++) {
    char c = '.'; /* past the end: the last label ends */

    if (i < len)
      c = lower(s[i]);

    if (c == '.') {
      if (label == 0)
        return fail(why, why_len, "empty label in host name");
      if (out[i - 1] == '-' || out[i - label] == '-')
        return fail(why, why_len,
                    "a label may not start or end with '-' in host name");
      labels++;
      last_start = i - label;
      label = 0;
      if (i < len)
        out[i] = '.';
      continue;
    }
    if ((unsigned char)c >= 0x80)
      return fail(why, why_len,
                  "non-ASCII host name: write its punycode (xn--) form");
    if (!(is_alpha(c) || is_digit(c) || c == '-' || c == '_')) {
      if (c == '*')
        return fail(why, why_len,
                    "'*' is only allowed as the whole first label "
                    "(*.example.com)");
      if (c == '/')
        return fail(why, why_len,
                    "a path is not allowed: write the host "
                    "name only");
      if (c == '@')
        return fail(why, why_len, "user info is not allowed");
      if (c == ':')
        return fail(why, why_len,
                    "unexpected ':' in host name (IPv6 "
                    "addresses go in brackets)");
      return fail(why, why_len, "invalid character 0x%02x in host name",
                  (unsigned)(unsigned char)c);
    }
    if (++label > 63)
      return fail(why, why_len, "label longer than 63 bytes in host name");
    out[i] = c;
  }
  out[len] = '\0';
  /* A top-level label is never numeric; a name the resolver could read as
   * an address ("1.2.3", "0x7f000001") is refused. */
  if (!is_alpha(out[last_start]))
    return fail(why, why_len,
                "the last label of a host name must start with a letter");
  if (labels < min_labels)
    return fail(why, why_len,
                "'*.' needs a suffix of at least two labels (*.example.com, "
                "not *.com)");
  return 0;
}

/* 1..65535, decimal digits only. */
static int parse_port(const char *s, size_t len, uint16_t *port) {
  unsigned v = 0;

  if (len == 0 || len > 5)
    return -EINVAL;
  for (size_t i = 0; i < len; i++) {
    if (!is_digit(s[i]))
      return -EINVAL;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  if (v == 0 || v > 65535)
    return -EINVAL;
  *port = (uint16_t)v;
  return 0;
}

int sr_netallow_split_hostport(const char *s, size_t len, const char **host,
                               size_t *host_len, uint16_t *port,
                               bool *has_port) {
  const char *colon = NULL, *h = s;
  size_t hl = len;

  if (len == 0)
    return -EINVAL;
  if (s[0] == '[') {
    const char *close = memchr(s, ']', len);
    if (!close)
      return -EINVAL;
    h = s + 1;
    hl = (size_t)(close - h);
    if (close + 1 < s + len) {
      if (close[1] != ':')
        return -EINVAL;
      colon = close + 1;
    }
  } else {
    const char *first = memchr(s, ':', len);
    for (size_t i = len; i > 0; i--)
      if (s[i - 1] == ':') {
        colon = s + i - 1;
        break;
      }
    if (colon && first != colon)
      return -EINVAL; /* "2001:db8::1:443": which colon is the port's? */
    if (colon)
      hl = (size_t)(colon - s);
  }
  if (hl == 0)
    return -EINVAL;
  *has_port = colon != NULL;
  if (colon && parse_port(colon + 1, (size_t)(s + len - colon - 1), port) < 0)
    return -EINVAL;
  *host = h;
  *host_len = hl;
  return 0;
}

int sr_nethost_parse(const char *s, size_t len, struct sr_nethost *out) {
  if (!s || len == 0)
    return -EINVAL;
  if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
    s++;
    len -= 2;
    if (!memchr(s, ':', len))
      return -EINVAL; /* brackets are for IPv6 only */
  }
  if (sr_netaddr_parse(s, len, &out->addr) == 0) {
    out->is_addr = true;
    out->name[0] = '\0';
    return 0;
  }
  out->is_addr = false;
  return normalise_name(s, len, 1, out->name, NULL, 0);
}

/* ---------------------------------------------------------------- entries */

static void set_origin(struct sr_netallow_entry *e,
                       enum sr_netallow_origin origin, const char *where) {
  e->origin = e->bound_origin = origin;
  (void)snprintf(e->where, sizeof(e->where), "%s", where ? where : "");
  memcpy(e->bound_where, e->where, sizeof(e->where));
  e->narrowed = false;
}

static int parse_prefix(const char *s, size_t len, unsigned max,
                        unsigned *out) {
  unsigned v = 0;

  if (len == 0 || len > 3)
    return -EINVAL;
  for (size_t i = 0; i < len; i++) {
    if (!is_digit(s[i]) || (i == 0 && s[i] == '0' && len > 1))
      return -EINVAL;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  if (v > max)
    return -EINVAL;
  *out = v;
  return 0;
}

/* The IPv6 blocks that carry every IPv4 address, the ones
 * sr_netaddr_classify judges by the IPv4 address inside: IPv4-mapped (the
 * form an IPv4 entry takes here, which the proxy connects to over IPv4),
 * SIIT-translated and NAT64's well-known prefix.  A range containing one
 * of them permits every IPv4 address, the host's 127.0.0.1 included, however
 * the range is written ("[::ffff:0:0]/96", "[::]/80", "[::]/1",
 * "[64:ff9b::]/96"...).  IPv4-compatible ::/96 is not here: it is
 * reserved, and the host does not route it to IPv4. */
static const struct {
  const char *text;
  uint8_t b[12];
} all_v4[] = {
    {"::ffff:0:0/96 (IPv4-mapped)", {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}},
    {"::ffff:0:0:0/96 (IPv4-translated)",
     {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}},
    {"64:ff9b::/96 (NAT64)", {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}},
};

/* 0, or 1 + the index in all_v4 of a block that net/len contains. */
static int contains_all_v4(const struct sr_netaddr *net, unsigned len) {
  if (len > 96)
    return 0;
  for (size_t i = 0; i < SR_ARRAY_SIZE(all_v4); i++) {
    struct sr_netaddr block = {{0}};
    memcpy(block.b, all_v4[i].b, sizeof(all_v4[i].b));
    if (in_prefix(&block, net, len))
      return (int)i + 1;
  }
  return 0;
}

/* The address part of a literal entry: "a.b.c.d", "a.b.c.d/N", "v6" (from
 * inside brackets) with the prefix given apart. */
static int parse_literal(const char *addr, size_t alen, const char *prefix,
                         size_t plen, bool have_prefix,
                         struct sr_netallow_entry *e, char *why,
                         size_t why_len) {
  unsigned len;
  int r;
  bool v4 = memchr(addr, ':', alen) == NULL;

  if (sr_netaddr_parse(addr, alen, &e->addr) < 0)
    return fail(why, why_len, "invalid IP address '%.*s'", (int)alen, addr);
  if (v4 && !sr_netaddr_is_v4(&e->addr))
    return fail(why, why_len, "invalid IP address '%.*s'", (int)alen, addr);
  len = 128;
  if (have_prefix) {
    if (parse_prefix(prefix, plen, v4 ? 32 : 128, &len) < 0)
      return fail(why, why_len, "invalid prefix length '/%.*s' (0..%d)",
                  (int)plen, prefix, v4 ? 32 : 128);
    if (v4)
      len += 96;
  }
  if (len == 0 || (v4 && len == 96))
    return fail(why, why_len,
                "a /0 range would permit every address, including the "
                "host's loopback and private networks");
  if (!host_bits_zero(&e->addr, len))
    return fail(why, why_len,
                "'%.*s/%.*s' has host bits set: write the network address",
                (int)alen, addr, (int)plen, prefix);
  r = contains_all_v4(&e->addr, len);
  if (r)
    return fail(why, why_len,
                "'[%.*s]/%u' contains %s: it would permit every IPv4 "
                "address, including the host's loopback and private "
                "networks",
                (int)alen, addr, len, all_v4[r - 1].text);
  e->kind = SR_NETALLOW_RANGE;
  e->prefix = len;
  e->host[0] = '\0';
  return 0;
}

int sr_netallow_parse_entry(const char *text, unsigned flags,
                            enum sr_netallow_origin origin, const char *where,
                            struct sr_netallow_entry *out, char *why,
                            size_t why_len) {
  struct sr_netallow_entry e;
  size_t len, hlen, alen, plen = 0;
  const char *host, *slash, *prefix = NULL;
  uint16_t port = SR_NETALLOW_DEFAULT_PORT;
  bool has_port, literal;
  int r;

  memset(&e, 0, sizeof(e));
  if (!text || !*text)
    return fail(why, why_len, "empty entry");
  len = strlen(text);
  if (len > SR_NETALLOW_ENTRY_TEXT)
    return fail(why, why_len, "entry longer than %d bytes",
                SR_NETALLOW_ENTRY_TEXT);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x80)
      return fail(why, why_len,
                  "non-ASCII host name: write its punycode (xn--) form");
    if (c <= 0x20 || c == 0x7f)
      return fail(why, why_len, "whitespace or control character in entry");
  }
  if (strstr(text, "://"))
    return fail(why, why_len,
                "a URL is not an entry: write the host name only (and "
                ":PORT)");
  if (strchr(text, '@'))
    return fail(why, why_len, "user info is not allowed");
  if (strcmp(text, "*") == 0 || strncmp(text, "*:", 2) == 0)
    return fail(why, why_len, "'*' would allow every host; name the hosts");

  if (text[0] == '[') {
    /* "[v6]", "[v6]/N", each with an optional ":PORT". */
    const char *close = strchr(text, ']');
    const char *rest;
    if (!close)
      return fail(why, why_len, "missing ']' after an IPv6 address");
    rest = close + 1;
    host = text + 1;
    alen = (size_t)(close - host);
    if (*rest == '/') {
      prefix = rest + 1;
      plen = strcspn(prefix, ":");
      rest = prefix + plen;
    }
    if (*rest == ':') {
      if (parse_port(rest + 1, strlen(rest + 1), &port) < 0)
        return fail(why, why_len, "invalid port '%s' (1..65535)", rest + 1);
    } else if (*rest) {
      return fail(why, why_len, "unexpected '%s' after ']'", rest);
    }
    if (!memchr(host, ':', alen))
      return fail(why, why_len, "brackets are for IPv6 addresses only");
    if (!(flags & SR_NETALLOW_LITERALS))
      return fail(why, why_len,
                  "IP addresses and ranges are allowed only in a profile or "
                  "skillrun.conf");
    r = parse_literal(host, alen, prefix, plen, prefix != NULL, &e, why,
                      why_len);
    if (r < 0)
      return r;
    e.port = port;
    set_origin(&e, origin, where);
    *out = e;
    return 0;
  }

  if (sr_netallow_split_hostport(text, len, &host, &hlen, &port, &has_port) <
      0) {
    const char *c1 = strchr(text, ':');
    if (c1 && strchr(c1 + 1, ':'))
      return fail(why, why_len,
                  "an IPv6 address must be written in brackets: [%s]", text);
    if (c1)
      return fail(why, why_len, "invalid port '%s' (1..65535)", c1 + 1);
    return fail(why, why_len, "invalid entry");
  }
  if (!has_port)
    port = SR_NETALLOW_DEFAULT_PORT;

  /* A dotted quad, or a dotted quad with "/N", is a literal; anything else
   * with a digit-led last label is refused by the name rules. */
  slash = memchr(host, '/', hlen);
  alen = slash ? (size_t)(slash - host) : hlen;
  {
    uint8_t v4[4];
    literal = parse_v4(host, alen, v4) == 0;
  }
  if (literal) {
    if (!(flags & SR_NETALLOW_LITERALS))
      return fail(why, why_len,
                  "IP addresses and ranges are allowed only in a profile or "
                  "skillrun.conf");
    if (slash) {
      prefix = slash + 1;
      plen = hlen - alen - 1;
    }
    r = parse_literal(host, alen, prefix, plen, slash != NULL, &e, why,
                      why_len);
    if (r < 0)
      return r;
  } else if (hlen >= 2 && host[0] == '*' && host[1] == '.') {
    e.kind = SR_NETALLOW_SUFFIX;
    r = normalise_name(host + 2, hlen - 2, 2, e.host, why, why_len);
    if (r < 0)
      return r;
  } else {
    e.kind = SR_NETALLOW_NAME;
    r = normalise_name(host, hlen, 1, e.host, why, why_len);
    if (r < 0)
      return r;
  }
  e.port = port;
  set_origin(&e, origin, where);
  *out = e;
  return 0;
}

int sr_netallow_parse_list(const char *text, unsigned flags,
                           enum sr_netallow_origin origin, const char *where,
                           struct sr_netallow *list, char *why,
                           size_t why_len) {
  const char *p = text;

  if (!text)
    return 0;
  while (*p) {
    char word[SR_NETALLOW_ENTRY_TEXT + 2];
    size_t n;
    struct sr_netallow_entry e;
    int r;

    p += strspn(p, " \t\r\n");
    n = strcspn(p, " \t\r\n");
    if (n == 0)
      break;
    if (n >= sizeof(word))
      return fail(why, why_len, "entry longer than %d bytes",
                  SR_NETALLOW_ENTRY_TEXT);
    memcpy(word, p, n);
    word[n] = '\0';
    r = sr_netallow_parse_entry(word, flags, origin, where, &e, why, why_len);
    if (r < 0) {
      char inner[200];
      if (why && why_len) {
        (void)snprintf(inner, sizeof(inner), "%s", why);
        (void)snprintf(why, why_len, "'%.64s': %s", word, inner);
      }
      return r;
    }
    r = sr_netallow_add(list, &e);
    if (r < 0) {
      if (r == -E2BIG)
        (void)fail(why, why_len, "more than %d entries", SR_NETALLOW_MAX);
      return r;
    }
    p += n;
  }
  return 0;
}

int sr_netallow_parse_tool(const char *tool, struct sr_netallow_entry *out,
                           char *why, size_t why_len) {
  static const char prefix[] = "WebFetch(domain:";
  char inner[SR_NETALLOW_ENTRY_TEXT + 1];
  size_t len, n;

  if (!tool || strncmp(tool, prefix, sizeof(prefix) - 1) != 0)
    return 0;
  len = strlen(tool);
  if (len < sizeof(prefix) || tool[len - 1] != ')')
    return fail(why, why_len, "'%.80s': expected WebFetch(domain:NAME)", tool);
  n = len - (sizeof(prefix) - 1) - 1;
  if (n == 0 || n >= sizeof(inner))
    return fail(why, why_len, "'%.80s': expected WebFetch(domain:NAME)", tool);
  memcpy(inner, tool + sizeof(prefix) - 1, n);
  inner[n] = '\0';
  if (sr_netallow_parse_entry(inner, 0, SR_NETALLOW_ORIGIN_TOOL,
                              "allowed-tools", out, why, why_len) < 0) {
    char msg[200];
    if (why && why_len) {
      (void)snprintf(msg, sizeof(msg), "%s", why);
      (void)snprintf(why, why_len, "'%.80s': %s", tool, msg);
    }
    return -EINVAL;
  }
  return 1;
}

/* ---------------------------------------------------------------- lists */

static bool same_destination(const struct sr_netallow_entry *a,
                             const struct sr_netallow_entry *b) {
  if (a->kind != b->kind || a->port != b->port)
    return false;
  if (a->kind == SR_NETALLOW_RANGE)
    return a->prefix == b->prefix && memcmp(&a->addr, &b->addr, 16) == 0;
  return strcmp(a->host, b->host) == 0;
}

int sr_netallow_add(struct sr_netallow *l, const struct sr_netallow_entry *e) {
  for (size_t i = 0; i < l->n; i++)
    if (same_destination(&l->v[i], e))
      return 0;
  if (l->n >= SR_NETALLOW_MAX)
    return -E2BIG;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    struct sr_netallow_entry *v = realloc(l->v, cap * sizeof(*v));
    if (!v)
      return -ENOMEM;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = *e;
  return 0;
}

void sr_netallow_done(struct sr_netallow *l) {
  free(l->v);
  *l = (struct sr_netallow){0};
}

int sr_netallow_copy(struct sr_netallow *dst, const struct sr_netallow *src) {
  *dst = (struct sr_netallow){0};
  if (src->n == 0)
    return 0;
  dst->v = malloc(src->n * sizeof(*dst->v));
  if (!dst->v)
    return -ENOMEM;
  memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
  dst->n = dst->cap = src->n;
  return 0;
}

void sr_netallow_format(const struct sr_netallow_entry *e, char *buf,
                        size_t len) {
  char a[INET6_ADDRSTRLEN];

  if (!len)
    return;
  switch (e->kind) {
  case SR_NETALLOW_NAME:
    (void)snprintf(buf, len, "%s:%u", e->host, (unsigned)e->port);
    return;
  case SR_NETALLOW_SUFFIX:
    (void)snprintf(buf, len, "*.%s:%u", e->host, (unsigned)e->port);
    return;
  case SR_NETALLOW_RANGE:
    sr_netaddr_format(&e->addr, a, sizeof(a));
    if (sr_netaddr_is_v4(&e->addr) && e->prefix >= 96) {
      if (e->prefix == 128)
        (void)snprintf(buf, len, "%s:%u", a, (unsigned)e->port);
      else
        (void)snprintf(buf, len, "%s/%u:%u", a, e->prefix - 96,
                       (unsigned)e->port);
    } else if (e->prefix == 128) {
      (void)snprintf(buf, len, "[%s]:%u", a, (unsigned)e->port);
    } else {
      (void)snprintf(buf, len, "[%s]/%u:%u", a, e->prefix, (unsigned)e->port);
    }
    return;
  }
  buf[0] = '\0';
}

const char *sr_netallow_origin_name(enum sr_netallow_origin o) {
  static const char *const names[] = {
      [SR_NETALLOW_ORIGIN_NONE] = "none",
      [SR_NETALLOW_ORIGIN_CONF] = "conf",
      [SR_NETALLOW_ORIGIN_PROFILE] = "profile",
      [SR_NETALLOW_ORIGIN_MANIFEST] = "manifest",
      [SR_NETALLOW_ORIGIN_TOOL] = "allowed-tools",
      [SR_NETALLOW_ORIGIN_CAPABILITY] = "capability",
      [SR_NETALLOW_ORIGIN_FLAG] = "command-line",
  };
  if ((unsigned)o >= SR_ARRAY_SIZE(names))
    return "unknown";
  return names[o];
}

/* name equals suffix, or is below it ("a.b.example.com" under
 * "example.com"). */
static bool name_under(const char *name, const char *suffix, bool or_equal) {
  size_t n = strlen(name), s = strlen(suffix);

  if (n == s)
    return or_equal && strcmp(name, suffix) == 0;
  return n > s + 1 && name[n - s - 1] == '.' &&
         strcmp(name + n - s, suffix) == 0;
}

static bool entry_matches_name(const struct sr_netallow_entry *e,
                               const char *name, uint16_t port) {
  if (e->port != port)
    return false;
  if (e->kind == SR_NETALLOW_NAME)
    return strcmp(e->host, name) == 0;
  if (e->kind == SR_NETALLOW_SUFFIX)
    return name_under(name, e->host, false);
  return false;
}

bool sr_netallow_match_name(const struct sr_netallow *l, const char *name,
                            uint16_t port) {
  for (size_t i = 0; i < l->n; i++)
    if (entry_matches_name(&l->v[i], name, port))
      return true;
  return false;
}

static bool range_covers(const struct sr_netallow *l,
                         const struct sr_netaddr *addr, uint16_t port,
                         bool unblock_too) {
  for (size_t i = 0; i < l->n; i++) {
    const struct sr_netallow_entry *e = &l->v[i];
    if (e->kind == SR_NETALLOW_RANGE && e->port == port &&
        (unblock_too || !e->unblock_only) &&
        in_prefix(addr, &e->addr, e->prefix))
      return true;
  }
  return false;
}

bool sr_netallow_match_addr(const struct sr_netallow *l,
                            const struct sr_netaddr *addr, uint16_t port) {
  return range_covers(l, addr, port, false);
}

bool sr_netallow_check_addr(const struct sr_netallow *l,
                            const struct sr_netaddr *addr, uint16_t port,
                            const struct sr_netaddr *host_addrs, size_t n_host,
                            enum sr_netaddr_class *cls) {
  enum sr_netaddr_class c = sr_netaddr_classify(addr);
  struct sr_netaddr v4;
  /* A NAT64 or SIIT form of one of the host's IPv4 addresses reaches the
   * host as that address does: compared as the address it carries, as
   * sr_netaddr_classify judges it. */
  bool carries = carried_v4(addr, &v4);

  if (c == SR_NETADDR_PUBLIC)
    for (size_t i = 0; i < n_host; i++)
      if (memcmp(&host_addrs[i], addr, sizeof(*addr)) == 0 ||
          (carries && memcmp(&host_addrs[i], &v4, sizeof(v4)) == 0)) {
        c = SR_NETADDR_HOST;
        break;
      }
  if (c != SR_NETADDR_PUBLIC && range_covers(l, addr, port, true))
    c = SR_NETADDR_PUBLIC;
  if (cls)
    *cls = c;
  return c == SR_NETADDR_PUBLIC;
}

/* The intersection of one request entry and one permitted entry. */
static bool intersect_one(const struct sr_netallow_entry *r,
                          const struct sr_netallow_entry *p,
                          struct sr_netallow_entry *out) {
  const struct sr_netallow_entry *take = NULL;

  if (r->port != p->port)
    return false;
  if (r->kind == SR_NETALLOW_RANGE || p->kind == SR_NETALLOW_RANGE) {
    if (r->kind != p->kind)
      return false;
    if (r->prefix >= p->prefix && in_prefix(&r->addr, &p->addr, p->prefix))
      take = r;
    else if (p->prefix > r->prefix && in_prefix(&p->addr, &r->addr, r->prefix))
      take = p;
  } else if (r->kind == SR_NETALLOW_NAME && p->kind == SR_NETALLOW_NAME) {
    if (strcmp(r->host, p->host) == 0)
      take = r;
  } else if (r->kind == SR_NETALLOW_NAME) { /* name x *.s */
    if (name_under(r->host, p->host, false))
      take = r;
  } else if (p->kind == SR_NETALLOW_NAME) { /* *.s x name */
    if (name_under(p->host, r->host, false))
      take = p;
  } else { /* *.a x *.b */
    if (name_under(r->host, p->host, true))
      take = r;
    else if (name_under(p->host, r->host, false))
      take = p;
  }
  if (!take)
    return false;
  *out = *take;
  out->origin = r->origin;
  memcpy(out->where, r->where, sizeof(out->where));
  out->bound_origin = p->origin;
  memcpy(out->bound_where, p->where, sizeof(out->bound_where));
  out->narrowed = r->narrowed || take == p;
  return true;
}

int sr_netallow_intersect(const struct sr_netallow *request,
                          const struct sr_netallow *permitted, unsigned flags,
                          struct sr_netallow *out,
                          struct sr_netallow *dropped) {
  bool keep_ranges = flags & SR_NETALLOW_KEEP_RANGES;
  int r;

  for (size_t i = 0; i < request->n; i++) {
    const struct sr_netallow_entry *re = &request->v[i];
    bool any = false;

    if (!(keep_ranges && re->kind == SR_NETALLOW_RANGE))
      for (size_t j = 0; j < permitted->n; j++) {
        struct sr_netallow_entry e;
        if (!intersect_one(re, &permitted->v[j], &e))
          continue;
        any = true;
        r = sr_netallow_add(out, &e);
        if (r < 0)
          return r;
      }
    if (!any && dropped) {
      r = sr_netallow_add(dropped, re);
      if (r < 0)
        return r;
    }
  }
  if (keep_ranges)
    for (size_t j = 0; j < permitted->n; j++)
      if (permitted->v[j].kind == SR_NETALLOW_RANGE) {
        r = sr_netallow_add(out, &permitted->v[j]);
        if (r < 0)
          return r;
      }
  return 0;
}

/* ---------------------------------------------------------------- hosts */

void sr_nethosts_done(struct sr_nethosts *h) {
  free(h->v);
  *h = (struct sr_nethosts){0};
}

int sr_nethosts_parse(const char *buf, size_t len, struct sr_nethosts *out,
                      size_t *line, char *why, size_t why_len) {
  struct sr_nethosts h = {0};
  size_t cap = 0, lineno = 0, pos = 0;

  while (pos < len) {
    const char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - s) : len - pos, i = 0;
    struct sr_netaddr addr;
    bool have_addr = false;
    size_t names = 0;

    pos += n + (nl ? 1 : 0);
    lineno++;
    *line = lineno;
    if (n > SR_NETHOSTS_LINE_MAX) {
      sr_nethosts_done(&h);
      return fail(why, why_len, "line longer than %d bytes",
                  SR_NETHOSTS_LINE_MAX);
    }
    if (memchr(s, '#', n))
      n = (size_t)((const char *)memchr(s, '#', n) - s);
    while (i < n) {
      size_t start, wl;
      while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        i++;
      if (i >= n)
        break;
      start = i;
      while (i < n && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
        i++;
      wl = i - start;
      if (!have_addr) {
        if (sr_netaddr_parse(s + start, wl, &addr) < 0) {
          sr_nethosts_done(&h);
          return fail(why, why_len, "invalid address '%.*s'",
                      (int)(wl > 64 ? 64 : wl), s + start);
        }
        have_addr = true;
        continue;
      }
      if (h.n == cap) {
        struct sr_nethosts_entry *v;
        if (h.n >= SR_NETHOSTS_MAX) {
          sr_nethosts_done(&h);
          (void)fail(why, why_len, "more than %d names", SR_NETHOSTS_MAX);
          return -E2BIG;
        }
        cap = cap ? cap * 2 : 16;
        v = realloc(h.v, cap * sizeof(*v));
        if (!v) {
          sr_nethosts_done(&h);
          return -ENOMEM;
        }
        h.v = v;
      }
      if (normalise_name(s + start, wl, 1, h.v[h.n].name, why, why_len) < 0) {
        char msg[160];
        if (why && why_len) {
          (void)snprintf(msg, sizeof(msg), "%s", why);
          (void)snprintf(why, why_len, "'%.*s': %s", (int)(wl > 64 ? 64 : wl),
                         s + start, msg);
        }
        sr_nethosts_done(&h);
        return -EINVAL;
      }
      h.v[h.n].addr = addr;
      h.n++;
      names++;
    }
    if (have_addr && names == 0) {
      sr_nethosts_done(&h);
      return fail(why, why_len, "an address without a name");
    }
  }
  *out = h;
  return 0;
}

size_t sr_nethosts_lookup(const struct sr_nethosts *h, const char *name,
                          struct sr_netaddr *out, size_t max) {
  size_t n = 0;

  for (size_t i = 0; i < h->n && n < max; i++) {
    bool dup = false;
    if (strcmp(h->v[i].name, name) != 0)
      continue;
    for (size_t j = 0; j < n; j++)
      if (memcmp(&out[j], &h->v[i].addr, sizeof(out[j])) == 0)
        dup = true;
    if (!dup)
      out[n++] = h->v[i].addr;
  }
  return n;
}
