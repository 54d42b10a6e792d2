/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proxyproto.c: HTTP request heads, the forwarded head, SOCKS5 messages,
 * replies, records and their audit JSON, the proxy environment. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proxyproto.h"
#include "util.h"

static int parse(const char *s, struct sr_http_request *r) {
  return sr_http_parse_request(s, strlen(s), r, NULL);
}

static void test_http_connect(void **state) {
  struct sr_http_request r;
  const char *why = NULL;
  static const char req[] = "CONNECT Api.Example.com.:443 HTTP/1.1\r\n"
                            "Host: api.example.com:443\r\n"
                            "User-Agent: curl/7.88\r\n\r\n"
                            "\x16\x03\x01";

  (void)state;
  assert_int_equal(parse(req, &r), 0);
  assert_int_equal(r.kind, SR_HTTP_CONNECT);
  assert_false(r.host.is_addr);
  assert_string_equal(r.host.name, "api.example.com");
  assert_int_equal(r.port, 443);
  /* What follows the head is tunnel data. */
  assert_int_equal(r.head_len, strlen(req) - 3);

  assert_int_equal(parse("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", &r), 0);
  assert_true(r.host.is_addr);
  assert_int_equal(r.port, 8443);
  assert_int_equal(parse("CONNECT 10.0.0.1:22 HTTP/1.0\r\n\r\n", &r), 0);
  assert_true(r.host.is_addr);

  /* Incomplete: more is needed. */
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\r\n", &r),
                   -EAGAIN);
  assert_int_equal(parse("", &r), -EAGAIN);
  /* Malformed. */
  assert_int_equal(sr_http_parse_request("CONNECT a.example.com HTTP/1.1\r\n"
                                         "\r\n",
                                         34, &r, &why),
                   -EBADMSG);
  assert_non_null(why);
  assert_int_equal(parse("CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  /* Brackets hold an IPv6 address, never a name or an IPv4 address. */
  assert_int_equal(parse("CONNECT [a.example.com]:443 HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT [10.0.0.1]:443 HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("GET http://[a.example.com]:80/ HTTP/1.1\r\n"
                         "Host: [a.example.com]:80\r\n\r\n",
                         &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT bad_host!:443 HTTP/1.1\r\n\r\n", &r),
                   -EINVAL);
  assert_int_equal(parse("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", &r), -EINVAL);
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/2.0\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT  a.example.com:443 HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("connect a.example.com:443 HTTP/1.1\r\n\r\n", &r),
                   -EPROTONOSUPPORT); /* methods are case-sensitive */
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\n\n", &r),
                   -EAGAIN);
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\n\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", &r),
                   -EPROTONOSUPPORT);
}

static void test_http_headers(void **state) {
  struct sr_http_request r;

  (void)state;
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\r\n"
                         "Bad Header: x\r\n\r\n",
                         &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\r\n"
                         "Host : x\r\n\r\n",
                         &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\r\n"
                         "X: a\r\n folded\r\n\r\n",
                         &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\r\n"
                         "X: a\x01b\r\n\r\n",
                         &r),
                   -EBADMSG);
  assert_int_equal(parse("CONNECT a.example.com:443 HTTP/1.1\r\n"
                         "Host: a\r\nHost: b\r\n\r\n",
                         &r),
                   -EBADMSG);
  /* NUL anywhere in the head. */
  assert_int_equal(
      sr_http_parse_request("CONNECT a\0b:443 HTTP/1.1\r\n\r\n", 29, &r, NULL),
      -EBADMSG);

  /* The 8 KiB bound. */
  char *big = malloc(SR_HTTP_HEAD_MAX + 100);
  assert_non_null(big);
  size_t n = (size_t)snprintf(big, 100,
                              "CONNECT a.example.com:443 HTTP/1.1"
                              "\r\nX: ");
  memset(big + n, 'a', SR_HTTP_HEAD_MAX + 100 - n);
  assert_int_equal(sr_http_parse_request(big, SR_HTTP_HEAD_MAX - 1, &r, NULL),
                   -EAGAIN);
  assert_int_equal(sr_http_parse_request(big, SR_HTTP_HEAD_MAX, &r, NULL),
                   -E2BIG);
  assert_int_equal(sr_http_parse_request(big, SR_HTTP_HEAD_MAX + 100, &r, NULL),
                   -E2BIG);
  /* Too many header lines. */
  n = (size_t)snprintf(big, 100, "CONNECT a.example.com:443 HTTP/1.1\r\n");
  for (int i = 0; i <= SR_HTTP_HEADERS_MAX; i++)
    n += (size_t)snprintf(big + n, 20, "X%d: y\r\n", i);
  n += (size_t)snprintf(big + n, 3, "\r\n");
  assert_int_equal(sr_http_parse_request(big, n, &r, NULL), -EBADMSG);
  free(big);
}

