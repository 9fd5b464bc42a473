// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_odp: on-demand paging (IBV_ACCESS_ON_DEMAND) on one device, case by
 * case, for tools/testing/vm/28-odp.sh, which runs it on rdma_rxe and on
 * rrxe and compares the answers.
 *
 *   rrxe_odp -d DEV -g GIDX [-n ITERS] [CASE...]
 *
 * Two QPs of the device are connected to each other (its own address: run
 * it in the namespace of the device's netdev). Every buffer is anonymous
 * memory registered with IBV_ACCESS_ON_DEMAND, and between messages the
 * process takes the pages away from under the device: madvise
 * (MADV_DONTNEED), a new mapping over the old one (mmap MAP_FIXED), a fork
 * (copy-on-write), so that the device faults them in again, and every byte
 * that lands is checked. Then the hostile cases: memory unmapped before or
 * during a transfer must end it with a clean completion error.
 *
 * Cases (all by default, in this order):
 *
 *   caps         the device's odp_caps (ibv_query_device_ex): explicit ODP
 *                and its transport caps
 *   implicit_caps  IBV_ODP_SUPPORT_IMPLICIT advertised ("ok") or not
 *   implicit     implicit ODP (address 0, length SIZE_MAX): the errno
 *   implicit_iova  implicit ODP at an iova other than 0: the errno
 *   hugetlb      IBV_ACCESS_HUGETLB with ODP: the errno
 *   rc_send      SEND/RECV of sizes 1 B .. 1 MiB, both buffers madvised
 *   rc_write     RDMA WRITE, both buffers madvised
 *   rc_read      RDMA READ, both buffers madvised (and one of memory
 *                never touched: zeros)
 *   rc_atomic    fetch-and-add and compare-and-swap on a madvised word,
 *                the result into a madvised buffer
 *   rc_srq       SEND/RECV through an SRQ, receives madvised
 *   rc_remap     RDMA WRITE into memory mapped anew at the same address
 *   rc_fork      RDMA WRITE while a forked child holds a copy-on-write
 *                copy: the writes land in the parent, the child's copy
 *                keeps the old bytes
 *   ud_send      UD SEND/RECV, both buffers madvised
 *   prefetch     advise_mr (through the ioctl: the rxe provider does not
 *                pass ibv_advise_mr on): read, write and no-fault, with and
 *                without IB_UVERBS_ADVISE_MR_FLAG_FLUSH, then traffic; a
 *                bad L_Key; a range not mapped
 *   prefetch_ro  a write prefetch of a region registered without write
 *                access (the drivers differ: see 28-odp.sh)
 *   prefetch_iova  advise_mr on a region registered at an iova other than
 *                its address (ibv_reg_mr_iova): the SGE in the region's
 *                iova space must prefetch, one at the address (outside
 *                that space) EFAULT; then a WRITE to the iova lands at the
 *                address. rdma_rxe takes the SGE as an address, and its
 *                data path reads iovas as addresses (so the WRITE is only
 *                sent where the iova advice passed: rdma_rxe would read
 *                past its page table)
 *   unmapped_write, unmapped_read   RDMA WRITE / READ of a remote region
 *                whose memory was unmapped: the requester's status
 *   unmapped_send   SEND from a local region whose memory was unmapped
 *   unmapped_recv   SEND into a receive whose memory was unmapped: both
 *                statuses
 *   unmap_midway a 4 MiB RDMA WRITE, the target unmapped right after it
 *                was posted: success or a remote access error, nothing
 *                else
 *
 * Implicit ODP: one region over the whole address space (ibv_reg_mr of
 * NULL, SIZE_MAX), both QPs' buffers in it, each 1 MiB straddling a 1 GiB
 * boundary (an access crossing it spans two of the driver's children),
 * the two 2 GiB apart (other children again). Where the registration
 * fails, each case prints only its errno (rdma_rxe: EOPNOTSUPP):
 *
 *   implicit_rc_send, implicit_rc_write, implicit_rc_read   as rc_send,
 *                rc_write, rc_read (both buffers madvised before each
 *                message, every byte checked)
 *   implicit_rc_atomic   as rc_atomic
 *   implicit_prefetch    advise_mr on the implicit region (write, read,
 *                no-fault, with the flush flag) of both buffers, each
 *                followed by a checked WRITE; "ok"
 *   implicit_prefetch_unmapped        a write prefetch (flush flag) of
 *                memory the process does not have: the errno
 *   implicit_prefetch_unmapped_async  the same without the flag: the errno
 *   implicit_unmapped_write, implicit_unmapped_read   RDMA WRITE / READ of
 *                memory the process unmapped (never reached before): the
 *                requester's status
 *   implicit_unmapped_again   RDMA WRITE of memory reached before (its
 *                child made), then unmapped: the requester's status
 *   implicit_unmapped_send    SEND from local memory the process
 *                unmapped: the requester's status
 *
 * Only when named:
 *
 *   secret       memfd_secret memory (out of the kernel's direct map),
 *                registered with ODP: an RDMA WRITE into it, an RDMA READ
 *                of it, a SEND from it must each fail cleanly, the device
 *                never touching the pages (rdma_rxe's data path maps them
 *                all the same: an oops, so 28-odp.sh runs it on rrxe only)
 *
 * Prints one line per case, "case NAME: RESULT", RESULT being "ok", an
 * errno's name, or the completion status(es) (ibv_wc_status_str), or
 * "FAIL ..." for a data mismatch or a timeout; "info ..." lines say more.
 * Exit status 0 unless the device cannot be used at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#define BUF (1u << 20)		/* each buffer */
#define BIG (4u << 20)		/* the midway case's write */
#define DEPTH 16
#define POLL_MS 20000		/* a completion that takes longer: FAIL */
#define GRH 40

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static int gidx = -1, iters = 20;
static enum ibv_mtu mtu = IBV_MTU_1024;

static const char *errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case ENOENT: return "ENOENT";
	case EBUSY: return "EBUSY";
	default: return "other";
	}
}

static void result(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void result(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("case %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Anonymous private memory, untouched. */
static uint8_t *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The pages of [p, p + len) go: the next access faults in fresh ones. */
static void drop_pages(void *p, size_t len)
{
	madvise(p, len, MADV_DONTNEED);
}

static struct ibv_mr *odp_mr(void *p, size_t len, int access)
{
	return ibv_reg_mr(pd, p, len, access | IBV_ACCESS_ON_DEMAND);
}

#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* The byte at offset o of message i. */
static uint8_t pat(uint32_t i, size_t o)
{
	uint64_t x = (o + 1) * 0x9e3779b97f4a7c15ull ^ (i + 1) * 0xbf58476d1ce4e5b9ull;

	return (uint8_t)(x >> 56) | 1;
}

static void fill(uint8_t *p, size_t len, uint32_t i)
{
	for (size_t o = 0; o < len; o++)
		p[o] = pat(i, o);
}

/* The first offset where p differs from message i, or -1. */
static long check(const uint8_t *p, size_t len, uint32_t i)
{
	for (size_t o = 0; o < len; o++)
		if (p[o] != pat(i, o))
			return (long)o;
	return -1;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Polls n completions into wc; returns how many came before POLL_MS. */
static int poll_n(struct ibv_wc *wc, int n)
{
	uint64_t end = now_ms() + POLL_MS;
	int got = 0, r;

	while (got < n && now_ms() < end) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return got;
		got += r;
	}
	return got;
}

/* ---- QPs ---------------------------------------------------------------- */

struct pair {
	struct ibv_qp *a, *b;	/* a: requester, b: responder */
	struct ibv_srq *srq;
	struct ibv_ah *ah;	/* UD: to the device itself */
};

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = srq ? 0 : DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 2 },
		.qp_type = type,
		.sq_sig_all = 1,
	};

	return ibv_create_qp(pd, &init);
}

static int to_init(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (type == IBV_QPT_UD) {
		a.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static int rc_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dqpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = gid, .sgid_index = gidx, .hop_limit = 64 },
			.port_num = 1,
		},
	};
	int r;

	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (r)
		return r;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			     IBV_QP_MAX_QP_RD_ATOMIC);
}

