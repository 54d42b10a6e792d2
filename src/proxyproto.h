/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The egress proxy's wire formats (pure: no syscalls): the client side
 * (an HTTP request head, SOCKS5 messages), the replies, the environment
 * that points a skill at the proxy, and the records the proxy process
 * sends the supervisor, with their decoder and their audit JSON.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "netallow.h"

/* ---------------------------------------------------------------- HTTP */

/* A request head (request line + headers + blank line) is at most this
 * long; a longer one is refused with 431. */
#define SR_HTTP_HEAD_MAX 8192
#define SR_HTTP_HEADERS_MAX 100
/* Room the rewritten head may need beyond the original head. */
#define SR_HTTP_FORWARD_EXTRA 512

enum sr_http_kind {
  SR_HTTP_CONNECT = 1, /* CONNECT host:port */
  SR_HTTP_FORWARD,     /* METHOD http://host[:port]/path */
};

struct sr_http_request {
  enum sr_http_kind kind;
  size_t head_len; /* bytes of the head, blank line included */
  struct sr_nethost host;
  uint16_t port; /* CONNECT: given; FORWARD: given or 80 */
  /* FORWARD: where the pieces of the rewritten head are in the buffer. */
  size_t method_off, method_len;
  size_t path_off, path_len;           /* path and query, "" means "/" */
  size_t authority_off, authority_len; /* "host[:port]" of the target */
  unsigned minor;                      /* HTTP/1.<minor> */
  bool have_host_header;
};

/*
 * Parses the head at the start of buf[0..len).  Returns 0 when a complete
 * head was parsed (*req filled; the bytes after head_len belong to the
 * body or the tunnel), -EAGAIN when more bytes are needed, -E2BIG when no
 * head ends within SR_HTTP_HEAD_MAX, -EBADMSG for a malformed head and
 * -EPROTONOSUPPORT for a target the proxy does not forward (origin form,
 * https:// or another scheme in absolute form, HTTP/2 preface).  *why (may
 * be NULL) gets a static one-line reason on failure.
 *
 * Strict on purpose (CRLF line ends, single spaces in the request line, no
 * folded or space-before-colon headers, at most one Host): the head is
 * rebuilt, and what it does not understand it refuses.  For FORWARD, a Host
 * header must name the same host and port as the target.
 */
int sr_http_parse_request(const char *buf, size_t len,
                          struct sr_http_request *req, const char **why);

/*
 * The head to send the origin for a FORWARD request: the request line in
 * origin form, the headers without the hop-by-hop ones (Connection and the
 * headers it names, Proxy-Connection, Keep-Alive, Proxy-Authorization,
 * Proxy-Authenticate, TE, Upgrade; never Host, Content-Length or
 * Transfer-Encoding, which frame the body), Host added when missing, and
 * `Connection: close`: one request per connection.  out needs
 * req->head_len + SR_HTTP_FORWARD_EXTRA bytes.  0 or -ENOBUFS.
 */
int sr_http_forward_head(const char *buf, const struct sr_http_request *req,
                         char *out, size_t cap, size_t *out_len);

/*
 * A complete response from the proxy itself: status line, `X-Proxy-Error:
 * <proxy_error>` when not NULL, `Content-Type: text/plain`,
 * `Content-Length`, `Connection: close`, and message + "\n" as the body.
 * Returns the length written (0 when cap is too small).
 */
size_t sr_http_response(unsigned status, const char *proxy_error,
                        const char *message, char *out, size_t cap);

/* ---------------------------------------------------------------- SOCKS5 */

enum {
  SR_SOCKS_VERSION = 5,
  SR_SOCKS_REP_OK = 0,
  SR_SOCKS_REP_FAILURE = 1,
  SR_SOCKS_REP_NOT_ALLOWED = 2,
  SR_SOCKS_REP_NET_UNREACH = 3,
  SR_SOCKS_REP_HOST_UNREACH = 4,
  SR_SOCKS_REP_REFUSED = 5,
  SR_SOCKS_REP_TTL_EXPIRED = 6,
  SR_SOCKS_REP_CMD_UNSUPPORTED = 7,
  SR_SOCKS_REP_ATYP_UNSUPPORTED = 8,
};