static char *forward(const char *req_text) {
  static char out[SR_HTTP_HEAD_MAX + SR_HTTP_FORWARD_EXTRA + 1];
  struct sr_http_request r;
  size_t n = 0;

  assert_int_equal(parse(req_text, &r), 0);
  assert_int_equal(r.kind, SR_HTTP_FORWARD);
  assert_int_equal(sr_http_forward_head(req_text, &r, out, sizeof(out) - 1, &n),
                   0);
  out[n] = '\0';
  return out;
}

static void test_http_forward(void **state) {
  struct sr_http_request r;

  (void)state;
  assert_int_equal(parse("GET http://Files.Example.org:8080/a/b?c=d HTTP/1.1"
                         "\r\nHost: files.example.org:8080\r\n\r\n",
                         &r),
                   0);
  assert_string_equal(r.host.name, "files.example.org");
  assert_int_equal(r.port, 8080);

  /* Origin form, hop-by-hop headers gone (and what Connection names),
   * framing headers kept, Connection: close added. */
  assert_string_equal(
      forward("POST http://example.org/upload?x=1 HTTP/1.1\r\n"
              "Host: example.org\r\n"
              "Proxy-Connection: keep-alive\r\n"
              "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
              "Connection: keep-alive, X-Secret, Content-Length\r\n"
              "X-Secret: 1\r\n"
              "Keep-Alive: 300\r\n"
              "TE: trailers\r\n"
              "Upgrade: websocket\r\n"
              "Content-Length: 5\r\n"
              "Accept: */*\r\n\r\n"),
      "POST /upload?x=1 HTTP/1.1\r\n"
      "Host: example.org\r\n"
      "Content-Length: 5\r\n"
      "Accept: */*\r\n"
      "Connection: close\r\n\r\n");
  /* Host added when missing; empty path is "/"; a query alone gets "/". */
  assert_string_equal(forward("GET http://example.org:8080 HTTP/1.0\r\n\r\n"),
                      "GET / HTTP/1.0\r\nHost: example.org:8080\r\n"
                      "Connection: close\r\n\r\n");
  assert_string_equal(forward("GET http://example.org?q HTTP/1.1\r\n\r\n"),
                      "GET /?q HTTP/1.1\r\nHost: example.org\r\n"
                      "Connection: close\r\n\r\n");
  assert_string_equal(
      forward("GET http://[2001:db8::1]:8080/x HTTP/1.1\r\n\r\n"),
      "GET /x HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\n"
      "Connection: close\r\n\r\n");
  /* Host must agree with the target (case and trailing dot aside). */
  forward("GET http://example.org/ HTTP/1.1\r\nHost: EXAMPLE.org.:80\r\n\r\n");
  assert_int_equal(parse("GET http://example.org/ HTTP/1.1\r\n"
                         "Host: evil.example\r\n\r\n",
                         &r),
                   -EBADMSG);
  assert_int_equal(parse("GET http://example.org/ HTTP/1.1\r\n"
                         "Host: example.org:81\r\n\r\n",
                         &r),
                   -EBADMSG);
  /* Not forwarded. */
  assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", &r),
                   -EPROTONOSUPPORT);
  assert_int_equal(parse("GET https://a.example/ HTTP/1.1\r\n\r\n", &r),
                   -EPROTONOSUPPORT);
  assert_int_equal(parse("GET ftp://a.example/ HTTP/1.1\r\n\r\n", &r),
                   -EPROTONOSUPPORT);
  assert_int_equal(parse("GET http://user@a.example/ HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("GET http://a.example/#f HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  assert_int_equal(parse("GET http:///x HTTP/1.1\r\n\r\n", &r), -EBADMSG);
  assert_int_equal(parse("GET http://a.example:0/ HTTP/1.1\r\n\r\n", &r),
                   -EBADMSG);
  /* The rewritten head does not fit a too-small buffer. */
  {
    static const char t[] = "GET http://example.org/ HTTP/1.1\r\n\r\n";
    char small[16];
    size_t n;
    assert_int_equal(parse(t, &r), 0);
    assert_int_equal(sr_http_forward_head(t, &r, small, sizeof(small), &n),
                     -ENOBUFS);
  }
}

static void test_http_response(void **state) {
  char buf[512];
  size_t n;

  (void)state;
  n = sr_http_response(200, NULL, NULL, buf, sizeof(buf));
  assert_int_equal(n, strlen("HTTP/1.1 200 Connection Established\r\n\r\n"));
  assert_memory_equal(buf, "HTTP/1.1 200 Connection Established\r\n\r\n", n);
  n = sr_http_response(403, "blocked-by-allowlist", "skillrun: no", buf,
                       sizeof(buf));
  assert_true(n > 0);
  assert_non_null(strstr(buf, "HTTP/1.1 403 Forbidden\r\n"));
  assert_non_null(strstr(buf, "X-Proxy-Error: blocked-by-allowlist\r\n"));
  assert_non_null(strstr(buf, "Content-Length: 13\r\n"));
  assert_non_null(strstr(buf, "\r\n\r\nskillrun: no\n"));
  assert_int_equal(sr_http_response(403, "x", "y", buf, 20), 0);
}

static void test_socks(void **state) {
  struct sr_socks_request r;
  size_t used = 0;
  bool noauth = false;
  uint8_t rep = 0xff, out[22];
  static const uint8_t greet[] = {5, 2, 2, 0};
  static const uint8_t greet_auth[] = {5, 1, 2};
  static const uint8_t dom[] = {5,   1,   0,   3,   15,   'a',  'p', 'i',
                                '.', 'E', 'x', 'a', 'm',  'p',  'l', 'e',
                                '.', 'c', 'o', 'm', 0x01, 0xbb, 0x42};
  static const uint8_t v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90};
  static const uint8_t v6[] = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0,
                               0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80};
  static const uint8_t bind[] = {5, 2, 0, 1, 1, 2, 3, 4, 0, 80};
  static const uint8_t atyp[] = {5, 1, 0, 9, 1, 2, 3, 4};
  static const uint8_t baddom[] = {5, 1, 0, 3, 3, 'a', '!', 'b', 0, 80};
  static const uint8_t nuldom[] = {5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80};
  static const uint8_t port0[] = {5, 1, 0, 1, 1, 2, 3, 4, 0, 0};

  (void)state;
  assert_int_equal(sr_socks_parse_greeting(greet, 1, &used, &noauth), -EAGAIN);
  assert_int_equal(sr_socks_parse_greeting(greet, 3, &used, &noauth), -EAGAIN);
  assert_int_equal(sr_socks_parse_greeting(greet, 4, &used, &noauth), 0);
  assert_int_equal(used, 4);
  assert_true(noauth);
  assert_int_equal(sr_socks_parse_greeting(greet_auth, 3, &used, &noauth), 0);
  assert_false(noauth);
  assert_int_equal(
      sr_socks_parse_greeting((const uint8_t *)"\x04\x01", 2, &used, &noauth),
      -EBADMSG);
  assert_int_equal(
      sr_socks_parse_greeting((const uint8_t *)"\x05\x00", 2, &used, &noauth),
      -EBADMSG);

  assert_int_equal(sr_socks_parse_request(dom, 10, &used, &r, &rep), -EAGAIN);
  assert_int_equal(sr_socks_parse_request(dom, sizeof(dom), &used, &r, &rep),
                   0);
  assert_int_equal(used, sizeof(dom) - 1); /* 0x42 is early data */
  assert_false(r.host.is_addr);
  assert_string_equal(r.host.name, "api.example.com");
  assert_int_equal(r.port, 443);
  assert_int_equal(sr_socks_parse_request(v4, sizeof(v4), &used, &r, &rep), 0);
  assert_true(r.host.is_addr);
  assert_int_equal(r.port, 8080);
  assert_int_equal(sr_netaddr_classify(&r.host.addr), SR_NETADDR_LOOPBACK);
  assert_int_equal(sr_socks_parse_request(v6, sizeof(v6), &used, &r, &rep), 0);
  assert_int_equal(sr_netaddr_classify(&r.host.addr), SR_NETADDR_LOOPBACK);
  assert_int_equal(r.port, 80);
  assert_int_equal(sr_socks_parse_request(bind, sizeof(bind), &used, &r, &rep),
                   -EPROTONOSUPPORT);
  assert_int_equal(rep, SR_SOCKS_REP_CMD_UNSUPPORTED);
  assert_int_equal(sr_socks_parse_request(atyp, sizeof(atyp), &used, &r, &rep),
                   -EPROTONOSUPPORT);
  assert_int_equal(rep, SR_SOCKS_REP_ATYP_UNSUPPORTED);
  assert_int_equal(
      sr_socks_parse_request(baddom, sizeof(baddom), &used, &r, &rep), -EINVAL);
  assert_int_equal(rep, SR_SOCKS_REP_HOST_UNREACH);
  assert_int_equal(
      sr_socks_parse_request(nuldom, sizeof(nuldom), &used, &r, &rep), -EINVAL);
  assert_int_equal(
      sr_socks_parse_request(port0, sizeof(port0), &used, &r, &rep), -EBADMSG);

  assert_int_equal(sr_socks_reply(SR_SOCKS_REP_NOT_ALLOWED, NULL, 0, out), 10);
  assert_memory_equal(out, "\x05\x02\x00\x01\0\0\0\0\0\0", 10);
  assert_int_equal(sr_socks_reply(0, &r.host.addr, 80, out), 22);
  assert_int_equal(out[3], 4);
  assert_int_equal(out[21], 80);
}