static int ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int r = ibv_modify_qp(qp, &a, IBV_QP_STATE);

	if (r)
		return r;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void pair_free(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->srq)
		ibv_destroy_srq(p->srq);
	if (p->ah)
		ibv_destroy_ah(p->ah);
	memset(p, 0, sizeof(*p));
	/* Completions of the QPs just destroyed must not confuse the next. */
	while (ibv_poll_cq(cq, 1, &(struct ibv_wc){ 0 }) > 0)
		;
}

/* Two connected RC QPs (b on an SRQ if asked), or two UD QPs and an AH. */
static int pair_make(struct pair *p, enum ibv_qp_type type, int with_srq)
{
	memset(p, 0, sizeof(*p));
	if (with_srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = DEPTH, .max_sge = 2 } };

		p->srq = ibv_create_srq(pd, &sa);
		if (!p->srq)
			return errno ? errno : EINVAL;
	}
	p->a = make_qp(type, NULL);
	p->b = make_qp(type, p->srq);
	if (!p->a || !p->b)
		goto fail;
	if (to_init(p->a, type) || to_init(p->b, type))
		goto fail;
	if (type == IBV_QPT_RC) {
		if (rc_connect(p->a, p->b->qp_num) || rc_connect(p->b, p->a->qp_num))
			goto fail;
		return 0;
	}
	if (ud_ready(p->a) || ud_ready(p->b))
		goto fail;
	{
		struct ibv_ah_attr aa = {
			.is_global = 1,
			.grh = { .dgid = gid, .sgid_index = gidx, .hop_limit = 64 },
			.port_num = 1,
		};

		p->ah = ibv_create_ah(pd, &aa);
	}
	if (!p->ah)
		goto fail;
	return 0;
fail:
	pair_free(p);
	return EINVAL;
}

/* ---- work requests -------------------------------------------------------- */

static int post_recv(struct pair *p, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (p->srq)
		return ibv_post_srq_recv(p->srq, &wr, &bad);
	return ibv_post_recv(p->b, &wr, &bad);
}

/* Posts one request on a: SEND, WRITE or READ of len bytes of buf, or an
 * atomic into buf (8 bytes), against raddr/rkey. */
static int post_op(struct pair *p, enum ibv_wr_opcode op, void *buf, uint32_t len,
		   uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t add,
		   uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
		wr.wr.atomic.swap = swap;
	} else if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (p->ah) {
		wr.wr.ud.ah = p->ah;
		wr.wr.ud.remote_qpn = p->b->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	return ibv_post_send(p->a, &wr, &bad);
}

/* Waits for n completions; the status of the first that failed (its
 * wr_id's side: 1 requester, 2 responder) into *bad_side, or success. */
static enum ibv_wc_status wait_n(int n, int *bad_side)
{
	struct ibv_wc wc[4];
	int got = poll_n(wc, n);

	*bad_side = 0;
	if (got < n)
		return IBV_WC_GENERAL_ERR;
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			*bad_side = (int)wc[i].wr_id;
			return wc[i].status;
		}
	}
	return IBV_WC_SUCCESS;
}

/* "ok" or what failed, for a case that moves data. */
static char why[160];

static int failed_wc(const char *what, uint32_t i, enum ibv_wc_status s, int side)
{
	if (s == IBV_WC_GENERAL_ERR && !side)
		snprintf(why, sizeof(why), "FAIL %s %u: timeout", what, i);
	else
		snprintf(why, sizeof(why), "FAIL %s %u: %s on the %s", what, i,
			 ibv_wc_status_str(s), side == 2 ? "responder" : "requester");
	return -1;
}

static int failed_data(const char *what, uint32_t i, long at)
{
	snprintf(why, sizeof(why), "FAIL %s %u: data differs at byte %ld", what, i, at);
	return -1;
}