/* The method-selection message.  0 (*used bytes consumed, *noauth: the
 * client offers "no authentication"), -EAGAIN, -EBADMSG. */
int sr_socks_parse_greeting(const uint8_t *b, size_t len, size_t *used,
                            bool *noauth);

struct sr_socks_request {
  uint8_t cmd, atyp;
  struct sr_nethost host;
  uint16_t port;
};
/*
 * The request.  0 (*used consumed), -EAGAIN, -EBADMSG (malformed, *rep =
 * the reply code to send), -EPROTONOSUPPORT (a command other than CONNECT
 * or an unknown address type: *rep = 7 or 8), -EINVAL (a domain that is
 * not a valid host name: *rep = 4).
 */
int sr_socks_parse_request(const uint8_t *b, size_t len, size_t *used,
                           struct sr_socks_request *req, uint8_t *rep);
/* A reply with BND.ADDR/BND.PORT (all zero when bnd is NULL); returns its
 * length (10 or 22). */
size_t sr_socks_reply(uint8_t rep, const struct sr_netaddr *bnd, uint16_t port,
                      uint8_t out[22]);

/* ---------------------------------------------------------------- records */

/*
 * Records: the proxy process sends one fixed-size struct sr_proxy_wire per
 * SOCK_SEQPACKET message on the record socket; the supervisor decodes each
 * with sr_proxy_record_decode, which checks everything (size, magic,
 * version, every enum, the text's NUL and characters), so a corrupt or
 * hostile record is rejected, never half-used.
 */
enum sr_proxy_rec_type {
  SR_PROXY_REC_READY = 1,    /* set up and serving (first record) */
  SR_PROXY_REC_CONNECTION,   /* one per client connection, at its end */
  SR_PROXY_REC_EGRESS_LIMIT, /* the egress byte cap was reached (once) */
  SR_PROXY_REC_SUMMARY,      /* totals, last record before a clean exit */
  SR_PROXY_REC_FATAL,        /* the proxy cannot go on; text says why */
  SR__PROXY_REC_MAX
};

enum sr_proxy_protocol {
  SR_PROXY_PROTO_UNKNOWN = 0, /* nothing usable was received */
  SR_PROXY_PROTO_CONNECT,     /* HTTP CONNECT */
  SR_PROXY_PROTO_HTTP,        /* HTTP absolute form */
  SR_PROXY_PROTO_SOCKS5,
  SR__PROXY_PROTO_MAX
};

/* Why a connection ended (allowed) or was refused (denied). */
enum sr_proxy_reason {
  SR_PROXY_CLOSED = 0,        /* allowed; closed by either side */
  SR_PROXY_NOT_ALLOWLISTED,   /* denied: no entry matches host:port */
  SR_PROXY_BLOCKED_ADDRESS,   /* denied: every address is special/host */
  SR_PROXY_BAD_DESTINATION,   /* denied: not a valid host name */
  SR_PROXY_RESOLVE_FAILED,    /* allowed name, resolution failed */
  SR_PROXY_CONNECT_FAILED,    /* allowed, no address accepted a connect */
  SR_PROXY_CONNECT_TIMEOUT,   /* allowed, resolve+connect took too long */
  SR_PROXY_CONNECTION_LIMIT,  /* denied: concurrent-connection cap */
  SR_PROXY_EGRESS_LIMIT,      /* denied, or cut: the egress cap is spent */
  SR_PROXY_PROTOCOL_ERROR,    /* denied: malformed or oversized request */
  SR_PROXY_UNSUPPORTED,       /* denied: SOCKS BIND/UDP, https:// form... */
  SR_PROXY_HANDSHAKE_TIMEOUT, /* denied: no complete request in time */
  SR_PROXY_IDLE_TIMEOUT,      /* allowed; cut after no traffic */
  SR_PROXY_SHUTDOWN,          /* allowed; cut when the run ended */
  SR_PROXY_INTERNAL_ERROR,    /* the proxy ran out of fds or memory */
  SR__PROXY_REASON_MAX
};

