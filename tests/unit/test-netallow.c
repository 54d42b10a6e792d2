/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netallow.c: allowlist entries, normalisation, matching, intersection,
 * address classes and hosts files. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "netallow.h"

static struct sr_netallow_entry entry(const char *text, unsigned flags) {
  struct sr_netallow_entry e;
  char why[256] = "";
  int r = sr_netallow_parse_entry(text, flags, SR_NETALLOW_ORIGIN_PROFILE,
                                  "test.profile:1", &e, why, sizeof(why));
  if (r < 0)
    fail_msg("'%s' refused: %s", text, why);
  return e;
}

static void assert_refused(const char *text, unsigned flags,
                           const char *why_part) {
  struct sr_netallow_entry e;
  char why[256] = "";
  int r = sr_netallow_parse_entry(text, flags, SR_NETALLOW_ORIGIN_PROFILE, NULL,
                                  &e, why, sizeof(why));
  if (r != -EINVAL)
    fail_msg("'%s' accepted", text);
  if (why_part && !strstr(why, why_part))
    fail_msg("'%s': message '%s' lacks '%s'", text, why, why_part);
}

static void assert_format(const char *text, unsigned flags, const char *want) {
  struct sr_netallow_entry e = entry(text, flags), back;
  char buf[SR_NETALLOW_FORMAT_MAX], why[256];

  sr_netallow_format(&e, buf, sizeof(buf));
  assert_string_equal(buf, want);
  /* The canonical text parses back to the same destination. */
  assert_int_equal(sr_netallow_parse_entry(buf, flags,
                                           SR_NETALLOW_ORIGIN_PROFILE, NULL,
                                           &back, why, sizeof(why)),
                   0);
  assert_int_equal(back.kind, e.kind);
  assert_int_equal(back.port, e.port);
  assert_string_equal(back.host, e.host);
  assert_int_equal(back.prefix, e.prefix);
  assert_memory_equal(&back.addr, &e.addr, sizeof(e.addr));
}

static void test_parse_names(void **state) {
  struct sr_netallow_entry e;

  (void)state;
  e = entry("api.example.com", 0);
  assert_int_equal(e.kind, SR_NETALLOW_NAME);
  assert_string_equal(e.host, "api.example.com");
  assert_int_equal(e.port, 443);
  assert_int_equal(e.origin, SR_NETALLOW_ORIGIN_PROFILE);
  assert_string_equal(e.where, "test.profile:1");

  /* Normalised: case and one trailing dot. */
  assert_format("API.Example.COM.", 0, "api.example.com:443");
  assert_format("files.pythonhosted.org:80", 0, "files.pythonhosted.org:80");
  assert_format("*.PythonHosted.org:443", 0, "*.pythonhosted.org:443");
  assert_format("localhost", 0, "localhost:443");
  assert_format("xn--bcher-kva.example:8443", 0, "xn--bcher-kva.example:8443");
  assert_format("_dmarc.example.com", 0, "_dmarc.example.com:443");
  e = entry("*.example.com:8080", 0);
  assert_int_equal(e.kind, SR_NETALLOW_SUFFIX);
  assert_string_equal(e.host, "example.com");
  assert_int_equal(e.port, 8080);

  /* 63-byte labels and 253-byte names are the limits. */
  char label[64], name[300];
  memset(label, 'a', 63);
  label[63] = '\0';
  entry(label, 0);
  snprintf(name, sizeof(name), "%s.%s.%s.%.61s", label, label, label, label);
  assert_int_equal(strlen(name), 253);
  entry(name, 0);
  strcat(name, "b");
  assert_refused(name, 0, "longer than 253");
  label[62] = 'a';
  char long_label[70];
  memset(long_label, 'a', 64);
  long_label[64] = '\0';
  assert_refused(long_label, 0, "63");
}