static void test_records(void **state) {
  struct sr_proxy_event ev, back;
  struct sr_proxy_wire w;
  json_t *o;
  char *s;

  (void)state;
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_CONNECTION;
  ev.id = 7;
  ev.protocol = SR_PROXY_PROTO_SOCKS5;
  ev.allowed = false;
  ev.reason = SR_PROXY_BLOCKED_ADDRESS;
  snprintf(ev.host, sizeof(ev.host), "loop.test");
  ev.port = 8080;
  ev.have_addr = true;
  assert_int_equal(sr_netaddr_parse("127.0.0.1", 9, &ev.addr), 0);
  ev.addr_class = SR_NETADDR_LOOPBACK;
  ev.bytes_out = 1;
  ev.bytes_in = 2;
  ev.duration_ms = 3;
  sr_proxy_record_encode(&ev, &w);
  assert_int_equal(sr_proxy_record_decode(&w, sizeof(w), &back), 0);
  assert_int_equal(back.id, 7);
  assert_string_equal(back.host, "loop.test");
  assert_int_equal(back.reason, SR_PROXY_BLOCKED_ADDRESS);

  o = sr_proxy_event_json(&back);
  assert_non_null(o);
  s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(
      s, "{\"address\":\"127.0.0.1\",\"address_class\":\"loopback\","
         "\"bytes_in\":2,\"bytes_out\":1,\"connection\":7,"
         "\"decision\":\"denied\",\"duration_ms\":3,\"host\":\"loop.test\","
         "\"port\":8080,\"protocol\":\"socks5\",\"reason\":"
         "\"blocked_address\"}");
  free(s);
  json_decref(o);

  /* Unknown destination: nulls. */
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_CONNECTION;
  ev.reason = SR_PROXY_HANDSHAKE_TIMEOUT;
  sr_proxy_record_encode(&ev, &w);
  assert_int_equal(sr_proxy_record_decode(&w, sizeof(w), &back), 0);
  o = sr_proxy_event_json(&back);
  s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
  assert_non_null(strstr(s, "\"host\":null"));
  assert_non_null(strstr(s, "\"address\":null"));
  assert_non_null(strstr(s, "\"reason\":\"handshake_timeout\""));
  assert_non_null(strstr(s, "\"protocol\":\"unknown\""));
  free(s);
  json_decref(o);

  /* Summary and egress-limit records carry their counts. */
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_SUMMARY;
  ev.connections = 10;
  ev.denied = 4;
  ev.total_out = 100;
  ev.total_in = 200;
  ev.dropped = 1;
  sr_proxy_record_encode(&ev, &w);
  assert_int_equal(sr_proxy_record_decode(&w, sizeof(w), &back), 0);
  assert_int_equal(back.connections, 10);
  assert_int_equal(back.denied, 4);
  assert_int_equal(back.total_in, 200);
  assert_int_equal(back.dropped, 1);
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_EGRESS_LIMIT;
  ev.limit = 1000;
  ev.used = 1000;
  sr_proxy_record_encode(&ev, &w);
  assert_int_equal(sr_proxy_record_decode(&w, sizeof(w), &back), 0);
  assert_int_equal(back.limit, 1000);
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_FATAL;
  snprintf(ev.message, sizeof(ev.message),
           "setresuid: Operation not "
           "permitted");
  sr_proxy_record_encode(&ev, &w);
  assert_int_equal(sr_proxy_record_decode(&w, sizeof(w), &back), 0);
  assert_string_equal(back.message, "setresuid: Operation not permitted");
  assert_null(sr_proxy_event_json(&back));
}

