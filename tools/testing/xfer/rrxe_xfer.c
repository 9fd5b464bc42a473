// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_xfer: moves patterned data between two connected RC QPs with RDMA
 * WRITE, RDMA READ and SEND/RECV, and verifies every byte where it lands.
 *
 *   server: rrxe_xfer -d DEV [-g GIDX] [-p PORT] [-t SECS]
 *   client: rrxe_xfer -d DEV [-g GIDX] [-p PORT] [-t SECS] [-b BYTES]
 *                     [-s SEED] [-o write,read,send,awrite,flush,mw]
 *                     [-T QP_TIMEOUT] SERVER
 *
 * The two sides exchange QP numbers, PSNs, GIDs and memory keys over a TCP
 * connection (the client's choice of bytes, seed and operations included),
 * then the client drives every operation:
 *
 *   write  RDMA WRITEs (1 to 3 gather entries) fill the server's write
 *          region, which allows remote writes only; the server checks it.
 *   read   RDMA READs copy the server's read region, which allows remote
 *          reads only, into the client's memory; the client checks it.
 *   send   SENDs (1 to 3 gather entries) land in receives of two scatter
 *          entries with a guarded gap between them; the server checks each
 *          message's length, its bytes and the guards.
 *
 * and, only when named (they use a small extra region of the server, EXT
 * bytes, and run after the others):
 *
 *   awrite ATOMIC WRITEs of 8-byte values to every word of the first part
 *          of the extra region, posted twice max_rd_atomic at a time; the
 *          server checks the words.
 *   flush  an RDMA WRITE to the second part, then a FLUSH (global
 *          visibility) of its range and one of the whole region; the server
 *          opens its QP and region to global flushes and checks the bytes.
 *   mw     RDMA WRITEs and READs through a type 1 and a type 2B memory
 *          window the server binds over the third and fourth parts (remote
 *          read and write); the client checks what it reads back, the server
 *          what landed. Last, a WRITE one byte past the type 2B window must
 *          complete with a remote access error (which ends the QP).
 *
 * Each operation moves BYTES (default 4 MiB) in messages of varying sizes
 * from 1 B to 1 MiB: a fixed list around powers of two and MTU multiples,
 * then pseudo-random sizes, both sides deriving the same list from the
 * seed. The byte at stream offset o is a hash of (o, seed, operation), so
 * misplaced data is caught as surely as corrupted data.
 *
 * The client ends with `xfer: OK bytes=N` (N: bytes moved and verified)
 * and exit 0; any mismatch, completion error or protocol error prints
 * `xfer: FAIL: ...` (the first mismatching offset for data errors) and
 * exits 1; running past -t seconds (default 300) exits 3.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_MSG (1u << 20)	/* largest message */
#define WINDOW 16		/* work requests in flight */
#define NRECV 8			/* receives posted at the server */
#define SGE0_LEN 3000		/* first scatter entry of a receive */
#define GAP 4096		/* guarded gap between the scatter entries */
#define GUARD 64		/* guard after a receive slot */
#define CANARY 0xa5
#define SLOT (SGE0_LEN + GAP + (MAX_MSG - SGE0_LEN) + GUARD)
#define MAGIC "RRXEXFR1"

enum { OP_WRITE = 1, OP_READ = 2, OP_SEND = 4, OP_AWRITE = 8, OP_FLUSH = 16, OP_MW = 32 };
#define OP_EXT (OP_AWRITE | OP_FLUSH | OP_MW)
#define EXT_PART 4096		/* each part of the extra region */
#define EXT (4 * EXT_PART)	/* the extra region */
#define AWRITES (EXT_PART / 8)	/* ATOMIC WRITEs: one per word of part 0 */
#define AWRITE_BATCH (2 * WINDOW)	/* posted at once: the send queue's size */

/* What each side tells the other, in host byte order (same machine). */
struct hello {
	char magic[8];
	uint32_t qpn, psn, mtu, ops;
	uint8_t gid[16];
	uint64_t bytes, seed;
	uint64_t waddr, raddr;	/* server: write and read regions */
	uint32_t wrkey, rrkey;
	uint64_t xaddr;		/* server: the extra region (OP_EXT) */
	uint32_t xrkey, mw1_rkey, mw2_rkey;	/* its MR; windows over parts 2, 3 */
};

struct chunk {
	uint64_t off;
	uint32_t len;
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int port, gidx;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint8_t max_rd_atomic;
	/* The server's TCP connection to its client, watched while waiting for
	 * completions: a client that failed and exited sends nothing more, and
	 * without this the server would wait for its messages until the alarm
	 * (-1: none). */
	int peer;
};

static const char *phase = "setup";
static unsigned int timeout_s = 300;

static void on_alarm(int sig)
{
	char msg[160];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "xfer: FAIL: timed out after %u s in %s\n",
		     timeout_s, phase);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(3);
	_exit(3);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xfer: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (in %s)\n", phase);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finaliser */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The byte at stream offset OFF of the stream keyed by KEY. */
static uint8_t pattern(uint64_t off, uint64_t key)
{
	return (uint8_t)(mix((off >> 3) ^ key) >> ((off & 7) * 8));
}

static void fill(uint8_t *buf, uint64_t len, uint64_t off, uint64_t key)
{
	for (uint64_t i = 0; i < len; i++)
		buf[i] = pattern(off + i, key);
}

/* Index of the first byte of BUF that is not the pattern, or -1. */
static int64_t verify(const uint8_t *buf, uint64_t len, uint64_t off, uint64_t key)
{
	for (uint64_t i = 0; i < len; i++)
		if (buf[i] != pattern(off + i, key))
			return (int64_t)i;
	return -1;
}

static void mismatch(const char *what, const uint8_t *buf, uint64_t len,
		     uint64_t off, uint64_t key, const struct chunk *c, size_t ci)
{
	int64_t i = verify(buf, len, off, key);

	if (i < 0)
		return;
	fprintf(stderr,
		"xfer: FAIL: %s mismatch at stream offset %" PRIu64
		": expected 0x%02x, got 0x%02x (message %zu: offset %" PRIu64
		", %u bytes)\n",
		what, off + (uint64_t)i, pattern(off + (uint64_t)i, key),
		buf[i], ci, c ? c->off : 0, c ? c->len : 0);
	exit(1);
}

static uint64_t op_key(uint64_t seed, int op)
{
	return mix(seed * 31 + (uint64_t)op);
}

/*
 * The messages of one operation: sizes around powers of two and MTU
 * multiples first, then pseudo-random ones (mostly small, some up to
 * MAX_MSG), clipped to BYTES in total.
 */
static struct chunk *make_chunks(uint64_t bytes, uint64_t seed, size_t *count)
{
	static const uint32_t fixed[] = {
		1, 2, 3, 4, 7, 8, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025,
		1500, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 9000, 65535,
		65536, 65537, 262143, MAX_MSG,
	};
	size_t cap = 64, n = 0, fi = 0;
	struct chunk *c = malloc(cap * sizeof(*c));
	uint64_t off = 0, r = seed;

	if (!c)
		fail("out of memory");
	while (off < bytes) {
		uint64_t len;

		if (fi < sizeof(fixed) / sizeof(fixed[0])) {
			len = fixed[fi++];
		} else {
			r = mix(r);
			if (r % 4)
				len = 1 + (r >> 8) % 9000;
			else
				len = 1 + (r >> 8) % MAX_MSG;
		}
		if (len > bytes - off)
			len = bytes - off;
		if (n == cap) {
			cap *= 2;
			c = realloc(c, cap * sizeof(*c));
			if (!c)
				fail("out of memory");
		}
		c[n].off = off;
		c[n].len = (uint32_t)len;
		n++;
		off += len;
	}
	*count = n;
	return c;
}

/* Splits LEN bytes into 1 to 3 non-empty pieces; returns the count. */
static int split(uint32_t len, uint64_t r, uint32_t piece[3])
{
	uint32_t a, b;

	if (len < 3 || r % 3 == 0) {
		piece[0] = len;
		return 1;
	}
	a = 1 + (uint32_t)((r >> 8) % (len - 1));
	if (r % 3 == 1) {
		piece[0] = a;
		piece[1] = len - a;
		return 2;
	}
	if (len - a < 2) {
		piece[0] = a;
		piece[1] = len - a;
		return 2;
	}
	b = 1 + (uint32_t)((r >> 32) % (len - a - 1));
	piece[0] = a;
	piece[1] = b;
	piece[2] = len - a - b;
	return 3;
}

/* ---- out of band: TCP ---- */

static void xfer_all(int fd, void *buf, size_t len, int out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("TCP %s: %s", out ? "write" : "read",
			     n ? strerror(errno) : "peer closed the connection");
		p += n;
		len -= (size_t)n;
	}
}