static void test_parse_refusals(void **state) {
  (void)state;
  assert_refused("", 0, "empty");
  assert_refused("*", 0, "every host");
  assert_refused("*:443", 0, "every host");
  assert_refused("*.com", 0, "two labels");
  assert_refused("*.com.", 0, "two labels");
  assert_refused("**.example.com", 0, "first label");
  assert_refused("a.*.example.com", 0, "first label");
  assert_refused("*example.com", 0, "first label");
  assert_refused("https://example.com", 0, "URL");
  assert_refused("example.com/path", 0, "path");
  assert_refused("user@example.com", 0, "user info");
  assert_refused("a..example.com", 0, "empty label");
  assert_refused(".example.com", 0, "empty label");
  assert_refused("example.com..", 0, "empty label");
  assert_refused("-a.example.com", 0, "'-'");
  assert_refused("a-.example.com", 0, "'-'");
  assert_refused("bücher.example", 0, "punycode");
  assert_refused("exa mple.com", 0, "whitespace");
  assert_refused("example.com:0", 0, "port");
  assert_refused("example.com:65536", 0, "port");
  assert_refused("example.com:", 0, "port");
  assert_refused("example.com:https", 0, "port");
  assert_refused("example.com:+443", 0, "port");
  assert_refused("example.123", 0, "letter");
  assert_refused("1.2.3", 0, "letter");
  assert_refused("0x7f000001", 0, "letter");
  assert_refused("127.1", 0, "letter");
  /* Literals only with the flag. */
  assert_refused("10.0.0.1", 0, "only in a profile");
  assert_refused("10.0.0.0/8", 0, "only in a profile");
  assert_refused("[::1]", 0, "only in a profile");
  assert_refused("2001:db8::1", SR_NETALLOW_LITERALS, "brackets");
  assert_refused("[2001:db8::1", SR_NETALLOW_LITERALS, "']'");
  assert_refused("[example.com]", SR_NETALLOW_LITERALS, "IPv6");
  assert_refused("[::1]x", SR_NETALLOW_LITERALS, "after");
  assert_refused("[::1]:0", SR_NETALLOW_LITERALS, "port");
  assert_refused("10.0.0.1/8", SR_NETALLOW_LITERALS, "host bits");
  assert_refused("10.0.0.0/33", SR_NETALLOW_LITERALS, "prefix");
  assert_refused("10.0.0.0/08", SR_NETALLOW_LITERALS, "prefix");
  assert_refused("0.0.0.0/0", SR_NETALLOW_LITERALS, "every address");
  assert_refused("[::]/0", SR_NETALLOW_LITERALS, "every address");
  /* A range containing all of IPv4, however written: IPv4-mapped (which
   * --explain printed as 0.0.0.0/0, the proxy connecting to 127.0.0.1),
   * IPv4-translated and NAT64 carry every IPv4 address too. */
  assert_refused("[::ffff:0:0]/96:8443", SR_NETALLOW_LITERALS,
                 "every IPv4 address");
  assert_refused("[::ffff:0.0.0.0]/96", SR_NETALLOW_LITERALS,
                 "::ffff:0:0/96 (IPv4-mapped)");
  assert_refused("[0:0:0:0:0:ffff::]/96", SR_NETALLOW_LITERALS,
                 "every IPv4 address");
  assert_refused("[::]/80", SR_NETALLOW_LITERALS, "every IPv4 address");
  assert_refused("[::]/64", SR_NETALLOW_LITERALS, "every IPv4 address");
  assert_refused("[::]/1", SR_NETALLOW_LITERALS, "every IPv4 address");
  assert_refused("[::ffff:0:0:0]/96", SR_NETALLOW_LITERALS, "IPv4-translated");
  assert_refused("[64:ff9b::]/96", SR_NETALLOW_LITERALS, "NAT64");
  assert_refused("[64:ff9b::]/32", SR_NETALLOW_LITERALS, "NAT64");
  assert_refused("[::]/16", SR_NETALLOW_LITERALS, "IPv4-mapped");
  assert_refused("[2001:db8::1]/129", SR_NETALLOW_LITERALS, "prefix");
  assert_refused("010.0.0.1", SR_NETALLOW_LITERALS, "letter");
  assert_refused("[fe80::1%eth0]", SR_NETALLOW_LITERALS, "invalid IP");
}