/* Message sizes: across page and MTU boundaries, up to a buffer. */
static uint32_t msg_len(uint32_t i)
{
	static const uint32_t sizes[] = { 1, 100, 4096, 4097, 8192 + 3, 65536,
					  300000, BUF };

	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* ---- the cases -------------------------------------------------------------- */

struct bufs {
	uint8_t *a, *b;		/* requester's, responder's */
	struct ibv_mr *ma, *mb;	/* the same region, if implicit */
	int implicit;
};

static void bufs_free(struct bufs *x)
{
	if (x->ma)
		ibv_dereg_mr(x->ma);
	if (x->mb && x->mb != x->ma)
		ibv_dereg_mr(x->mb);
	if (x->a)
		munmap(x->a, BUF);
	if (x->b)
		munmap(x->b, BUF);
	memset(x, 0, sizeof(*x));
}

static int bufs_make(struct bufs *x)
{
	memset(x, 0, sizeof(*x));
	x->a = map_anon(BUF);
	x->b = map_anon(BUF);
	if (!x->a || !x->b)
		return ENOMEM;
	x->ma = odp_mr(x->a, BUF, ALL_ACCESS);
	if (!x->ma)
		return errno;
	x->mb = odp_mr(x->b, BUF, ALL_ACCESS);
	if (!x->mb)
		return errno;
	return 0;
}

/* ---- implicit ODP -------------------------------------------------------- */

#define GIB (1ull << 30)

static struct ibv_mr *implicit_mr(int access)
{
	return ibv_reg_mr(pd, NULL, SIZE_MAX, access | IBV_ACCESS_ON_DEMAND);
}

/* Anonymous memory mapped at p exactly (inside a reservation). */
static int map_at(uint8_t *p, size_t len)
{
	return mmap(p, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ? -1 : 0;
}

/*
 * x's buffers for the implicit cases, one implicit region for both: a
 * straddles a 1 GiB boundary G, b the boundary G + 2 GiB (so the driver's
 * 1 GiB children of a and of b differ, and a copy of more than half a
 * buffer crosses from one child into the next). Placed in a 4 GiB
 * reservation, whose rest is unmapped again: nothing else of the process
 * lies near them. Returns 0, a registration's errno (> 0), or -1 if the
 * memory cannot be had.
 */
static int bufs_make_implicit(struct bufs *x)
{
	size_t span = 4 * GIB;
	uint8_t *r, *end, *g;

	memset(x, 0, sizeof(*x));
	x->implicit = 1;
	if (sizeof(void *) < 8)
		return -1;
	r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return -1;
	end = r + span;
	g = (uint8_t *)(((uintptr_t)r + BUF + GIB - 1) & ~(uintptr_t)(GIB - 1));
	x->a = g - BUF / 2;
	x->b = g + 2 * GIB - BUF / 2;
	if (map_at(x->a, BUF) || map_at(x->b, BUF)) {
		munmap(r, span);
		x->a = x->b = NULL;
		return -1;
	}
	munmap(r, (size_t)(x->a - r));
	munmap(x->a + BUF, (size_t)(x->b - x->a - BUF));
	munmap(x->b + BUF, (size_t)(end - x->b - BUF));
	printf("info implicit buffers %p and %p (boundaries %p, %p)\n", (void *)x->a,
	       (void *)x->b, (void *)g, (void *)(g + 2 * GIB));
	x->ma = implicit_mr(ALL_ACCESS);
	if (!x->ma)
		return errno ? errno : EINVAL;
	x->mb = x->ma;
	return 0;
}

/* The buffers of a case, implicit or not: 0, or what to print. */
static int bufs_for(struct bufs *x, int implicit, const char *name)
{
	int r = implicit ? bufs_make_implicit(x) : bufs_make(x);

	if (!r)
		return 0;
	if (implicit && r > 0)
		result(name, "%s", errname(r));
	else
		result(name, "register %s", r > 0 ? errname(r) : "no memory");
	bufs_free(x);
	return -1;
}

static void case_implicit_caps(void)
{
	struct ibv_device_attr_ex ex;

	memset(&ex, 0, sizeof(ex));
	if (ibv_query_device_ex(ctx, NULL, &ex))
		result("implicit_caps", "%s", errname(errno));
	else if (ex.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT)
		result("implicit_caps", "ok");
	else
		result("implicit_caps", "no implicit");
}

/* An implicit registration at an iova other than 0 (mlx5: EINVAL). */
static void case_implicit_iova(void)
{
	struct ibv_mr *mr = ibv_reg_mr_iova(pd, NULL, SIZE_MAX, 4096,
					    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);

	if (mr) {
		ibv_dereg_mr(mr);
		result("implicit_iova", "ok");
	} else {
		result("implicit_iova", "%s", errname(errno));
	}
}

static void case_caps(void)
{
	struct ibv_device_attr_ex ex;
	uint32_t rc_want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			   IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			   IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	uint32_t ud_want = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV;
	int r;

	memset(&ex, 0, sizeof(ex));
	r = ibv_query_device_ex(ctx, NULL, &ex);
	if (r) {
		result("caps", "%s", errname(r));
		return;
	}
	printf("info odp general 0x%" PRIx64 " rc 0x%x uc 0x%x ud 0x%x\n",
	       ex.odp_caps.general_caps, ex.odp_caps.per_transport_caps.rc_odp_caps,
	       ex.odp_caps.per_transport_caps.uc_odp_caps,
	       ex.odp_caps.per_transport_caps.ud_odp_caps);
	if (!(ex.odp_caps.general_caps & IBV_ODP_SUPPORT))
		result("caps", "no ODP");
	else if ((ex.odp_caps.per_transport_caps.rc_odp_caps & rc_want) != rc_want ||
		 (ex.odp_caps.per_transport_caps.ud_odp_caps & ud_want) != ud_want)
		result("caps", "transport caps missing");
	else
		result("caps", "ok");
}

static void case_reg(const char *name, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (mr) {
		ibv_dereg_mr(mr);
		result(name, "ok");
	} else {
		result(name, "%s", errname(errno));
	}
}

/* The traffic cases: each message of one iteration. */
enum traffic { T_SEND, T_WRITE, T_READ, T_SRQ, T_REMAP, T_FORK, T_UD };

/* Takes x's pages away as the case asks, before message i. */
static int disturb(enum traffic t, struct bufs *x)
{
	switch (t) {
	case T_REMAP:
		/* New memory at the same address: the old pages are freed. */
		if (mmap(x->b, BUF, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return -1;
		drop_pages(x->a, BUF);
		return 0;
	case T_FORK:
		/* The fork itself write-protects the pages; nothing else. */
		return 0;
	default:
		drop_pages(x->a, BUF);
		drop_pages(x->b, BUF);
		return 0;
	}
}

/* One message i of case t from x->a to x->b (READ: from x->b to x->a). */
static int one_message(struct pair *p, struct bufs *x, enum traffic t, uint32_t i)
{
	uint32_t len = t == T_UD ? 1024 : msg_len(i);
	uint8_t *src = t == T_READ ? x->b : x->a;
	uint8_t *dst = t == T_READ ? x->a : x->b;
	uint8_t *land = t == T_UD ? dst + GRH : dst;
	enum ibv_wc_status s;
	int side, n = 1;
	long at;

	fill(src, len, i);
	if (t == T_SEND || t == T_SRQ || t == T_UD) {
		if (post_recv(p, dst, t == T_UD ? len + GRH : len, x->mb->lkey))
			return failed_wc("post_recv", i, IBV_WC_GENERAL_ERR, 2);
		n = 2;
	}
	switch (t) {
	case T_READ:
		if (post_op(p, IBV_WR_RDMA_READ, dst, len, x->ma->lkey,
			    (uintptr_t)src, x->mb->rkey, 0, 0))
			return failed_wc("post", i, IBV_WC_GENERAL_ERR, 1);
		break;
	case T_WRITE:
	case T_REMAP:
	case T_FORK:
		if (post_op(p, IBV_WR_RDMA_WRITE, src, len, x->ma->lkey,
			    (uintptr_t)dst, x->mb->rkey, 0, 0))
			return failed_wc("post", i, IBV_WC_GENERAL_ERR, 1);
		break;
	default:
		if (post_op(p, IBV_WR_SEND, src, len, x->ma->lkey, 0, 0, 0, 0))
			return failed_wc("post", i, IBV_WC_GENERAL_ERR, 1);
	}
	s = wait_n(n, &side);
	if (s != IBV_WC_SUCCESS)
		return failed_wc("message", i, s, side);
	at = check(land, len, i);
	if (at >= 0)
		return failed_data("message", i, at);
	return 0;
}

/* A child that holds a copy-on-write copy of x->b (message i - 1's bytes)
 * until the parent writes a byte into *go, then checks its copy and exits
 * 0 if it kept the old bytes. */
static pid_t fork_holder(struct bufs *x, uint32_t i, int *go)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(2);
		_exit(i > 0 && check(x->b, msg_len(i - 1), i - 1) >= 0 ? 1 : 0);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static void case_traffic(const char *name, enum traffic t, int implicit)
{
	struct pair p;
	struct bufs x;
	int r, go = -1;
	pid_t child = -1;

	why[0] = 0;
	r = pair_make(&p, t == T_UD ? IBV_QPT_UD : IBV_QPT_RC, t == T_SRQ);
	if (r) {
		result(name, "setup %s", errname(r));
		return;
	}
	if (bufs_for(&x, implicit, name)) {
		pair_free(&p);
		return;
	}
	for (uint32_t i = 0; i < (uint32_t)iters && !why[0]; i++) {
		if (disturb(t, &x)) {
			snprintf(why, sizeof(why), "FAIL remap: %s", strerror(errno));
			break;
		}
		if (t == T_FORK) {
			child = fork_holder(&x, i, &go);
			if (child < 0) {
				snprintf(why, sizeof(why), "FAIL fork: %s", strerror(errno));
				break;
			}
		}
		one_message(&p, &x, t, i);
		if (child > 0) {
			int st = 0;

			if (write(go, "x", 1) != 1 || waitpid(child, &st, 0) != child ||
			    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				if (!why[0])
					snprintf(why, sizeof(why),
						 "FAIL fork %u: the child's copy changed", i);
			}
			close(go);
			child = -1;
		}
	}
	result(name, "%s", why[0] ? why : "ok");
	bufs_free(&x);
	pair_free(&p);
}

/* READ of memory the responder never touched: zeros. */
static void case_read_untouched(void)
{
	struct pair p;
	struct bufs x;
	enum ibv_wc_status s;
	int side, r;

	r = pair_make(&p, IBV_QPT_RC, 0);
	if (!r)
		r = bufs_make(&x);
	if (r) {
		result("rc_read_untouched", "setup %s", errname(r));
		return;
	}
	memset(x.a, 0xee, BUF);
	if (post_op(&p, IBV_WR_RDMA_READ, x.a, BUF, x.ma->lkey, (uintptr_t)x.b,
		    x.mb->rkey, 0, 0)) {
		result("rc_read_untouched", "post %s", errname(errno));
	} else if ((s = wait_n(1, &side)) != IBV_WC_SUCCESS) {
		result("rc_read_untouched", "%s", ibv_wc_status_str(s));
	} else {
		size_t o = 0;

		while (o < BUF && !x.a[o])
			o++;
		if (o < BUF)
			result("rc_read_untouched", "FAIL byte %zu is not zero", o);
		else
			result("rc_read_untouched", "ok");
	}
	bufs_free(&x);
	pair_free(&p);
}

static void case_atomic(const char *name, int implicit)
{
	struct pair p;
	struct bufs x;
	enum ibv_wc_status s;
	int side, r;

	why[0] = 0;
	r = pair_make(&p, IBV_QPT_RC, 0);
	if (r) {
		result(name, "setup %s", errname(r));
		return;
	}
	if (bufs_for(&x, implicit, name)) {
		pair_free(&p);
		return;
	}
	for (uint32_t i = 0; i < (uint32_t)iters && !why[0]; i++) {
		volatile uint64_t *word = (uint64_t *)(x.b + 4096 * (i % 8) + 8 * i);
		uint64_t *res = (uint64_t *)(x.a + 4096 * (i % 5));
		uint64_t v = 1000 + i;

		drop_pages(x.a, BUF);
		drop_pages(x.b, BUF);
		*word = v;
		if (post_op(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, res, 8, x.ma->lkey,
			    (uintptr_t)word, x.mb->rkey, 5, 0)) {
			failed_wc("post", i, IBV_WC_GENERAL_ERR, 1);
			break;
		}
		s = wait_n(1, &side);
		if (s != IBV_WC_SUCCESS) {
			failed_wc("fetch-and-add", i, s, side);
			break;
		}
		if (*res != v || *word != v + 5) {
			snprintf(why, sizeof(why), "FAIL fetch-and-add %u: got %" PRIu64
				 ", word %" PRIu64, i, *res, *word);
			break;
		}
		drop_pages(x.a, BUF);
		/* The word is still there: only the result buffer went. */
		if (post_op(&p, IBV_WR_ATOMIC_CMP_AND_SWP, res, 8, x.ma->lkey,
			    (uintptr_t)word, x.mb->rkey, v + 5, 7)) {
			failed_wc("post", i, IBV_WC_GENERAL_ERR, 1);
			break;
		}
		s = wait_n(1, &side);
		if (s != IBV_WC_SUCCESS) {
			failed_wc("compare-and-swap", i, s, side);
			break;
		}
		if (*res != v + 5 || *word != 7)
			snprintf(why, sizeof(why), "FAIL compare-and-swap %u: got %" PRIu64
				 ", word %" PRIu64, i, *res, *word);
	}
	result(name, "%s", why[0] ? why : "ok");
	bufs_free(&x);
	pair_free(&p);
}

/* ---- advise_mr through the ioctl ---------------------------------------- */

static int advise(uint32_t advice, uint32_t flags, struct ib_uverbs_sge *sge, uint32_t n)
{
	/* The header and its four attributes, as libibverbs lays them out. */
	uint64_t storage[(sizeof(struct ib_uverbs_ioctl_hdr) +
			  4 * sizeof(struct ib_uverbs_attr)) / sizeof(uint64_t)];
	struct ib_uverbs_ioctl_hdr *hdr = (void *)storage;
	struct ib_uverbs_attr *a = hdr->attrs;
	uint32_t f = flags;

	memset(storage, 0, sizeof(storage));
	hdr->length = sizeof(storage);
	hdr->object_id = UVERBS_OBJECT_MR;
	hdr->method_id = UVERBS_METHOD_ADVISE_MR;
	hdr->num_attrs = 4;
	hdr->driver_id = RDMA_DRIVER_RXE;
	for (int i = 0; i < 4; i++)
		a[i].flags = UVERBS_ATTR_F_MANDATORY;
	a[0].attr_id = UVERBS_ATTR_ADVISE_MR_PD_HANDLE;
	a[0].data = pd->handle;
	a[1].attr_id = UVERBS_ATTR_ADVISE_MR_ADVICE;
	a[1].len = sizeof(uint64_t);
	a[1].data = advice;
	a[2].attr_id = UVERBS_ATTR_ADVISE_MR_FLAGS;
	a[2].len = sizeof(f);
	memcpy(&a[2].data, &f, sizeof(f));
	a[3].attr_id = UVERBS_ATTR_ADVISE_MR_SGE_LIST;
	a[3].len = n * sizeof(*sge);
	a[3].data = (uintptr_t)sge;
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, hdr) ? errno : 0;
}

static void case_prefetch(void)
{
	static const struct { const char *name; uint32_t advice, flags; } kinds[] = {
		{ "prefetch_read", IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH,
		  IB_UVERBS_ADVISE_MR_FLAG_FLUSH },
		{ "prefetch_write", IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		  IB_UVERBS_ADVISE_MR_FLAG_FLUSH },
		{ "prefetch_no_fault", IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
		  IB_UVERBS_ADVISE_MR_FLAG_FLUSH },
		{ "prefetch_read_async", IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, 0 },
		{ "prefetch_write_async", IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0 },
	};
	struct ib_uverbs_sge sge[2];
	struct pair p;
	struct bufs x;
	uint8_t *hole;
	int r;

	r = pair_make(&p, IBV_QPT_RC, 0);
	if (!r)
		r = bufs_make(&x);
	if (r) {
		result("prefetch", "setup %s", errname(r));
		return;
	}
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		drop_pages(x.a, BUF);
		drop_pages(x.b, BUF);
		sge[0] = (struct ib_uverbs_sge){ (uintptr_t)x.a, BUF, x.ma->lkey };
		sge[1] = (struct ib_uverbs_sge){ (uintptr_t)x.b + 4096, 8192, x.mb->lkey };
		r = advise(kinds[k].advice, kinds[k].flags, sge, 2);
		if (r) {
			result(kinds[k].name, "%s", errname(r));
			continue;
		}
		/* Traffic after the advice: data still checked. */
		why[0] = 0;
		fill(x.a, 65536, (uint32_t)k);
		if (!post_op(&p, IBV_WR_RDMA_WRITE, x.a, 65536, x.ma->lkey,
			     (uintptr_t)x.b, x.mb->rkey, 0, 0)) {
			int side;
			enum ibv_wc_status s = wait_n(1, &side);

			if (s != IBV_WC_SUCCESS)
				failed_wc("write", (uint32_t)k, s, side);
			else if (check(x.b, 65536, (uint32_t)k) >= 0)
				failed_data("write", (uint32_t)k, check(x.b, 65536, (uint32_t)k));
		} else {
			snprintf(why, sizeof(why), "post %s", errname(errno));
		}
		result(kinds[k].name, "%s", why[0] ? why : "ok");
	}
	sge[0] = (struct ib_uverbs_sge){ (uintptr_t)x.a, 4096, x.ma->lkey ^ 0x80 };
	result("prefetch_bad_lkey", "%s", errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH,
				IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sge, 1)));
	sge[0] = (struct ib_uverbs_sge){ (uintptr_t)x.a + BUF - 10, 4096, x.ma->lkey };
	result("prefetch_out_of_range", "%s", errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH,
				IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sge, 1)));
	/* A hole in the middle of the region: the memory is gone. */
	hole = x.b + 16 * 4096;
	munmap(hole, 4 * 4096);
	sge[0] = (struct ib_uverbs_sge){ (uintptr_t)hole, 4096, x.mb->lkey };
	result("prefetch_unmapped", "%s", errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sge, 1)));
	result("prefetch_unmapped_async", "%s",
	       errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, sge, 1)));
	mmap(hole, 4 * 4096, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	bufs_free(&x);
	pair_free(&p);
}