static void send_byte(int fd, uint8_t b)
{
	xfer_all(fd, &b, 1, 1);
}

static uint8_t recv_byte(int fd)
{
	uint8_t b;

	xfer_all(fd, &b, 1, 0);
	return b;
}

static int tcp_server(const char *port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = in6addr_any };
	int one = 1, zero = 0, l, fd;

	a.sin6_port = htons((uint16_t)atoi(port));
	l = socket(AF_INET6, SOCK_STREAM, 0);
	if (l < 0)
		fail("socket: %s", strerror(errno));
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		fail("listen on port %s: %s", port, strerror(errno));
	fd = accept(l, NULL, NULL);
	if (fd < 0)
		fail("accept: %s", strerror(errno));
	close(l);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int tcp_client(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int one = 1, err;

	err = getaddrinfo(host, port, &hints, &res);
	if (err)
		fail("%s: %s", host, gai_strerror(err));
	/* The server may still be starting: retry for a while. */
	for (int tries = 0; tries < 100; tries++) {
		for (ai = res; ai; ai = ai->ai_next) {
			int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);

			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				return fd;
			}
			close(fd);
		}
		usleep(200000);
	}
	fail("cannot connect to %s port %s", host, port);
	return -1;
}

/* ---- verbs ---- */

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list)
		fail("ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; list[i]; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	ibv_free_device_list(list);
	if (!ctx)
		fail("cannot open RDMA device %s", name ? name : "(first)");
	return ctx;
}

/* The first RoCEv2 GID of the port holding an IPv4 address, or -1. */
static int roce_v2_ipv4_gid(struct ibv_context *ctx, int port, int len)
{
	for (int i = 0; i < len; i++) {
		struct ibv_gid_entry e;
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid_ex(ctx, port, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, v4, 12))
			return i;
	}
	return -1;
}