static void test_parse_literals(void **state) {
  struct sr_netallow_entry e;

  (void)state;
  e = entry("10.0.0.0/8", SR_NETALLOW_LITERALS);
  assert_int_equal(e.kind, SR_NETALLOW_RANGE);
  assert_int_equal(e.prefix, 96 + 8);
  assert_int_equal(e.port, 443);
  assert_format("10.0.0.0/8:8080", SR_NETALLOW_LITERALS, "10.0.0.0/8:8080");
  assert_format("192.0.2.7", SR_NETALLOW_LITERALS, "192.0.2.7:443");
  assert_format("192.0.2.7/32:80", SR_NETALLOW_LITERALS, "192.0.2.7:80");
  assert_format("[2001:DB8::1]", SR_NETALLOW_LITERALS, "[2001:db8::1]:443");
  assert_format("[2001:db8::]/32:8443", SR_NETALLOW_LITERALS,
                "[2001:db8::]/32:8443");
  /* An IPv4-mapped range is the IPv4 range. */
  assert_format("[::ffff:10.0.0.0]/104", SR_NETALLOW_LITERALS,
                "10.0.0.0/8:443");
  /* Half of IPv4 is not all of it; each round-trips. */
  assert_format("[::ffff:0:0]/97:8443", SR_NETALLOW_LITERALS, "0.0.0.0/1:8443");
  assert_format("0.0.0.0/1", SR_NETALLOW_LITERALS, "0.0.0.0/1:443");
  assert_format("[64:ff9b::]/97", SR_NETALLOW_LITERALS, "[64:ff9b::]/97:443");
  /* IPv4-compatible ::/96 is reserved, not routed to IPv4: not refused. */
  assert_format("[::]/96", SR_NETALLOW_LITERALS, "[::]/96:443");
  assert_format("[2000::]/3", SR_NETALLOW_LITERALS, "[2000::]/3:443");
}

static void test_split_hostport(void **state) {
  const char *h;
  size_t hl;
  uint16_t port = 0;
  bool has;

  (void)state;
#define SPLIT(s) sr_netallow_split_hostport(s, strlen(s), &h, &hl, &port, &has)
  assert_int_equal(SPLIT("example.com:8080"), 0);
  assert_true(has);
  assert_int_equal(port, 8080);
  assert_int_equal(hl, 11);
  assert_int_equal(SPLIT("[2001:db8::1]:443"), 0);
  assert_int_equal(hl, strlen("2001:db8::1"));
  assert_memory_equal(h, "2001:db8::1", hl);
  assert_int_equal(port, 443);
  assert_int_equal(SPLIT("[::1]"), 0);
  assert_false(has);
  assert_int_equal(SPLIT("example.com"), 0);
  assert_false(has);
  /* The last colon would be a port of a bare IPv6 address: ambiguous. */
  assert_int_equal(SPLIT("2001:db8::1:443"), -EINVAL);
  assert_int_equal(SPLIT(":443"), -EINVAL);
  assert_int_equal(SPLIT("[]:443"), -EINVAL);
  assert_int_equal(SPLIT("[::1]443"), -EINVAL);
  assert_int_equal(SPLIT("a:99999"), -EINVAL);
#undef SPLIT
}

static void test_nethost(void **state) {
  struct sr_nethost h;
  char buf[64];

  (void)state;
  assert_int_equal(sr_nethost_parse("Api.Example.com.", 16, &h), 0);
  assert_false(h.is_addr);
  assert_string_equal(h.name, "api.example.com");
  assert_int_equal(sr_nethost_parse("127.0.0.1", 9, &h), 0);
  assert_true(h.is_addr);
  sr_netaddr_format(&h.addr, buf, sizeof(buf));
  assert_string_equal(buf, "127.0.0.1");
  assert_int_equal(sr_nethost_parse("[::1]", 5, &h), 0);
  assert_true(h.is_addr);
  assert_int_equal(sr_nethost_parse("::ffff:127.0.0.1", 16, &h), 0);
  sr_netaddr_format(&h.addr, buf, sizeof(buf));
  assert_string_equal(buf, "127.0.0.1"); /* mapped is the IPv4 address */
  assert_int_equal(sr_nethost_parse("127.1", 5, &h), -EINVAL);
  assert_int_equal(sr_nethost_parse("0x7f.0.0.1", 10, &h), -EINVAL);
  assert_int_equal(sr_nethost_parse("a b", 3, &h), -EINVAL);
  assert_int_equal(sr_nethost_parse("[a.b]", 5, &h), -EINVAL);
  assert_int_equal(sr_nethost_parse("a\0b.com", 7, &h), -EINVAL);
}

static struct sr_netallow list_of(const char *text, unsigned flags,
                                  enum sr_netallow_origin origin) {
  struct sr_netallow l = {0};
  char why[256] = "";
  if (sr_netallow_parse_list(text, flags, origin, "w", &l, why, sizeof(why)) <
      0)
    fail_msg("list '%s': %s", text, why);
  return l;
}