/* A write prefetch of a region registered without a right that writes:
 * rdma_rxe looks the key up asking for local write (EINVAL), rrxe checks
 * the region (EPERM, rxe's answer for its read-only umems). */
static void case_prefetch_ro(void)
{
	uint8_t *m = map_anon(BUF);
	struct ibv_mr *mr = m ? odp_mr(m, BUF, IBV_ACCESS_REMOTE_READ) : NULL;
	struct ib_uverbs_sge sge;

	if (!mr) {
		result("prefetch_ro", "setup %s", errname(errno));
	} else {
		sge = (struct ib_uverbs_sge){ (uintptr_t)m, 4096, mr->lkey };
		result("prefetch_ro", "%s", errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					IB_UVERBS_ADVISE_MR_FLAG_FLUSH, &sge, 1)));
		ibv_dereg_mr(mr);
	}
	if (m)
		munmap(m, BUF);
}

/* advise_mr's SGE names the region as a work request's does, in its iova
 * space (mlx5's reading; rrxe's), not by the process's address (rdma_rxe's
 * reading, which only differs where iova != address). */
static void case_prefetch_iova(void)
{
	uint8_t *m = map_anon(BUF);
	/* Page-aligned like m, and outside [m, m + BUF). */
	uint64_t iova = m ? (uintptr_t)m + 16ull * BUF : 0;
	struct ibv_mr *mr = m ? ibv_reg_mr_iova(pd, m, BUF, iova,
						ALL_ACCESS | IBV_ACCESS_ON_DEMAND) : NULL;
	struct ib_uverbs_sge sge;
	struct pair p;
	struct bufs x;
	int ri, rv, side;

	if (!mr) {
		result("prefetch_iova", "setup %s", errname(errno));
		goto out;
	}
	sge = (struct ib_uverbs_sge){ iova + 4096, 3 * 4096, mr->lkey };
	ri = advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		    IB_UVERBS_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	sge = (struct ib_uverbs_sge){ (uintptr_t)m + 4096, 3 * 4096, mr->lkey };
	rv = advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		    IB_UVERBS_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	if (ri || rv != EFAULT) {
		result("prefetch_iova", "iova %s, address %s", errname(ri), errname(rv));
		goto out;
	}
	/* The device finds the region by its iova, the bytes at m. */
	why[0] = 0;
	if (pair_make(&p, IBV_QPT_RC, 0)) {
		result("prefetch_iova", "setup pair");
		goto out;
	}
	if (bufs_make(&x)) {
		result("prefetch_iova", "setup bufs");
		pair_free(&p);
		goto out;
	}
	fill(x.a, 65536, 9);
	if (!post_op(&p, IBV_WR_RDMA_WRITE, x.a, 65536, x.ma->lkey, iova + 4096,
		     mr->rkey, 0, 0)) {
		enum ibv_wc_status st = wait_n(1, &side);

		if (st != IBV_WC_SUCCESS)
			failed_wc("write", 0, st, side);
		else if (check(m + 4096, 65536, 9) >= 0)
			failed_data("write", 0, check(m + 4096, 65536, 9));
	} else {
		snprintf(why, sizeof(why), "post %s", errname(errno));
	}
	result("prefetch_iova", "%s", why[0] ? why : "ok");
	bufs_free(&x);
	pair_free(&p);
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (m)
		munmap(m, BUF);
}