static void side_open(struct side *s, const char *dev, int gidx, int ext)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 2 * WINDOW,
			.max_recv_wr = NRECV,
			.max_send_sge = 3,
			.max_recv_sge = 2,
		},
	};

	s->port = 1;
	s->ctx = open_dev(dev);
	if (ibv_query_port(s->ctx, s->port, &pa) || ibv_query_device(s->ctx, &da))
		fail("query %s: %s", dev, strerror(errno));
	if (pa.state != IBV_PORT_ACTIVE)
		fail("port 1 of %s is not active", dev);
	s->mtu = pa.active_mtu;
	s->max_rd_atomic = da.max_qp_rd_atom < 16 ? (uint8_t)da.max_qp_rd_atom : 16;
	s->gidx = gidx >= 0 ? gidx : roce_v2_ipv4_gid(s->ctx, s->port, pa.gid_tbl_len);
	if (s->gidx < 0)
		fail("%s has no RoCEv2 IPv4 GID (give one with -g)", dev);
	if (ibv_query_gid(s->ctx, s->port, s->gidx, &s->gid))
		fail("query GID %d: %s", s->gidx, strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	if (!s->pd || !s->ch)
		fail("PD/completion channel: %s", strerror(errno));
	s->cq = ibv_create_cq(s->ctx, 2 * WINDOW + NRECV, NULL, s->ch, 0);
	if (!s->cq)
		fail("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = s->cq;
	if (ext) {
		/* The extra operations are posted with the extended API. */
		struct ibv_qp_init_attr_ex ix = {
			.qp_type = ia.qp_type,
			.send_cq = s->cq,
			.recv_cq = s->cq,
			.cap = ia.cap,
			.pd = s->pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
					  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE |
					  IBV_QP_EX_WITH_FLUSH,
		};

		s->qp = ibv_create_qp_ex(s->ctx, &ix);
	} else {
		s->qp = ibv_create_qp(s->pd, &ia);
	}
	if (!s->qp)
		fail("ibv_create_qp: %s", strerror(errno));
}

static struct ibv_mr *reg(struct side *s, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(s->pd, buf, len, access);

	if (!mr)
		fail("ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
	return mr;
}

static void *zalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		fail("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

static void connect_qp(struct side *s, const struct hello *me,
		       const struct hello *peer, uint8_t qp_timeout, unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = (uint8_t)s->port,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | access,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		fail("QP to INIT: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = me->mtu < peer->mtu ? (enum ibv_mtu)me->mtu : (enum ibv_mtu)peer->mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = s->max_rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = (uint8_t)s->port;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		fail("QP to RTR: %s", strerror(errno));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = qp_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;	/* infinite: the receiver may lag */
	a.sq_psn = me->psn;
	a.max_rd_atomic = s->max_rd_atomic;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		fail("QP to RTS: %s", strerror(errno));
}

static const char *op_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "send";
	case IBV_WC_RDMA_WRITE: return "write";
	case IBV_WC_RDMA_READ: return "read";
	case IBV_WC_RECV: return "recv";
	case IBV_WC_ATOMIC_WRITE: return "atomic write";
	case IBV_WC_FLUSH: return "flush";
	case IBV_WC_BIND_MW: return "bind mw";
	default: return "other";
	}
}

/*
 * Takes one event from the context's async FD: a port event (the netdev
 * went down or changed MTU) is acknowledged and ignored; the device's
 * removal (IBV_EVENT_DEVICE_FATAL, which ib_uverbs sends when it
 * disassociates the context) ends the run. After a removal the CQ's ring
 * is no longer the device's (ib_uverbs maps a zeroed page in its place):
 * polling it would wait for nothing until the alarm.
 */
static void async_event(struct side *s)
{
	struct ibv_async_event ev;

	if (ibv_get_async_event(s->ctx, &ev))
		fail("ibv_get_async_event: %s", strerror(errno));
	if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
		fail("the device was removed (IBV_EVENT_DEVICE_FATAL)");
	ibv_ack_async_event(&ev);
}

/*
 * Waits for the next completion, sleeping on the completion channel (not
 * spinning: under TCG the device's work needs the CPUs), and on the async
 * FD for the device's removal.
 */
static void wait_wc(struct side *s, struct ibv_wc *wc)
{
	int watch_peer = s->peer >= 0;

	for (;;) {
		int n = ibv_poll_cq(s->cq, 1, wc);
		struct pollfd pfd[3] = {
			{ .fd = s->ch->fd, .events = POLLIN },
			{ .fd = watch_peer ? s->peer : -1, .events = POLLIN },
			{ .fd = s->ctx->async_fd, .events = POLLIN },
		};
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		char b;

		if (n < 0)
			fail("ibv_poll_cq: %d", n);
		if (n == 1)
			break;
		if (ibv_req_notify_cq(s->cq, 0))
			fail("ibv_req_notify_cq");
		n = ibv_poll_cq(s->cq, 1, wc);
		if (n == 1)
			break;
		if (poll(pfd, 3, 1000) < 0 && errno != EINTR)
			fail("poll: %s", strerror(errno));
		if (pfd[2].revents & POLLIN)
			async_event(s);
		/* A channel ib_uverbs closed (the device's removal) polls as
		 * an error, never readable again. */
		if (pfd[0].revents & (POLLERR | POLLHUP))
			fail("the completion channel was closed");
		if (pfd[0].revents & POLLIN) {
			if (ibv_get_cq_event(s->ch, &ev_cq, &ev_ctx))
				fail("ibv_get_cq_event");
			ibv_ack_cq_events(ev_cq, 1);
		}
		if (pfd[1].revents) {
			/* End of stream or an error: the client is gone. Data
			 * (not sent by this protocol while a completion is
			 * awaited) is left for recv_byte. */
			if (recv(s->peer, &b, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
				fail("the client left while the server waited for a completion");
			watch_peer = 0;
		}
	}
}

/* The next completion, which must be successful. */
static void next_wc(struct side *s, struct ibv_wc *wc)
{
	wait_wc(s, wc);
	if (wc->status != IBV_WC_SUCCESS)
		fail("%s completion %" PRIu64 ": %s (vendor error 0x%x)",
		     op_name(wc->opcode), wc->wr_id, ibv_wc_status_str(wc->status),
		     wc->vendor_err);
}


/* ---- the extra operations (awrite, flush, mw) ---- */

/* The server's extra region and its windows. */
struct ext {
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_mw *mw1, *mw2;
	uint32_t mw1_rkey, mw2_rkey;	/* the keys they take when bound */
};

/* The value of ATOMIC WRITE number I. */
static uint64_t awrite_value(uint64_t seed, unsigned int i)
{
	return mix(seed ^ (0xa7017e00u + i));
}

/* Registers the extra region; allocates the windows (bound once the QP is
 * connected, with the keys chosen here). */
static void ext_open(struct side *s, struct ext *x, unsigned int ops)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;

	if (ops & OP_FLUSH)
		access |= IBV_ACCESS_FLUSH_GLOBAL;
	x->buf = zalloc(EXT);
	memset(x->buf, CANARY, EXT);
	x->mr = reg(s, x->buf, EXT, access);
	if (!(ops & OP_MW))
		return;
	x->mw1 = ibv_alloc_mw(s->pd, IBV_MW_TYPE_1);
	x->mw2 = ibv_alloc_mw(s->pd, IBV_MW_TYPE_2);
	if (!x->mw1 || !x->mw2)
		fail("ibv_alloc_mw: %s", strerror(errno));
	x->mw1_rkey = ibv_inc_rkey(x->mw1->rkey);
	x->mw2_rkey = ibv_inc_rkey(x->mw2->rkey);
}

/* Binds window 1 (type 1, with the bind verb) over part 2 and window 2
 * (type 2B, with a BIND_MW work request) over part 3. */
static void bind_windows(struct side *s, struct ext *x)
{
	int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mw_bind b1 = {
		.wr_id = 1001,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = x->mr, .addr = (uintptr_t)(x->buf + 2 * EXT_PART),
			       .length = EXT_PART, .mw_access_flags = access },
	};
	struct ibv_send_wr wr = {
		.wr_id = 1002,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = {
			.mw = x->mw2,
			.rkey = x->mw2_rkey,
			.bind_info = { .mr = x->mr, .addr = (uintptr_t)(x->buf + 3 * EXT_PART),
				       .length = EXT_PART, .mw_access_flags = access },
		},
	}, *bad;
	struct ibv_wc wc;

	if (!x->mw1)
		return;
	phase = "binding the windows";
	if (ibv_bind_mw(s->qp, x->mw1, &b1))
		fail("ibv_bind_mw: %s", strerror(errno));
	if (ibv_post_send(s->qp, &wr, &bad))
		fail("BIND_MW: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		next_wc(s, &wc);
		if (wc.opcode != IBV_WC_BIND_MW)
			fail("unexpected %s completion", op_name(wc.opcode));
	}
	if (x->mw1->rkey != x->mw1_rkey)
		fail("type 1 window has key 0x%x, expected 0x%x", x->mw1->rkey, x->mw1_rkey);
}

/* The server checks what the client's extra operations left. */
static int ext_check(const struct ext *x, unsigned int ops, uint64_t seed)
{
	if (ops & OP_AWRITE)
		for (unsigned int i = 0; i < AWRITES; i++) {
			uint64_t v;

			memcpy(&v, x->buf + 8 * i, 8);
			if (v != awrite_value(seed, i)) {
				fprintf(stderr, "xfer: FAIL: atomic write %u: found 0x%016" PRIx64
					", expected 0x%016" PRIx64 "\n", i, v, awrite_value(seed, i));
				return 1;
			}
		}
	if ((ops & OP_FLUSH) &&
	    verify(x->buf + EXT_PART, EXT_PART, 0, op_key(seed, OP_FLUSH)) >= 0) {
		fprintf(stderr, "xfer: FAIL: the flushed block differs\n");
		return 1;
	}
	if ((ops & OP_MW) &&
	    verify(x->buf + 2 * EXT_PART, 2 * EXT_PART, 0, op_key(seed, OP_MW)) >= 0) {
		fprintf(stderr, "xfer: FAIL: the bytes written through the windows differ\n");
		return 1;
	}
	return 0;
}

/* Posts one signaled extended work request and waits for its completion. */
static void ext_post(struct side *s, struct ibv_wc *wc, uint64_t wr_id,
		     void (*post)(struct ibv_qp_ex *qx, const void *arg), const void *arg)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(s->qp);

	ibv_wr_start(qx);
	qx->wr_id = wr_id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	post(qx, arg);
	if (ibv_wr_complete(qx))
		fail("ibv_wr_complete (%" PRIu64 "): %s", wr_id, strerror(errno));
	wait_wc(s, wc);
}

struct ext_wr {
	uint32_t rkey;
	uint64_t addr;
	uint64_t value;
	uint32_t len;
	uint8_t level;
	struct ibv_sge sge;
	enum ibv_wr_opcode rdma;
};

static void post_awrite(struct ibv_qp_ex *qx, const void *arg)
{
	const struct ext_wr *w = arg;

	ibv_wr_atomic_write(qx, w->rkey, w->addr, &w->value);
}

static void post_flush(struct ibv_qp_ex *qx, const void *arg)
{
	const struct ext_wr *w = arg;

	ibv_wr_flush(qx, w->rkey, w->addr, w->len, IBV_FLUSH_GLOBAL, w->level);
}

static void post_rdma(struct ibv_qp_ex *qx, const void *arg)
{
	const struct ext_wr *w = arg;

	if (w->rdma == IBV_WR_RDMA_READ)
		ibv_wr_rdma_read(qx, w->rkey, w->addr);
	else
		ibv_wr_rdma_write(qx, w->rkey, w->addr);
	ibv_wr_set_sge_list(qx, 1, &w->sge);
}

static void expect_ok(const struct ibv_wc *wc, const char *what)
{
	if (wc->status != IBV_WC_SUCCESS)
		fail("%s: %s", what, ibv_wc_status_str(wc->status));
}

/*
 * Posts ATOMIC WRITEs FIRST.. at once, as many as the send queue holds:
 * twice the QP's max_rd_atomic, which they count against (as READs and
 * atomics do), so the requester must hold back half of them until the
 * first are acknowledged. Then waits for each to complete, in order.
 */
static void awrite_batch(struct side *s, const struct hello *peer, uint64_t seed,
			 unsigned int first)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(s->qp);
	unsigned int end = first + AWRITE_BATCH < AWRITES ? first + AWRITE_BATCH : AWRITES;
	struct ext_wr w = { .rkey = peer->xrkey };
	struct ibv_wc wc;

	ibv_wr_start(qx);
	for (unsigned int i = first; i < end; i++) {
		qx->wr_id = i;
		qx->wr_flags = IBV_SEND_SIGNALED;
		w.addr = peer->xaddr + 8 * i;
		w.value = awrite_value(seed, i);
		post_awrite(qx, &w);
	}
	if (ibv_wr_complete(qx))
		fail("ibv_wr_complete (atomic writes from %u): %s", first, strerror(errno));
	for (unsigned int i = first; i < end; i++) {
		wait_wc(s, &wc);
		expect_ok(&wc, "atomic write");
		if (wc.wr_id != i)
			fail("atomic write %u completed in place of %" PRIu64, i, wc.wr_id);
		if (wc.opcode != IBV_WC_ATOMIC_WRITE)
			fail("atomic write completed as %s", op_name(wc.opcode));
		if (wc.byte_len != 8)
			fail("atomic write completed with byte_len %u", wc.byte_len);
	}
}