static void test_match(void **state) {
  struct sr_netallow l =
      list_of("api.example.com *.pythonhosted.org:443 example.org:80 "
              "10.0.0.0/8:443 [2001:db8::]/32:443 192.0.2.7:8080",
              SR_NETALLOW_LITERALS, SR_NETALLOW_ORIGIN_PROFILE);
  struct sr_netaddr a;

  (void)state;
  assert_int_equal(l.n, 6);
  assert_true(sr_netallow_match_name(&l, "api.example.com", 443));
  assert_false(sr_netallow_match_name(&l, "api.example.com", 80));
  assert_false(sr_netallow_match_name(&l, "example.com", 443));
  assert_false(sr_netallow_match_name(&l, "xapi.example.com", 443));
  assert_false(sr_netallow_match_name(&l, "api.example.com.evil.net", 443));
  assert_true(sr_netallow_match_name(&l, "files.pythonhosted.org", 443));
  assert_true(sr_netallow_match_name(&l, "a.b.pythonhosted.org", 443));
  /* *.suffix is subdomains only. */
  assert_false(sr_netallow_match_name(&l, "pythonhosted.org", 443));
  assert_false(sr_netallow_match_name(&l, "evilpythonhosted.org", 443));
  assert_true(sr_netallow_match_name(&l, "example.org", 80));
  /* Names never match ranges and addresses never match names. */
  assert_false(sr_netallow_match_name(&l, "10.0.0.1", 443));
  assert_int_equal(sr_netaddr_parse("10.1.2.3", 8, &a), 0);
  assert_true(sr_netallow_match_addr(&l, &a, 443));
  assert_false(sr_netallow_match_addr(&l, &a, 80));
  assert_int_equal(sr_netaddr_parse("11.0.0.1", 8, &a), 0);
  assert_false(sr_netallow_match_addr(&l, &a, 443));
  assert_int_equal(sr_netaddr_parse("2001:db8:1::5", 13, &a), 0);
  assert_true(sr_netallow_match_addr(&l, &a, 443));
  assert_int_equal(sr_netaddr_parse("::ffff:10.9.9.9", 15, &a), 0);
  assert_true(sr_netallow_match_addr(&l, &a, 443)); /* mapped = IPv4 */
  assert_int_equal(sr_netaddr_parse("192.0.2.7", 9, &a), 0);
  assert_true(sr_netallow_match_addr(&l, &a, 8080));
  assert_int_equal(sr_netaddr_parse("192.0.2.8", 9, &a), 0);
  assert_false(sr_netallow_match_addr(&l, &a, 8080));
  sr_netallow_done(&l);

  /* Duplicates collapse; an empty list matches nothing. */
  l = list_of("a.example.com A.EXAMPLE.COM. a.example.com:443", 0,
              SR_NETALLOW_ORIGIN_MANIFEST);
  assert_int_equal(l.n, 1);
  sr_netallow_done(&l);
  assert_false(sr_netallow_match_name(&l, "a.example.com", 443));
}

static void test_parse_list_errors(void **state) {
  struct sr_netallow l = {0};
  char why[256] = "";

  (void)state;
  assert_int_equal(sr_netallow_parse_list("a.example.com *.com", 0,
                                          SR_NETALLOW_ORIGIN_MANIFEST,
                                          "SKILL.md", &l, why, sizeof(why)),
                   -EINVAL);
  assert_non_null(strstr(why, "'*.com'"));
  sr_netallow_done(&l);
  assert_int_equal(sr_netallow_parse_list("   ", 0, SR_NETALLOW_ORIGIN_MANIFEST,
                                          "SKILL.md", &l, why, sizeof(why)),
                   0);
  assert_int_equal(l.n, 0);
}

static void test_tool(void **state) {
  struct sr_netallow_entry e;
  char why[256] = "";

  (void)state;
  assert_int_equal(sr_netallow_parse_tool("WebFetch(domain:docs.Python.org)",
                                          &e, why, sizeof(why)),
                   1);
  assert_string_equal(e.host, "docs.python.org");
  assert_int_equal(e.port, 443);
  assert_int_equal(e.origin, SR_NETALLOW_ORIGIN_TOOL);
  assert_int_equal(sr_netallow_parse_tool("WebFetch(domain:*.github.com)", &e,
                                          why, sizeof(why)),
                   1);
  assert_int_equal(e.kind, SR_NETALLOW_SUFFIX);
  assert_int_equal(sr_netallow_parse_tool("Bash(ls)", &e, why, sizeof(why)), 0);
  assert_int_equal(sr_netallow_parse_tool("WebFetch", &e, why, sizeof(why)), 0);
  assert_int_equal(
      sr_netallow_parse_tool("WebFetch(domain:)", &e, why, sizeof(why)),
      -EINVAL);
  assert_int_equal(
      sr_netallow_parse_tool("WebFetch(domain:10.0.0.1)", &e, why, sizeof(why)),
      -EINVAL);
  assert_int_equal(
      sr_netallow_parse_tool("WebFetch(domain:a.com", &e, why, sizeof(why)),
      -EINVAL);
}

