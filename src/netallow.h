/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The network allowlist (pure: no syscalls).  An entry names where a
 * sandboxed skill may connect through the egress proxy:
 *
 *   api.example.com[:PORT]     exactly this host name
 *   *.example.com[:PORT]       any name below example.com (not example.com)
 *   192.0.2.7[:PORT]           an IPv4 address     } only when the caller
 *   10.0.0.0/8[:PORT]          an IPv4 range       } passes
 *   [2001:db8::1][:PORT]       an IPv6 address     } SR_NETALLOW_LITERALS
 *   [2001:db8::]/32[:PORT]     an IPv6 range       } (profile, skillrun.conf)
 *
 * PORT defaults to 443 (1..65535; one port per entry).  Names are
 * normalised before they are stored or matched: lowercase, one trailing
 * dot removed.  Refused: `*`, a wildcard over a single label (`*.com`), a
 * `*` anywhere but as the whole first label, schemes, paths, user info,
 * empty labels, labels over 63 or names over 253 bytes, characters other
 * than [A-Za-z0-9-_.], non-ASCII (write the punycode `xn--` form), a last
 * label that does not start with a letter (`1.2.3`, `0x7f000001`: the
 * resolver would read them as numbers), a bare IPv6 address (brackets are
 * required), a range with host bits set, and /0.
 *
 * An address range entry also *unblocks* that range: a destination whose
 * address is loopback, private, link-local, ... (sr_netaddr_classify) or an
 * address of the host is refused unless a range entry covers it, with the
 * port (sr_netallow_check_addr).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

#define SR_NETALLOW_NAME_MAX 253   /* a DNS name without the trailing dot */
#define SR_NETALLOW_WHERE_MAX 64   /* "python.profile:12", truncated */
#define SR_NETALLOW_MAX 1024       /* entries in one list */
#define SR_NETALLOW_ENTRY_TEXT 300 /* longest entry text accepted */
#define SR_NETALLOW_DEFAULT_PORT 443
/* Room for sr_netallow_format: "[v6]/128:65535" or "*." name ":65535". */
#define SR_NETALLOW_FORMAT_MAX (SR_NETALLOW_NAME_MAX + 16)

/* Parser flag: IP literals and ranges are accepted (profile, conf). */
#define SR_NETALLOW_LITERALS 0x1u

/* An IP address; IPv4 is kept IPv4-mapped (::ffff:a.b.c.d), so that one
 * compare covers `10.0.0.1` and `[::ffff:10.0.0.1]`. */
struct sr_netaddr {
  uint8_t b[16];
};

enum sr_netallow_kind {
  SR_NETALLOW_NAME = 1, /* host: the exact name */
  SR_NETALLOW_SUFFIX,   /* host: the suffix, without the "*." */
  SR_NETALLOW_RANGE,    /* addr/prefix, prefix over the 128-bit form */
};

/* Where an entry came from, for --explain and warnings. */
enum sr_netallow_origin {
  SR_NETALLOW_ORIGIN_NONE = 0,
  SR_NETALLOW_ORIGIN_CONF,       /* skillrun.conf network-allow */
  SR_NETALLOW_ORIGIN_PROFILE,    /* a profile's network-allow */
  SR_NETALLOW_ORIGIN_MANIFEST,   /* SKILL.md sandbox.network-allow */
  SR_NETALLOW_ORIGIN_TOOL,       /* SKILL.md allowed-tools WebFetch(domain:) */
  SR_NETALLOW_ORIGIN_CAPABILITY, /* a capability token's network field */
  SR_NETALLOW_ORIGIN_FLAG,       /* the command line */
  SR__NETALLOW_ORIGIN_MAX
};

struct sr_netallow_entry {
  enum sr_netallow_kind kind;
  char host[SR_NETALLOW_NAME_MAX + 1]; /* NAME, SUFFIX; "" for RANGE */
  struct sr_netaddr addr;              /* RANGE: network address */
  unsigned prefix;                     /* RANGE: 0..128 (IPv4: 96 + len) */
  uint16_t port;
  /* Who asked for it, and (after sr_netallow_intersect) which entry of the
   * permitted list let it through; the same for a list never intersected. */
  enum sr_netallow_origin origin, bound_origin;
  char where[SR_NETALLOW_WHERE_MAX], bound_where[SR_NETALLOW_WHERE_MAX];
  bool narrowed; /* narrower than the entry that was requested */
  /* RANGE: not a destination of its own, it only unblocks the addresses
   * the names on the list resolve to (sr_netallow_check_addr): an
   * execution capability's list names destinations and no range. */
  bool unblock_only;
};

/* A list; {0} is an empty list.  An empty list permits nothing. */
struct sr_netallow {
  struct sr_netallow_entry *v;
  size_t n, cap;
};