/* The client's extra operations, one request at a time. */
static void ext_client(struct side *s, const struct hello *peer, unsigned int ops,
		       uint64_t seed)
{
	uint8_t *local = zalloc(2 * EXT_PART);
	struct ibv_mr *mr = reg(s, local, 2 * EXT_PART, IBV_ACCESS_LOCAL_WRITE);
	struct ext_wr w = { .sge = { .lkey = mr->lkey } };
	struct ibv_wc wc;

	if (ops & OP_AWRITE) {
		phase = "atomic write";
		for (unsigned int i = 0; i < AWRITES; i += AWRITE_BATCH)
			awrite_batch(s, peer, seed, i);
		printf("xfer: %u atomic writes done\n", AWRITES);
	}
	if (ops & OP_FLUSH) {
		phase = "flush";
		fill(local, EXT_PART, 0, op_key(seed, OP_FLUSH));
		w = (struct ext_wr){ .rkey = peer->xrkey, .addr = peer->xaddr + EXT_PART,
				     .rdma = IBV_WR_RDMA_WRITE,
				     .sge = { (uintptr_t)local, EXT_PART, mr->lkey } };
		ext_post(s, &wc, 1, post_rdma, &w);
		expect_ok(&wc, "write before flush");
		w.len = EXT_PART;
		w.level = IBV_FLUSH_RANGE;
		ext_post(s, &wc, 2, post_flush, &w);
		expect_ok(&wc, "flush (range)");
		if (wc.opcode != IBV_WC_FLUSH)
			fail("flush completed as %s", op_name(wc.opcode));
		/* rxe reports the length flushed (its WQE's dma.length). */
		if (wc.byte_len != (uint32_t)EXT_PART)
			fail("flush completed with byte_len %u, not %d", wc.byte_len,
			     EXT_PART);
		w.addr = 0;
		w.len = 0;
		w.level = IBV_FLUSH_MR;
		ext_post(s, &wc, 3, post_flush, &w);
		expect_ok(&wc, "flush (region)");
		printf("xfer: flushes done\n");
	}
	if (ops & OP_MW) {
		uint32_t keys[2] = { peer->mw1_rkey, peer->mw2_rkey };

		phase = "windows";
		fill(local, 2 * EXT_PART, 0, op_key(seed, OP_MW));
		/* Each window in 4 writes, then read back whole into the other
		 * half of the buffer, which is cleared first. */
		for (int k = 0; k < 2; k++) {
			uint64_t base = peer->xaddr + (2 + k) * EXT_PART;

			for (int j = 0; j < 4; j++) {
				w = (struct ext_wr){ .rkey = keys[k], .addr = base + j * 1024,
						     .rdma = IBV_WR_RDMA_WRITE,
						     .sge = { (uintptr_t)(local + k * EXT_PART + j * 1024),
							      1024, mr->lkey } };
				ext_post(s, &wc, 10 + j, post_rdma, &w);
				expect_ok(&wc, "write through a window");
			}
		}
		memset(local, 0, 2 * EXT_PART);
		for (int k = 0; k < 2; k++) {
			w = (struct ext_wr){ .rkey = keys[k],
					     .addr = peer->xaddr + (2 + k) * EXT_PART,
					     .rdma = IBV_WR_RDMA_READ,
					     .sge = { (uintptr_t)(local + k * EXT_PART), EXT_PART,
						      mr->lkey } };
			ext_post(s, &wc, 20 + k, post_rdma, &w);
			expect_ok(&wc, "read through a window");
		}
		if (verify(local, 2 * EXT_PART, 0, op_key(seed, OP_MW)) >= 0)
			fail("what was read back through the windows differs");
		/* Past the type 2B window's end: refused by the responder. */
		w = (struct ext_wr){ .rkey = keys[1], .addr = peer->xaddr + 3 * EXT_PART + 1,
				     .rdma = IBV_WR_RDMA_WRITE,
				     .sge = { (uintptr_t)local, EXT_PART, mr->lkey } };
		ext_post(s, &wc, 30, post_rdma, &w);
		if (wc.status != IBV_WC_REM_ACCESS_ERR)
			fail("a write past a window completed with '%s', not a remote access error",
			     ibv_wc_status_str(wc.status));
		printf("xfer: windows: writes and reads verified, access past the end refused\n");
	}
}