/* Intersects and returns the formatted result, space-separated. */
static char *inter(const char *req, const char *perm, unsigned flags,
                   char *dropped_out, size_t dlen) {
  static char buf[1024];
  struct sr_netallow r =
      list_of(req, SR_NETALLOW_LITERALS, SR_NETALLOW_ORIGIN_MANIFEST);
  struct sr_netallow p =
      list_of(perm, SR_NETALLOW_LITERALS, SR_NETALLOW_ORIGIN_PROFILE);
  struct sr_netallow out = {0}, dropped = {0};

  assert_int_equal(sr_netallow_intersect(&r, &p, flags, &out, &dropped), 0);
  buf[0] = '\0';
  for (size_t i = 0; i < out.n; i++) {
    char e[SR_NETALLOW_FORMAT_MAX];
    sr_netallow_format(&out.v[i], e, sizeof(e));
    if (i)
      strcat(buf, " ");
    strcat(buf, e);
    if (out.v[i].narrowed)
      strcat(buf, "(n)");
  }
  if (dropped_out) {
    dropped_out[0] = '\0';
    for (size_t i = 0; i < dropped.n; i++) {
      char e[SR_NETALLOW_FORMAT_MAX];
      sr_netallow_format(&dropped.v[i], e, sizeof(e));
      if (i)
        strncat(dropped_out, " ", dlen - strlen(dropped_out) - 1);
      strncat(dropped_out, e, dlen - strlen(dropped_out) - 1);
    }
  }
  sr_netallow_done(&r);
  sr_netallow_done(&p);
  sr_netallow_done(&out);
  sr_netallow_done(&dropped);
  return buf;
}

static void test_intersect(void **state) {
  char dropped[512];

  (void)state;
  /* name within a wildcard: the name. */
  assert_string_equal(inter("api.example.com", "*.example.com", 0, NULL, 0),
                      "api.example.com:443");
  /* wildcard within a name: the (permitted) name, narrowed. */
  assert_string_equal(inter("*.example.com", "api.example.com", 0, NULL, 0),
                      "api.example.com:443(n)");
  /* A suffix is not its own subdomain. */
  assert_string_equal(
      inter("*.example.com", "example.com", 0, dropped, sizeof(dropped)), "");
  assert_string_equal(dropped, "*.example.com:443");
  assert_string_equal(inter("example.com", "*.example.com", 0, NULL, 0), "");
  /* wildcard x wildcard: the narrower one. */
  assert_string_equal(inter("*.a.example.com", "*.example.com", 0, NULL, 0),
                      "*.a.example.com:443");
  assert_string_equal(inter("*.example.com", "*.a.example.com", 0, NULL, 0),
                      "*.a.example.com:443(n)");
  assert_string_equal(inter("*.example.com", "*.example.com", 0, NULL, 0),
                      "*.example.com:443");
  assert_string_equal(inter("*.example.com", "*.example.org", 0, NULL, 0), "");
  /* Ports never widen. */
  assert_string_equal(
      inter("api.example.com:80", "*.example.com", 0, dropped, sizeof(dropped)),
      "");
  assert_string_equal(dropped, "api.example.com:80");
  /* Several permitted entries can each narrow one request. */
  assert_string_equal(inter("*.example.com other.net",
                            "a.example.com b.example.com", 0, dropped,
                            sizeof(dropped)),
                      "a.example.com:443(n) b.example.com:443(n)");
  assert_string_equal(dropped, "other.net:443");
  /* Ranges: the narrower one; disjoint: nothing; names never meet ranges. */
  assert_string_equal(inter("10.1.0.0/16", "10.0.0.0/8", 0, NULL, 0),
                      "10.1.0.0/16:443");
  assert_string_equal(inter("10.0.0.0/8", "10.1.0.0/16", 0, NULL, 0),
                      "10.1.0.0/16:443(n)");
  assert_string_equal(inter("10.0.0.0/8", "11.0.0.0/8", 0, NULL, 0), "");
  assert_string_equal(inter("a.example.com", "10.0.0.0/8", 0, NULL, 0), "");
  /* KEEP_RANGES: the permitted ranges pass to a request that cannot state
   * literals; request ranges are ignored. */
  assert_string_equal(inter("a.example.com 10.0.0.0/8",
                            "*.example.com 192.168.0.0/16:8080",
                            SR_NETALLOW_KEEP_RANGES, dropped, sizeof(dropped)),
                      "a.example.com:443 192.168.0.0/16:8080");
  assert_string_equal(dropped, "10.0.0.0/8:443");
  /* Duplicates from two routes collapse. */
  assert_string_equal(
      inter("a.example.com *.example.com", "a.example.com", 0, NULL, 0),
      "a.example.com:443");
}