/* A checked WRITE of len bytes from x->a to x->b (message i): into why. */
static void checked_write(struct pair *p, struct bufs *x, uint32_t len, uint32_t i)
{
	enum ibv_wc_status st;
	int side;

	fill(x->a, len, i);
	if (post_op(p, IBV_WR_RDMA_WRITE, x->a, len, x->ma->lkey, (uintptr_t)x->b,
		    x->mb->rkey, 0, 0)) {
		snprintf(why, sizeof(why), "post %s", errname(errno));
		return;
	}
	st = wait_n(1, &side);
	if (st != IBV_WC_SUCCESS)
		failed_wc("write", i, st, side);
	else if (check(x->b, len, i) >= 0)
		failed_data("write", i, check(x->b, len, i));
}

/* advise_mr on an implicit region: both buffers (each across a 1 GiB
 * boundary), each advice with the flush flag, then a WRITE of a whole
 * buffer, checked; then memory the process does not have. */
static void case_implicit_prefetch(void)
{
	static const uint32_t advices[] = {
		IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
		IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH,
		IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
	};
	struct ib_uverbs_sge sge[2];
	struct pair p;
	struct bufs x;
	uint8_t *hole;
	int r;

	if (pair_make(&p, IBV_QPT_RC, 0)) {
		result("implicit_prefetch", "setup pair");
		return;
	}
	r = bufs_make_implicit(&x);
	if (r) {
		/* Every case of the group says why (rdma_rxe: EOPNOTSUPP). */
		const char *e = r > 0 ? errname(r) : "register no memory";

		result("implicit_prefetch", "%s", e);
		result("implicit_prefetch_unmapped", "%s", e);
		result("implicit_prefetch_unmapped_async", "%s", e);
		bufs_free(&x);
		pair_free(&p);
		return;
	}
	why[0] = 0;
	for (uint32_t k = 0; k < sizeof(advices) / sizeof(advices[0]) && !why[0]; k++) {
		drop_pages(x.a, BUF);
		drop_pages(x.b, BUF);
		sge[0] = (struct ib_uverbs_sge){ (uintptr_t)x.a, BUF, x.ma->lkey };
		sge[1] = (struct ib_uverbs_sge){ (uintptr_t)x.b, BUF, x.ma->lkey };
		r = advise(advices[k], IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sge, 2);
		if (r)
			snprintf(why, sizeof(why), "advice %u: %s", advices[k], errname(r));
		else
			checked_write(&p, &x, BUF, k);
	}
	result("implicit_prefetch", "%s", why[0] ? why : "ok");
	/* The second half of b goes: nothing of the process is there. */
	hole = x.b + BUF / 2;
	munmap(hole, BUF / 2);
	sge[0] = (struct ib_uverbs_sge){ (uintptr_t)hole, 4096, x.ma->lkey };
	result("implicit_prefetch_unmapped", "%s",
	       errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			      IB_UVERBS_ADVISE_MR_FLAG_FLUSH, sge, 1)));
	result("implicit_prefetch_unmapped_async", "%s",
	       errname(advise(IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, sge, 1)));
	map_at(hole, BUF / 2);
	bufs_free(&x);
	pair_free(&p);
}