/*
 * Parses one entry.  origin and where (may be NULL) are recorded in both
 * the request and the bound fields.  0, or -EINVAL with `why` set to one
 * line saying what is wrong (no file:line: the caller prefixes it).
 */
int sr_netallow_parse_entry(const char *text, unsigned flags,
                            enum sr_netallow_origin origin, const char *where,
                            struct sr_netallow_entry *out, char *why,
                            size_t why_len);

/* Parses a space-separated list (SKILL.md `sandbox.network-allow`) and adds
 * each entry to *list.  -EINVAL (why names the entry), -E2BIG, -ENOMEM;
 * on failure *list may hold the entries before the bad one. */
int sr_netallow_parse_list(const char *text, unsigned flags,
                           enum sr_netallow_origin origin, const char *where,
                           struct sr_netallow *list, char *why, size_t why_len);

/*
 * An allowed-tools entry.  `WebFetch(domain:NAME)` gives the entry NAME
 * (a name or `*.suffix`, with an optional port, default 443; never a
 * literal): returns 1.  Any other tool: 0.  A malformed WebFetch(domain:..)
 * : -EINVAL with why.
 */
int sr_netallow_parse_tool(const char *tool, struct sr_netallow_entry *out,
                           char *why, size_t why_len);

/* Appends a copy of e unless an equal destination (kind, host or range,
 * port) is already listed.  0, -E2BIG (over SR_NETALLOW_MAX), -ENOMEM. */
int sr_netallow_add(struct sr_netallow *l, const struct sr_netallow_entry *e);
/* Releases what the list owns (not the list: it is embedded by value). */
void sr_netallow_done(struct sr_netallow *l);
#define _cleanup_netallow_ _cleanup_(sr_netallow_done)
/* Deep copy; 0 or -ENOMEM. */
int sr_netallow_copy(struct sr_netallow *dst, const struct sr_netallow *src);

/* Canonical text of an entry ("api.example.com:443", "*.x.org:80",
 * "10.0.0.0/8:443", "[2001:db8::1]:443"); parses back to the same entry. */
void sr_netallow_format(const struct sr_netallow_entry *e, char *buf,
                        size_t len);
const char *sr_netallow_origin_name(enum sr_netallow_origin o);

/*
 * Intersection: the destinations that both `request` and `permitted` allow.
 * Entries are intersected pairwise on the same port (ports never widen):
 *   name  x name    equal names             -> the name
 *   name  x *.s     name below s            -> the name
 *   *.s   x name    name below s            -> the (permitted) name
 *   *.a   x *.b     a = b or a below b      -> *.a;  b below a -> *.b
 *   range x range   one inside the other    -> the narrower range
 *   name  x range   never (a name is not an address)
 * Each result keeps the request entry's origin and where, takes the
 * permitting entry's as bound_origin/bound_where, and is `narrowed` when
 * it is narrower than the request entry (a wildcard cut down to a name, a
 * range to a smaller range).  Duplicates are dropped.
 *
 * With SR_NETALLOW_KEEP_RANGES the request's range entries are ignored and
 * the permitted list's ranges are copied as they are: for a request layer
 * that cannot state literals (the manifest, allowed-tools), so that an
 * administrator's range (`10.0.0.0/8:443`) still unblocks the addresses
 * the requested names resolve to.
 *
 * `dropped` (may be NULL) receives the request entries that produced
 * nothing.  *out and *dropped are appended to.  0, -E2BIG, -ENOMEM.
 */
#define SR_NETALLOW_KEEP_RANGES 0x1u
int sr_netallow_intersect(const struct sr_netallow *request,
                          const struct sr_netallow *permitted, unsigned flags,
                          struct sr_netallow *out, struct sr_netallow *dropped);

/* A requested destination host: a normalised name or an address. */
struct sr_nethost {
  bool is_addr;
  struct sr_netaddr addr;              /* is_addr */
  char name[SR_NETALLOW_NAME_MAX + 1]; /* !is_addr: normalised */
};

/*
 * Parses a destination host as a client sends it (no port): a dotted-quad
 * IPv4 address, an IPv6 address with or without brackets, or a host name
 * (normalised like an entry; single-label names are accepted).  0 or
 * -EINVAL.
 */
int sr_nethost_parse(const char *s, size_t len, struct sr_nethost *out);

/*
 * Splits "host:port", "[v6]:port", "host" (port absent) on the last colon,
 * brackets handled; host points into s (without the brackets).  A port is
 * 1..65535.  *has_port tells whether one was given.  0 or -EINVAL (a bare
 * IPv6 address with a port, an empty host, a bad port).
 */
int sr_netallow_split_hostport(const char *s, size_t len, const char **host,
                               size_t *host_len, uint16_t *port,
                               bool *has_port);

/* True when name:port matches a NAME or SUFFIX entry (name normalised). */
bool sr_netallow_match_name(const struct sr_netallow *l, const char *name,
                            uint16_t port);