static void test_intersect_origin(void **state) {
  struct sr_netallow r = {0}, p = {0}, out = {0};
  char why[64];

  (void)state;
  assert_int_equal(
      sr_netallow_parse_list("*.example.com", 0, SR_NETALLOW_ORIGIN_TOOL,
                             "allowed-tools", &r, why, sizeof(why)),
      0);
  assert_int_equal(
      sr_netallow_parse_list("api.example.com", 0, SR_NETALLOW_ORIGIN_CONF,
                             "skillrun.conf:4", &p, why, sizeof(why)),
      0);
  assert_int_equal(sr_netallow_intersect(&r, &p, 0, &out, NULL), 0);
  assert_int_equal(out.n, 1);
  assert_int_equal(out.v[0].origin, SR_NETALLOW_ORIGIN_TOOL);
  assert_string_equal(out.v[0].where, "allowed-tools");
  assert_int_equal(out.v[0].bound_origin, SR_NETALLOW_ORIGIN_CONF);
  assert_string_equal(out.v[0].bound_where, "skillrun.conf:4");
  assert_true(out.v[0].narrowed);
  assert_string_equal(sr_netallow_origin_name(out.v[0].origin),
                      "allowed-tools");
  sr_netallow_done(&r);
  sr_netallow_done(&p);
  sr_netallow_done(&out);
}

static enum sr_netaddr_class cls(const char *s) {
  struct sr_netaddr a;
  if (sr_netaddr_parse(s, strlen(s), &a) < 0)
    fail_msg("bad address %s", s);
  return sr_netaddr_classify(&a);
}