static void test_record_rejects(void **state) {
  struct sr_proxy_event ev, back;
  struct sr_proxy_wire w, bad;

  (void)state;
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_CONNECTION;
  snprintf(ev.host, sizeof(ev.host), "a.example.com");
  sr_proxy_record_encode(&ev, &w);
  assert_int_equal(sr_proxy_record_decode(&w, sizeof(w) - 1, &back), -EBADMSG);
#define BAD(stmt)                                                              \
  do {                                                                         \
    bad = w;                                                                   \
    stmt;                                                                      \
    assert_int_equal(sr_proxy_record_decode(&bad, sizeof(bad), &back),         \
                     -EBADMSG);                                                \
  } while (0)
  BAD(bad.magic++);
  BAD(bad.version = 2);
  BAD(bad.type = 0);
  BAD(bad.type = SR__PROXY_REC_MAX);
  BAD(bad.protocol = SR__PROXY_PROTO_MAX);
  BAD(bad.allowed = 2);
  BAD(bad.reason = SR__PROXY_REASON_MAX);
  BAD(bad.addr_class = SR__NETADDR_CLASS_MAX);
  BAD(bad.have_addr = 7);
  BAD(memset(bad.text, 'a', sizeof(bad.text))); /* no NUL */
  BAD(bad.text[0] = '\n');                      /* not printable */
  BAD(bad.text[1] = '"');                       /* not a host */
  BAD(snprintf(bad.text, sizeof(bad.text), "a b"));
#undef BAD
}

static void test_env(void **state) {
  struct sr_strv env = {0};

  (void)state;
  assert_int_equal(sr_proxy_env(3128, &env), 0);
  assert_int_equal(env.n, SR_PROXY_ENV_N);
  assert_string_equal(env.v[0], "http_proxy=http://127.0.0.1:3128");
  assert_string_equal(env.v[3], "HTTPS_PROXY=http://127.0.0.1:3128");
  assert_string_equal(env.v[5], "ALL_PROXY=socks5h://127.0.0.1:3128");
  assert_string_equal(env.v[7], "NO_PROXY=localhost,127.0.0.1,::1");
  assert_null(env.v[8]);
  sr_strv_done(&env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_http_connect),
      cmocka_unit_test(test_http_headers),
      cmocka_unit_test(test_http_forward),
      cmocka_unit_test(test_http_response),
      cmocka_unit_test(test_socks),
      cmocka_unit_test(test_records),
      cmocka_unit_test(test_record_rejects),
      cmocka_unit_test(test_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