enum ihostile { I_WRITE, I_READ, I_AGAIN, I_SEND };

/* Memory of an implicit region unmapped under the device: the requester's
 * status, or what went wrong before. */
static void case_implicit_hostile(const char *name, enum ihostile h)
{
	struct ibv_wc wc[1];
	struct pair p;
	struct bufs x;
	int r;

	if (pair_make(&p, IBV_QPT_RC, 0)) {
		result(name, "setup pair");
		return;
	}
	if (bufs_for(&x, 1, name)) {
		pair_free(&p);
		return;
	}
	why[0] = 0;
	if (h == I_AGAIN) {
		/* Reached once: the driver's child of b is made. */
		checked_write(&p, &x, 65536, 0);
		if (why[0]) {
			result(name, "warm-up %s", why);
			goto out;
		}
	}
	fill(x.a, 65536, 1);
	if (h == I_SEND) {
		munmap(x.a, BUF);
		r = post_recv(&p, x.b, 65536, x.mb->lkey);
		if (!r)
			r = post_op(&p, IBV_WR_SEND, x.a, 65536, x.ma->lkey, 0, 0, 0, 0);
		x.a = NULL;
	} else {
		munmap(x.b, BUF);
		r = post_op(&p, h == I_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, x.a,
			    65536, x.ma->lkey, (uintptr_t)x.b, x.mb->rkey, 0, 0);
		x.b = NULL;
	}
	if (r)
		result(name, "post %s", errname(r));
	else if (poll_n(wc, 1) < 1)
		result(name, "FAIL timeout");
	else
		result(name, "%s", ibv_wc_status_str(wc[0].status));
out:
	bufs_free(&x);
	pair_free(&p);
}