static void test_classify(void **state) {
  (void)state;
  assert_int_equal(cls("93.184.216.34"), SR_NETADDR_PUBLIC);
  assert_int_equal(cls("11.0.0.2"), SR_NETADDR_PUBLIC);
  assert_int_equal(cls("2606:4700::1111"), SR_NETADDR_PUBLIC);
  assert_int_equal(cls("0.0.0.0"), SR_NETADDR_UNSPECIFIED);
  assert_int_equal(cls("0.1.2.3"), SR_NETADDR_UNSPECIFIED);
  assert_int_equal(cls("::"), SR_NETADDR_UNSPECIFIED);
  assert_int_equal(cls("127.0.0.1"), SR_NETADDR_LOOPBACK);
  assert_int_equal(cls("127.255.255.254"), SR_NETADDR_LOOPBACK);
  assert_int_equal(cls("::1"), SR_NETADDR_LOOPBACK);
  assert_int_equal(cls("10.0.0.1"), SR_NETADDR_PRIVATE);
  assert_int_equal(cls("172.16.0.1"), SR_NETADDR_PRIVATE);
  assert_int_equal(cls("172.31.255.255"), SR_NETADDR_PRIVATE);
  assert_int_equal(cls("172.32.0.1"), SR_NETADDR_PUBLIC);
  assert_int_equal(cls("192.168.1.1"), SR_NETADDR_PRIVATE);
  assert_int_equal(cls("100.64.0.1"), SR_NETADDR_SHARED);
  assert_int_equal(cls("100.127.255.255"), SR_NETADDR_SHARED);
  assert_int_equal(cls("100.128.0.1"), SR_NETADDR_PUBLIC);
  assert_int_equal(cls("169.254.169.254"), SR_NETADDR_LINK_LOCAL);
  assert_int_equal(cls("fe80::1"), SR_NETADDR_LINK_LOCAL);
  assert_int_equal(cls("fc00::1"), SR_NETADDR_UNIQUE_LOCAL);
  assert_int_equal(cls("fd12:3456::1"), SR_NETADDR_UNIQUE_LOCAL);
  assert_int_equal(cls("224.0.0.1"), SR_NETADDR_MULTICAST);
  assert_int_equal(cls("239.255.255.250"), SR_NETADDR_MULTICAST);
  assert_int_equal(cls("ff02::1"), SR_NETADDR_MULTICAST);
  assert_int_equal(cls("192.0.2.1"), SR_NETADDR_DOCUMENTATION);
  assert_int_equal(cls("198.51.100.1"), SR_NETADDR_DOCUMENTATION);
  assert_int_equal(cls("203.0.113.1"), SR_NETADDR_DOCUMENTATION);
  assert_int_equal(cls("2001:db8::1"), SR_NETADDR_DOCUMENTATION);
  assert_int_equal(cls("3fff::1"), SR_NETADDR_DOCUMENTATION);
  assert_int_equal(cls("198.18.0.1"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("240.0.0.1"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("255.255.255.255"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("192.0.0.8"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("2002:7f00:1::1"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("2001::1"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("::7f00:1"), SR_NETADDR_RESERVED);
  assert_int_equal(cls("fec0::1"), SR_NETADDR_PRIVATE);
  /* IPv4 carried in IPv6 is judged as the IPv4 address. */
  assert_int_equal(cls("::ffff:127.0.0.1"), SR_NETADDR_LOOPBACK);
  assert_int_equal(cls("::ffff:169.254.169.254"), SR_NETADDR_LINK_LOCAL);
  assert_int_equal(cls("::ffff:0:10.0.0.1"), SR_NETADDR_PRIVATE);
  assert_int_equal(cls("64:ff9b::127.0.0.1"), SR_NETADDR_LOOPBACK);
  assert_int_equal(cls("64:ff9b::93.184.216.34"), SR_NETADDR_PUBLIC);
  assert_int_equal(cls("::ffff:93.184.216.34"), SR_NETADDR_PUBLIC);
  assert_string_equal(sr_netaddr_class_name(SR_NETADDR_LINK_LOCAL),
                      "link_local");
  assert_string_equal(sr_netaddr_class_name(SR__NETADDR_CLASS_MAX), "unknown");
}

static void test_check_addr(void **state) {
  struct sr_netallow l =
      list_of("example.com:8080 127.0.0.0/8:8080 "
              "[fd00::]/8:443",
              SR_NETALLOW_LITERALS, SR_NETALLOW_ORIGIN_PROFILE);
  struct sr_netaddr a, host[2];
  enum sr_netaddr_class c;

  (void)state;
  assert_int_equal(sr_netaddr_parse("11.0.0.1", 8, &host[0]), 0);
  assert_int_equal(sr_netaddr_parse("2a00:1::1", 9, &host[1]), 0);
  /* Public: allowed. */
  assert_int_equal(sr_netaddr_parse("93.184.216.34", 13, &a), 0);
  assert_true(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_PUBLIC);
  /* Loopback: only on the permitted port. */
  assert_int_equal(sr_netaddr_parse("127.0.0.1", 9, &a), 0);
  assert_true(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  assert_false(sr_netallow_check_addr(&l, &a, 443, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_LOOPBACK);
  /* The host's own public address is refused too. */
  assert_false(sr_netallow_check_addr(&l, &host[0], 8080, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_HOST);
  assert_false(sr_netallow_check_addr(&l, &host[1], 8080, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_HOST);
  /* ... and its NAT64 and SIIT forms, which reach it through a gateway. */
  assert_int_equal(sr_netaddr_parse("64:ff9b::11.0.0.1", 17, &a), 0);
  assert_false(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_HOST);
  assert_int_equal(sr_netaddr_parse("::ffff:0:11.0.0.1", 17, &a), 0);
  assert_false(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_HOST);
  /* Another address in those forms is still judged as the one it carries. */
  assert_int_equal(sr_netaddr_parse("64:ff9b::93.184.216.34", 22, &a), 0);
  assert_true(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_PUBLIC);
  /* Mapped loopback is loopback. */
  assert_int_equal(sr_netaddr_parse("::ffff:127.0.0.1", 16, &a), 0);
  assert_true(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  assert_false(sr_netallow_check_addr(&l, &a, 80, host, 2, &c));
  /* A permitted ULA range. */
  assert_int_equal(sr_netaddr_parse("fd00::5", 7, &a), 0);
  assert_true(sr_netallow_check_addr(&l, &a, 443, host, 2, &c));
  assert_int_equal(sr_netaddr_parse("fc00::5", 7, &a), 0);
  assert_false(sr_netallow_check_addr(&l, &a, 443, host, 2, &c));
  assert_int_equal(c, SR_NETADDR_UNIQUE_LOCAL);
  assert_int_equal(sr_netaddr_parse("169.254.169.254", 15, &a), 0);
  assert_false(sr_netallow_check_addr(&l, &a, 80, NULL, 0, NULL));
  /* A range that only unblocks (under a capability's list) still lets a
   * name reach its addresses, but is no destination by address. */
  assert_int_equal(sr_netaddr_parse("127.0.0.1", 9, &a), 0);
  assert_true(sr_netallow_match_addr(&l, &a, 8080));
  l.v[1].unblock_only = true;
  assert_false(sr_netallow_match_addr(&l, &a, 8080));
  assert_true(sr_netallow_check_addr(&l, &a, 8080, host, 2, &c));
  sr_netallow_done(&l);
}

static void test_addr_text(void **state) {
  struct sr_netaddr a;
  char buf[64];

  (void)state;
  assert_int_equal(sr_netaddr_parse("1.2.3.4", 7, &a), 0);
  assert_true(sr_netaddr_is_v4(&a));
  assert_int_equal(sr_netaddr_parse("01.2.3.4", 8, &a), -EINVAL);
  assert_int_equal(sr_netaddr_parse("1.2.3", 5, &a), -EINVAL);
  assert_int_equal(sr_netaddr_parse("1.2.3.4.5", 9, &a), -EINVAL);
  assert_int_equal(sr_netaddr_parse("256.1.1.1", 9, &a), -EINVAL);
  assert_int_equal(sr_netaddr_parse("1.2.3.4 ", 8, &a), -EINVAL);
  assert_int_equal(sr_netaddr_parse("::1%lo", 6, &a), -EINVAL);
  assert_int_equal(sr_netaddr_parse("2001:DB8::0:1", 13, &a), 0);
  sr_netaddr_format(&a, buf, sizeof(buf));
  assert_string_equal(buf, "2001:db8::1");
}

static void test_hosts(void **state) {
  static const char file[] = "# test resolver\n"
                             "11.0.0.2   allowed.test Other.Test.\n"
                             "127.0.0.1\tloop.test  # comment\n"
                             "\n"
                             "127.0.0.1 mixed.test\n"
                             "11.0.0.2 mixed.test\n"
                             "::1 loop6.test\n"
                             "11.0.0.2 mixed.test\n";
  struct sr_nethosts h = {0};
  struct sr_netaddr out[4];
  char why[256] = "", buf[64];
  size_t line = 0;

  (void)state;
  assert_int_equal(
      sr_nethosts_parse(file, sizeof(file) - 1, &h, &line, why, sizeof(why)),
      0);
  assert_int_equal(sr_nethosts_lookup(&h, "other.test", out, 4), 1);
  sr_netaddr_format(&out[0], buf, sizeof(buf));
  assert_string_equal(buf, "11.0.0.2");
  assert_int_equal(sr_nethosts_lookup(&h, "mixed.test", out, 4), 2);
  sr_netaddr_format(&out[0], buf, sizeof(buf));
  assert_string_equal(buf, "127.0.0.1");
  assert_int_equal(sr_nethosts_lookup(&h, "loop6.test", out, 4), 1);
  assert_int_equal(sr_nethosts_lookup(&h, "nothere.test", out, 4), 0);
  assert_int_equal(sr_nethosts_lookup(&h, "mixed.test", out, 1), 1);
  sr_nethosts_done(&h);

  assert_int_equal(sr_nethosts_parse("1.2.3.4 ok.test\n300.1.1.1 x.test\n", 33,
                                     &h, &line, why, sizeof(why)),
                   -EINVAL);
  assert_int_equal(line, 2);
  assert_non_null(strstr(why, "invalid address"));
  assert_int_equal(
      sr_nethosts_parse("1.2.3.4\n", 8, &h, &line, why, sizeof(why)), -EINVAL);
  assert_non_null(strstr(why, "without a name"));
  assert_int_equal(
      sr_nethosts_parse("1.2.3.4 bad..name\n", 18, &h, &line, why, sizeof(why)),
      -EINVAL);
  assert_non_null(strstr(why, "empty label"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_names),
      cmocka_unit_test(test_parse_refusals),
      cmocka_unit_test(test_parse_literals),
      cmocka_unit_test(test_split_hostport),
      cmocka_unit_test(test_nethost),
      cmocka_unit_test(test_match),
      cmocka_unit_test(test_parse_list_errors),
      cmocka_unit_test(test_tool),
      cmocka_unit_test(test_intersect),
      cmocka_unit_test(test_intersect_origin),
      cmocka_unit_test(test_classify),
      cmocka_unit_test(test_check_addr),
      cmocka_unit_test(test_addr_text),
      cmocka_unit_test(test_hosts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