#define SR_PROXY_WIRE_MAGIC 0x58505253u /* "SRPX" little-endian */
#define SR_PROXY_WIRE_VERSION 1
#define SR_PROXY_TEXT_MAX 256

/* The record as sent (host byte order: both ends are the same machine). */
struct sr_proxy_wire {
  uint32_t magic;
  uint16_t version;
  uint16_t type;      /* enum sr_proxy_rec_type */
  uint32_t id;        /* connection number, from 1 */
  uint8_t protocol;   /* enum sr_proxy_protocol */
  uint8_t allowed;    /* 0 or 1 */
  uint8_t reason;     /* enum sr_proxy_reason */
  uint8_t addr_class; /* enum sr_netaddr_class, of addr */
  uint8_t have_addr;  /* 0 or 1 */
  uint8_t pad[1];
  uint16_t port;
  uint8_t addr[16];   /* struct sr_netaddr */
  uint64_t bytes_out; /* sandbox -> destination */
  uint64_t bytes_in;  /* destination -> sandbox */
  uint64_t duration_ms;
  /* SUMMARY: counts; EGRESS_LIMIT: n1 = the cap, n2 = bytes sent. */
  uint64_t n1, n2, n3;
  uint32_t dropped; /* records dropped so far (record socket full) */
  uint32_t pad2;
  char text[SR_PROXY_TEXT_MAX]; /* CONNECTION: requested host ("" when
                                 * unknown); FATAL: message; NUL-ended */
};

/* A decoded record. */
struct sr_proxy_event {
  enum sr_proxy_rec_type type;
  uint32_t id;
  enum sr_proxy_protocol protocol;
  bool allowed;
  enum sr_proxy_reason reason;
  char host[SR_PROXY_TEXT_MAX]; /* CONNECTION: requested host */
  uint16_t port;
  bool have_addr;
  struct sr_netaddr addr; /* the address connected to (or refused) */
  enum sr_netaddr_class addr_class;
  uint64_t bytes_out, bytes_in, duration_ms;
  /* SUMMARY */
  uint64_t connections, denied, total_out, total_in;
  /* EGRESS_LIMIT */
  uint64_t limit, used;
  uint32_t dropped;
  char message[SR_PROXY_TEXT_MAX]; /* FATAL */
};

/* Encodes ev into w (every byte of w written). */
void sr_proxy_record_encode(const struct sr_proxy_event *ev,
                            struct sr_proxy_wire *w);
/* Decodes one message of len bytes; 0 or -EBADMSG. */
int sr_proxy_record_decode(const void *buf, size_t len,
                           struct sr_proxy_event *ev);

const char *sr_proxy_protocol_name(enum sr_proxy_protocol p);
const char *sr_proxy_reason_name(enum sr_proxy_reason r);

/*
 * The audit fields of a CONNECTION record (the `network_connect` event):
 *   connection  (number), protocol ("connect"|"http"|"socks5"|"unknown"),
 *   host (string or null), port (number or null), address (string or
 *   null), address_class (string or null), decision ("allowed"|"denied"),
 *   reason, bytes_out, bytes_in, duration_ms
 * and of a SUMMARY record (a `network_summary`-style object):
 *   connections, denied, bytes_out, bytes_in, records_dropped.
 * NULL on ENOMEM or another record type.
 */
json_t *sr_proxy_event_json(const struct sr_proxy_event *ev);

/* ---------------------------------------------------------------- env */

/* The variables that point a skill at the proxy on 127.0.0.1:port, as
 * "NAME=value" strings appended to *env (copied): http_proxy, HTTP_PROXY,
 * https_proxy, HTTPS_PROXY (http://127.0.0.1:PORT), all_proxy, ALL_PROXY
 * (socks5h://127.0.0.1:PORT), no_proxy, NO_PROXY (localhost,127.0.0.1,::1).
 * 0 or -ENOMEM (then *env may hold some of them). */
#define SR_PROXY_ENV_N 8
struct sr_strv;
int sr_proxy_env(uint16_t port, struct sr_strv *env);