/* ---- hostile: memory unmapped under the device ------------------------- */

enum hostile { H_WRITE, H_READ, H_SEND, H_RECV, H_MIDWAY };

static void case_hostile(const char *name, enum hostile h)
{
	struct ibv_wc wc[2];
	struct pair p;
	struct bufs x;
	uint8_t *big = NULL;
	struct ibv_mr *mbig = NULL;
	int r, n = 1, got;

	r = pair_make(&p, IBV_QPT_RC, 0);
	if (!r)
		r = bufs_make(&x);
	if (r) {
		result(name, "setup %s", errname(r));
		return;
	}
	fill(x.a, 65536, 1);
	switch (h) {
	case H_WRITE:
	case H_READ:
		/* The responder's memory goes, its registration stays. */
		munmap(x.b, BUF);
		r = post_op(&p, h == H_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
			    x.a, 65536, x.ma->lkey, (uintptr_t)x.b, x.mb->rkey, 0, 0);
		x.b = NULL;
		break;
	case H_SEND:
		/* The requester's own memory goes. */
		munmap(x.a, BUF);
		x.a = NULL;
		r = post_recv(&p, x.b, 65536, x.mb->lkey);
		if (!r)
			r = post_op(&p, IBV_WR_SEND, (void *)(uintptr_t)x.ma->addr, 65536,
				    x.ma->lkey, 0, 0, 0, 0);
		n = 1;
		break;
	case H_RECV:
		r = post_recv(&p, x.b, 65536, x.mb->lkey);
		munmap(x.b, BUF);
		x.b = NULL;
		if (!r)
			r = post_op(&p, IBV_WR_SEND, x.a, 65536, x.ma->lkey, 0, 0, 0, 0);
		n = 2;
		break;
	case H_MIDWAY:
		big = map_anon(BIG);
		mbig = big ? odp_mr(big, BIG, ALL_ACCESS) : NULL;
		if (!mbig) {
			result(name, "setup %s", errname(errno));
			goto out;
		}
		/* From the requester's (present, prefetched by touching) buffer,
		 * 4 MiB in one WRITE; the target goes as soon as it is posted. */
		for (uint32_t off = 0; off < BIG; off += BUF)
			r = r ? r : post_op(&p, IBV_WR_RDMA_WRITE, x.a, BUF, x.ma->lkey,
					    (uintptr_t)big + off, mbig->rkey, 0, 0);
		munmap(big, BIG);
		big = NULL;
		n = BIG / BUF;
		break;
	}
	if (r) {
		result(name, "post %s", errname(r));
		goto out;
	}
	if (h == H_MIDWAY) {
		/* Each WRITE: done, refused, or flushed behind the refused one. */
		struct ibv_wc w[BIG / BUF];
		int ok = 0, bad = 0;

		got = poll_n(w, n);
		for (int i = 0; i < got; i++) {
			if (w[i].status == IBV_WC_SUCCESS)
				ok++;
			else if (w[i].status == IBV_WC_REM_ACCESS_ERR ||
				 w[i].status == IBV_WC_WR_FLUSH_ERR)
				bad++;
		}
		printf("info %s: %d of %d writes done, %d refused or flushed\n",
		       name, ok, n, bad);
		if (got < n)
			result(name, "FAIL timeout");
		else if (ok + bad != n)
			result(name, "FAIL another status");
		else
			result(name, "ok");
		goto out;
	}
	got = poll_n(wc, n);
	if (got < n) {
		result(name, "FAIL timeout");
	} else if (n == 2) {
		/* The requester's status, then the responder's. */
		int ai = wc[0].wr_id == 1 ? 0 : 1;

		result(name, "%s / %s", ibv_wc_status_str(wc[ai].status),
		       ibv_wc_status_str(wc[1 - ai].status));
	} else {
		result(name, "%s", ibv_wc_status_str(wc[0].status));
	}
out:
	if (mbig)
		ibv_dereg_mr(mbig);
	if (big)
		munmap(big, BIG);
	bufs_free(&x);
	pair_free(&p);
}

/* ---- memory the kernel cannot read -------------------------------------- */

#ifndef __NR_memfd_secret
#define __NR_memfd_secret 447	/* x86_64, arm64, riscv */
#endif

/* One request against SECRET_LEN bytes of memfd_secret memory on a fresh
 * pair (a failure takes the QPs to ERR): "w" an RDMA WRITE into it, "r" an
 * RDMA READ of it, "s" a SEND from it. The requester's status. */
#define SECRET_LEN (2 * 4096u)

static const char *secret_op(char op, uint8_t *sec, struct ibv_mr *ms)
{
	struct ibv_wc wc[1];
	struct pair p;
	struct bufs x;
	const char *res;
	int r, n = 1;

	r = pair_make(&p, IBV_QPT_RC, 0);
	if (!r)
		r = bufs_make(&x);
	if (r)
		return "setup";
	fill(x.a, SECRET_LEN, 7);
	switch (op) {
	case 'w':
		r = post_op(&p, IBV_WR_RDMA_WRITE, x.a, SECRET_LEN, x.ma->lkey,
			    (uintptr_t)sec, ms->rkey, 0, 0);
		break;
	case 'r':
		r = post_op(&p, IBV_WR_RDMA_READ, x.a, SECRET_LEN, x.ma->lkey,
			    (uintptr_t)sec, ms->rkey, 0, 0);
		break;
	default:
		r = post_recv(&p, x.b, SECRET_LEN, x.mb->lkey);
		/* Refused before it leaves: the receive stays posted. */
		if (!r)
			r = post_op(&p, IBV_WR_SEND, sec, SECRET_LEN, ms->lkey, 0, 0, 0, 0);
		break;
	}
	if (r)
		res = "post failed";
	else if (poll_n(wc, n) < n)
		res = "timeout";
	else
		res = ibv_wc_status_str(wc[0].status);
	bufs_free(&x);
	pair_free(&p);
	return res;
}