/* ---- the client ---- */

/*
 * Posts one work request per chunk of C (at most WINDOW in flight) and
 * waits for all completions. LOCAL is the local buffer of the stream,
 * REMOTE_ADDR/RKEY the server's region (0 for sends).
 */
static void run_requests(struct side *s, enum ibv_wr_opcode opcode,
			 const struct chunk *c, size_t n, uint8_t *local,
			 struct ibv_mr *mr, uint64_t remote_addr, uint32_t rkey,
			 uint64_t seed)
{
	size_t posted = 0, done = 0;

	while (done < n) {
		while (posted < n && posted - done < WINDOW) {
			struct ibv_sge sge[3];
			struct ibv_send_wr wr = {
				.wr_id = posted,
				.sg_list = sge,
				.opcode = opcode,
				.send_flags = IBV_SEND_SIGNALED,
			}, *bad;
			uint32_t piece[3] = { c[posted].len };
			uint64_t off = c[posted].off;
			int k = 1;

			/* Writes and sends gather from 1 to 3 pieces. */
			if (opcode != IBV_WR_RDMA_READ)
				k = split(c[posted].len, mix(seed + posted), piece);

			for (int i = 0; i < k; i++) {
				sge[i].addr = (uintptr_t)(local + off);
				sge[i].length = piece[i];
				sge[i].lkey = mr->lkey;
				off += piece[i];
			}
			wr.num_sge = k;
			if (opcode != IBV_WR_SEND) {
				wr.wr.rdma.remote_addr = remote_addr + c[posted].off;
				wr.wr.rdma.rkey = rkey;
			}
			if (ibv_post_send(s->qp, &wr, &bad))
				fail("ibv_post_send (message %zu): %s", posted, strerror(errno));
			posted++;
		}
		{
			struct ibv_wc wc;

			next_wc(s, &wc);
			done++;
		}
	}
}