/* True when addr:port lies in a RANGE entry that is a destination (not
 * unblock_only). */
bool sr_netallow_match_addr(const struct sr_netallow *l,
                            const struct sr_netaddr *addr, uint16_t port);

/* Address classes that are refused unless a range entry permits them. */
enum sr_netaddr_class {
  SR_NETADDR_PUBLIC = 0,
  SR_NETADDR_UNSPECIFIED,   /* 0.0.0.0/8, :: */
  SR_NETADDR_LOOPBACK,      /* 127/8, ::1 */
  SR_NETADDR_PRIVATE,       /* RFC 1918, fec0::/10 */
  SR_NETADDR_SHARED,        /* 100.64/10 (CGNAT) */
  SR_NETADDR_LINK_LOCAL,    /* 169.254/16, fe80::/10 */
  SR_NETADDR_UNIQUE_LOCAL,  /* fc00::/7 */
  SR_NETADDR_MULTICAST,     /* 224/4, ff00::/8 */
  SR_NETADDR_DOCUMENTATION, /* TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20 */
  SR_NETADDR_RESERVED,      /* 240/4, broadcast, benchmarking, IETF, 6to4 ... */
  SR_NETADDR_HOST,          /* an address of one of the host's interfaces */
  SR__NETADDR_CLASS_MAX
};

/* The special-purpose class of addr (IANA registries); IPv4 embedded in
 * IPv4-mapped, IPv4-translated and NAT64 (64:ff9b::/96) addresses is
 * classified as the IPv4 address it carries.  Never SR_NETADDR_HOST. */
enum sr_netaddr_class sr_netaddr_classify(const struct sr_netaddr *addr);
const char *sr_netaddr_class_name(enum sr_netaddr_class c);

/*
 * Whether the proxy may connect to addr:port for a destination that was
 * allowed by name or by literal: yes when addr is public and not one of
 * host_addrs (the host's own interface addresses), or when a range entry
 * (unblock_only or not) covers addr:port.  *cls (may be NULL) receives
 * the class that blocks it (SR_NETADDR_HOST for a host address),
 * SR_NETADDR_PUBLIC when allowed.
 */
bool sr_netallow_check_addr(const struct sr_netallow *l,
                            const struct sr_netaddr *addr, uint16_t port,
                            const struct sr_netaddr *host_addrs, size_t n_host,
                            enum sr_netaddr_class *cls);

/* IPv4 ("1.2.3.4") or IPv6 ("2001:db8::1") text, no brackets; 0 or
 * -EINVAL.  Strict: no inet_aton shorthand ("127.1", "0x7f.1"). */
int sr_netaddr_parse(const char *s, size_t len, struct sr_netaddr *out);
/* IPv4 dotted quad for IPv4-mapped addresses, RFC 5952 text otherwise.
 * len >= 46 (INET6_ADDRSTRLEN). */
void sr_netaddr_format(const struct sr_netaddr *a, char *buf, size_t len);
bool sr_netaddr_is_v4(const struct sr_netaddr *a);
/* From and to socket addresses (struct sockaddr_in / sockaddr_in6). */
struct sockaddr;
int sr_netaddr_from_sockaddr(const struct sockaddr *sa, size_t len,
                             struct sr_netaddr *out, uint16_t *port);
/* Fills *ss (a struct sockaddr_storage) with an AF_INET address for an
 * IPv4-mapped addr, AF_INET6 otherwise; returns its length. */
size_t sr_netaddr_to_sockaddr(const struct sr_netaddr *a, uint16_t port,
                              void *ss, size_t ss_len);

/*
 * A hosts file the caller names (tests, skillrun.conf): lines
 * "ADDRESS NAME [NAME...]", '#' comments.  A name listed there resolves
 * only to the addresses listed for it (the proxy does not ask DNS).
 */
#define SR_NETHOSTS_MAX 4096      /* (name, address) pairs */
#define SR_NETHOSTS_LINE_MAX 1024 /* bytes in one line */
struct sr_nethosts_entry {
  char name[SR_NETALLOW_NAME_MAX + 1];
  struct sr_netaddr addr;
};
struct sr_nethosts {
  struct sr_nethosts_entry *v;
  size_t n;
};
/* Parses buf (not NUL-terminated, len bytes).  0, or -EINVAL with *line
 * (1-based) and why set, -E2BIG over SR_NETHOSTS_MAX, -ENOMEM. */
int sr_nethosts_parse(const char *buf, size_t len, struct sr_nethosts *out,
                      size_t *line, char *why, size_t why_len);
/* Addresses listed for name (normalised), in file order, at most max;
 * returns how many (0: the name is not in the file). */
size_t sr_nethosts_lookup(const struct sr_nethosts *h, const char *name,
                          struct sr_netaddr *out, size_t max);
void sr_nethosts_done(struct sr_nethosts *h);
#define _cleanup_nethosts_ _cleanup_(sr_nethosts_done)