static void case_secret(void)
{
	struct ibv_mr *ms;
	uint8_t *sec;
	int fd = (int)syscall(__NR_memfd_secret, 0);

	if (fd < 0) {
		/* No secretmem here (disabled, or the arch cannot). */
		result("secret", "skip %s", errno == ENOSYS ? "ENOSYS" : errname(errno));
		return;
	}
	if (ftruncate(fd, SECRET_LEN)) {
		result("secret", "setup ftruncate %s", errname(errno));
		close(fd);
		return;
	}
	sec = mmap(NULL, SECRET_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sec == MAP_FAILED) {
		result("secret", "skip mmap %s", errname(errno));
		return;
	}
	/* Present before the registration: its snapshot sees the pages. */
	memset(sec, 0x5a, SECRET_LEN);
	ms = odp_mr(sec, SECRET_LEN, ALL_ACCESS);
	if (!ms) {
		result("secret", "reg %s", errname(errno));
	} else {
		const char *w = secret_op('w', sec, ms);
		const char *r = secret_op('r', sec, ms);
		const char *s = secret_op('s', sec, ms);

		result("secret", "write %s, read %s, send %s", w, r, s);
		ibv_dereg_mr(ms);
	}
	munmap(sec, SECRET_LEN);
}

static int wanted(int argc, char **argv, const char *name)
{
	if (optind >= argc)
		return 1;
	for (int i = optind; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *devname = NULL;
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int opt, n;

	while ((opt = getopt(argc, argv, "d:g:n:")) != -1) {
		switch (opt) {
		case 'd': devname = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GIDX [-n ITERS] [CASE...]\n",
				argv[0]);
			return 2;
		}
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (devname && !strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	if (!ctx || gidx < 0 || ibv_query_gid(ctx, 1, gidx, &gid) ||
	    ibv_query_port(ctx, 1, &pa)) {
		fprintf(stderr, "rrxe_odp: cannot use %s GID %d\n",
			devname ? devname : "(no -d)", gidx);
		return 1;
	}
	mtu = pa.active_mtu;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "rrxe_odp: no PD or CQ\n");
		return 1;
	}

	if (wanted(argc, argv, "caps"))
		case_caps();
	if (wanted(argc, argv, "implicit_caps"))
		case_implicit_caps();
	if (wanted(argc, argv, "implicit"))
		case_reg("implicit", NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	if (wanted(argc, argv, "implicit_iova"))
		case_implicit_iova();
	if (wanted(argc, argv, "hugetlb")) {
		uint8_t *m = map_anon(BUF);

		case_reg("hugetlb", m, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND |
			 IBV_ACCESS_HUGETLB);
		if (m)
			munmap(m, BUF);
	}
	if (wanted(argc, argv, "rc_send"))
		case_traffic("rc_send", T_SEND, 0);
	if (wanted(argc, argv, "rc_write"))
		case_traffic("rc_write", T_WRITE, 0);
	if (wanted(argc, argv, "rc_read")) {
		case_traffic("rc_read", T_READ, 0);
		case_read_untouched();
	}
	if (wanted(argc, argv, "rc_atomic"))
		case_atomic("rc_atomic", 0);
	if (wanted(argc, argv, "rc_srq"))
		case_traffic("rc_srq", T_SRQ, 0);
	if (wanted(argc, argv, "rc_remap"))
		case_traffic("rc_remap", T_REMAP, 0);
	if (wanted(argc, argv, "rc_fork"))
		case_traffic("rc_fork", T_FORK, 0);
	if (wanted(argc, argv, "ud_send"))
		case_traffic("ud_send", T_UD, 0);
	if (wanted(argc, argv, "prefetch"))
		case_prefetch();
	if (wanted(argc, argv, "prefetch_ro"))
		case_prefetch_ro();
	if (wanted(argc, argv, "prefetch_iova"))
		case_prefetch_iova();
	if (wanted(argc, argv, "unmapped_write"))
		case_hostile("unmapped_write", H_WRITE);
	if (wanted(argc, argv, "unmapped_read"))
		case_hostile("unmapped_read", H_READ);
	if (wanted(argc, argv, "unmapped_send"))
		case_hostile("unmapped_send", H_SEND);
	if (wanted(argc, argv, "unmapped_recv"))
		case_hostile("unmapped_recv", H_RECV);
	if (wanted(argc, argv, "unmap_midway"))
		case_hostile("unmap_midway", H_MIDWAY);
	if (wanted(argc, argv, "implicit_rc_send"))
		case_traffic("implicit_rc_send", T_SEND, 1);
	if (wanted(argc, argv, "implicit_rc_write"))
		case_traffic("implicit_rc_write", T_WRITE, 1);
	if (wanted(argc, argv, "implicit_rc_read"))
		case_traffic("implicit_rc_read", T_READ, 1);
	if (wanted(argc, argv, "implicit_rc_atomic"))
		case_atomic("implicit_rc_atomic", 1);
	if (wanted(argc, argv, "implicit_prefetch"))
		case_implicit_prefetch();
	if (wanted(argc, argv, "implicit_unmapped_write"))
		case_implicit_hostile("implicit_unmapped_write", I_WRITE);
	if (wanted(argc, argv, "implicit_unmapped_read"))
		case_implicit_hostile("implicit_unmapped_read", I_READ);
	if (wanted(argc, argv, "implicit_unmapped_again"))
		case_implicit_hostile("implicit_unmapped_again", I_AGAIN);
	if (wanted(argc, argv, "implicit_unmapped_send"))
		case_implicit_hostile("implicit_unmapped_send", I_SEND);
	/* Only when named (see the top). */
	if (optind < argc && wanted(argc, argv, "secret"))
		case_secret();

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