static int client(struct side *s, const char *host, const char *port, uint64_t bytes,
		  uint64_t seed, unsigned int ops, uint8_t qp_timeout)
{
	struct hello me = { .magic = MAGIC }, peer;
	uint8_t *wsrc = NULL, *rdst = NULL, *ssrc = NULL, *mem;
	size_t n;
	struct chunk *c = make_chunks(bytes, seed, &n);
	struct ibv_mr *mr;
	uint64_t total = 0;
	int fd;

	/* One region: write source, read destination, send source. */
	mem = zalloc(3 * bytes);
	wsrc = mem;
	rdst = mem + bytes;
	ssrc = mem + 2 * bytes;
	fill(wsrc, bytes, 0, op_key(seed, OP_WRITE));
	fill(ssrc, bytes, 0, op_key(seed, OP_SEND));
	mr = reg(s, mem, 3 * bytes, IBV_ACCESS_LOCAL_WRITE);

	srand48((long)(time(NULL) ^ getpid()));
	me.qpn = s->qp->qp_num;
	me.psn = (uint32_t)lrand48() & 0xffffff;
	me.mtu = s->mtu;
	me.ops = ops;
	me.bytes = bytes;
	me.seed = seed;
	memcpy(me.gid, s->gid.raw, 16);

	phase = "connecting";
	fd = tcp_client(host, port);
	xfer_all(fd, &me, sizeof(me), 1);
	xfer_all(fd, &peer, sizeof(peer), 0);
	if (memcmp(peer.magic, MAGIC, 8))
		fail("the server speaks another protocol");
	connect_qp(s, &me, &peer, qp_timeout, 0);
	if (recv_byte(fd) != 'R')
		fail("the server is not ready");
	printf("xfer: client QP %u (PSN %u) <-> server QP %u (PSN %u), MTU %d, %zu messages per operation\n",
	       me.qpn, me.psn, peer.qpn, peer.psn, 128 << (me.mtu < peer.mtu ? me.mtu : peer.mtu), n);
	fflush(stdout);

	if (ops & OP_WRITE) {
		double t = now();

		phase = "write";
		run_requests(s, IBV_WR_RDMA_WRITE, c, n, wsrc, mr, peer.waddr, peer.wrkey, seed);
		send_byte(fd, 'W');
		if (recv_byte(fd) != 0)
			fail("the server found a mismatch in the written data");
		printf("xfer: write %" PRIu64 " bytes verified (%.2f s)\n", bytes, now() - t);
		total += bytes;
	}
	if (ops & OP_READ) {
		double t = now();

		phase = "read";
		run_requests(s, IBV_WR_RDMA_READ, c, n, rdst, mr, peer.raddr, peer.rrkey, seed);
		for (size_t i = 0; i < n; i++)
			mismatch("read", rdst + c[i].off, c[i].len, c[i].off,
				 op_key(seed, OP_READ), &c[i], i);
		printf("xfer: read %" PRIu64 " bytes verified (%.2f s)\n", bytes, now() - t);
		total += bytes;
	}
	if (ops & OP_SEND) {
		double t = now();

		phase = "send";
		send_byte(fd, 'S');
		run_requests(s, IBV_WR_SEND, c, n, ssrc, mr, 0, 0, seed);
		if (recv_byte(fd) != 0)
			fail("the server found a mismatch in the received messages");
		printf("xfer: send %" PRIu64 " bytes verified (%.2f s)\n", bytes, now() - t);
		total += bytes;
	}
	if (ops & OP_EXT) {
		double t = now();

		ext_client(s, &peer, ops, seed);
		send_byte(fd, 'X');
		if (recv_byte(fd) != 0)
			fail("the server found a mismatch in its extra region");
		printf("xfer: extra operations verified (%.2f s)\n", now() - t);
	}
	phase = "finishing";
	send_byte(fd, 'Q');
	recv_byte(fd);
	printf("xfer: OK bytes=%" PRIu64 "\n", total);
	return 0;
}

/* ---- the server ---- */

static void post_recv(struct side *s, uint8_t *slots, struct ibv_mr *mr, unsigned int i)
{
	uint8_t *slot = slots + (size_t)i * SLOT;
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)slot, .length = SGE0_LEN, .lkey = mr->lkey },
		{ .addr = (uintptr_t)(slot + SGE0_LEN + GAP), .length = MAX_MSG - SGE0_LEN,
		  .lkey = mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge, .num_sge = 2 }, *bad;

	memset(slot, CANARY, SLOT);
	if (ibv_post_recv(s->qp, &wr, &bad))
		fail("ibv_post_recv: %s", strerror(errno));
}

static int guards_intact(const uint8_t *slot, uint32_t len)
{
	const uint8_t *gap = slot + SGE0_LEN, *tail = slot + SLOT - GUARD;
	uint32_t in1 = len > SGE0_LEN ? len - SGE0_LEN : 0;
	const uint8_t *after1 = slot + SGE0_LEN + GAP + in1;

	for (size_t i = 0; i < GAP; i++)
		if (gap[i] != CANARY)
			return 0;
	for (size_t i = 0; i < GUARD; i++)
		if (tail[i] != CANARY)
			return 0;
	/* The unused part of the receive must stay untouched. */
	if (len < SGE0_LEN) {
		for (uint32_t i = len; i < SGE0_LEN; i++)
			if (slot[i] != CANARY)
				return 0;
		if (slot[SGE0_LEN + GAP] != CANARY)
			return 0;
	} else if (after1 < tail && *after1 != CANARY) {
		return 0;
	}
	return 1;
}

/* Receives and verifies the N messages of the send stream. */
static int receive_stream(struct side *s, const struct chunk *c, size_t n,
			  uint8_t *slots, struct ibv_mr *mr, uint64_t key)
{
	for (size_t i = 0; i < n; i++) {
		struct ibv_wc wc;
		unsigned int slot_i;
		uint8_t *slot;
		uint32_t len = c[i].len, first = len < SGE0_LEN ? len : SGE0_LEN;

		next_wc(s, &wc);
		if (wc.opcode != IBV_WC_RECV)
			fail("unexpected %s completion", op_name(wc.opcode));
		slot_i = (unsigned int)wc.wr_id;
		slot = slots + (size_t)slot_i * SLOT;
		if (wc.byte_len != len) {
			fprintf(stderr, "xfer: FAIL: message %zu has %u bytes, expected %u\n",
				i, wc.byte_len, len);
			return 1;
		}
		/* rxe marks every receive as having a GRH, and nothing else
		 * here (no immediate data, no invalidation). */
		if (wc.wc_flags != IBV_WC_GRH)
			fail("message %zu completed with wc_flags %#x, expected IBV_WC_GRH",
			     i, wc.wc_flags);
		mismatch("send", slot, first, c[i].off, key, &c[i], i);
		if (len > first)
			mismatch("send", slot + SGE0_LEN + GAP, len - first, c[i].off + first,
				 key, &c[i], i);
		if (!guards_intact(slot, len)) {
			fprintf(stderr, "xfer: FAIL: message %zu (%u bytes) wrote outside its scatter entries\n",
				i, len);
			return 1;
		}
		post_recv(s, slots, mr, slot_i);
	}
	return 0;
}

static int server(struct side *s, const char *port)
{
	struct hello me = { .magic = MAGIC }, peer;
	struct ibv_mr *wmr, *rmr, *smr;
	uint8_t *wdst, *rsrc, *slots;
	struct chunk *c;
	struct ext x = { 0 };
	size_t n;
	int fd, rc = 0;
	uint8_t cmd;

	phase = "waiting for the client";
	fd = tcp_server(port);
	s->peer = fd;
	xfer_all(fd, &peer, sizeof(peer), 0);
	if (memcmp(peer.magic, MAGIC, 8))
		fail("the client speaks another protocol");
	if (!peer.bytes || peer.bytes > (1ull << 32))
		fail("the client asks for %" PRIu64 " bytes", peer.bytes);
	c = make_chunks(peer.bytes, peer.seed, &n);

	/* The write region allows remote writes only, the read region remote
	 * reads only: an access mixed up fails. */
	wdst = zalloc(peer.bytes);
	rsrc = zalloc(peer.bytes);
	fill(rsrc, peer.bytes, 0, op_key(peer.seed, OP_READ));
	slots = zalloc((size_t)NRECV * SLOT);
	wmr = reg(s, wdst, peer.bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	rmr = reg(s, rsrc, peer.bytes, IBV_ACCESS_REMOTE_READ);
	smr = reg(s, slots, (size_t)NRECV * SLOT, IBV_ACCESS_LOCAL_WRITE);

	srand48((long)(time(NULL) ^ getpid()));
	me.qpn = s->qp->qp_num;
	me.psn = (uint32_t)lrand48() & 0xffffff;
	me.mtu = s->mtu;
	memcpy(me.gid, s->gid.raw, 16);
	me.waddr = (uintptr_t)wdst;
	me.wrkey = wmr->rkey;
	me.raddr = (uintptr_t)rsrc;
	me.rrkey = rmr->rkey;
	if (peer.ops & OP_EXT) {
		ext_open(s, &x, peer.ops);
		me.xaddr = (uintptr_t)x.buf;
		me.xrkey = x.mr->rkey;
		me.mw1_rkey = x.mw1_rkey;
		me.mw2_rkey = x.mw2_rkey;
	}
	xfer_all(fd, &me, sizeof(me), 1);
	connect_qp(s, &me, &peer, 14, peer.ops & OP_FLUSH ? IBV_ACCESS_FLUSH_GLOBAL : 0);
	for (unsigned int i = 0; i < NRECV; i++)
		post_recv(s, slots, smr, i);
	if (peer.ops & OP_EXT)
		bind_windows(s, &x);
	send_byte(fd, 'R');

	for (;;) {
		phase = "waiting for a command";
		cmd = recv_byte(fd);
		if (cmd == 'W') {
			phase = "checking the written data";
			for (size_t i = 0; i < n; i++)
				if (verify(wdst + c[i].off, c[i].len, c[i].off,
					   op_key(peer.seed, OP_WRITE)) >= 0) {
					rc = 1;
					send_byte(fd, 1);
					mismatch("write", wdst + c[i].off, c[i].len, c[i].off,
						 op_key(peer.seed, OP_WRITE), &c[i], i);
				}
			send_byte(fd, 0);
			printf("xfer: server: write %" PRIu64 " bytes verified\n", peer.bytes);
		} else if (cmd == 'S') {
			phase = "receiving";
			rc = receive_stream(s, c, n, slots, smr, op_key(peer.seed, OP_SEND));
			send_byte(fd, (uint8_t)rc);
			if (rc)
				return rc;
			printf("xfer: server: send %" PRIu64 " bytes verified\n", peer.bytes);
		} else if (cmd == 'X') {
			phase = "checking the extra region";
			rc = ext_check(&x, peer.ops, peer.seed);
			send_byte(fd, (uint8_t)rc);
			if (rc)
				return rc;
			printf("xfer: server: extra operations verified\n");
		} else if (cmd == 'Q') {
			send_byte(fd, 0);
			break;
		} else {
			fail("unknown command 0x%02x", cmd);
		}
		fflush(stdout);
	}
	printf("xfer: server OK\n");
	return rc;
}

static unsigned int parse_ops(const char *s)
{
	unsigned int ops = 0;
	char *copy = strdup(s), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "write"))
			ops |= OP_WRITE;
		else if (!strcmp(tok, "read"))
			ops |= OP_READ;
		else if (!strcmp(tok, "send"))
			ops |= OP_SEND;
		else if (!strcmp(tok, "awrite"))
			ops |= OP_AWRITE;
		else if (!strcmp(tok, "flush"))
			ops |= OP_FLUSH;
		else if (!strcmp(tok, "mw"))
			ops |= OP_MW;
		else
			fail("unknown operation '%s' (write, read, send, awrite, flush, mw)", tok);
	}
	free(copy);
	return ops;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rrxe_xfer -d DEV [-g GIDX] [-p PORT] [-t SECS]            (server)\n"
		"       rrxe_xfer -d DEV [-g GIDX] [-p PORT] [-t SECS] [-b BYTES] [-s SEED]\n"
		"                 [-o write,read,send,awrite,flush,mw] [-T QP_TIMEOUT] SERVER\n"
		"                                                                  (client)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "18600";
	uint64_t bytes = 4u << 20, seed = 1;
	unsigned int ops = OP_WRITE | OP_READ | OP_SEND;
	int gidx = -1, opt, rc;
	uint8_t qp_timeout = 16;
	struct side s = { .peer = -1 };

	while ((opt = getopt(argc, argv, "d:g:p:t:b:s:o:T:h")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 't': timeout_s = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': bytes = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'o': ops = parse_ops(optarg); break;
		case 'T': qp_timeout = (uint8_t)atoi(optarg); break;
		default: usage();
		}
	}
	if (optind < argc - 1 || !bytes || bytes > (1ull << 32) || !ops)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(timeout_s);
	/* The server learns the operations later; it needs no extended QP. */
	side_open(&s, dev, gidx, optind == argc - 1 && (ops & OP_EXT));
	if (optind == argc - 1)
		rc = client(&s, argv[optind], port, bytes, seed, ops, qp_timeout);
	else
		rc = server(&s, port);
	/* The process exit tears the verbs objects down. */
	return rc;
}
