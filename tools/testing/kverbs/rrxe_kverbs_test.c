// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel consumer of the verbs control path, for rrxe's VM tests: loaded
 * with dev=NAME, it drives the device through the kernel API that ULPs use
 * (PD, CQ polled directly, RC/UD QPs and their states, posting, flushing,
 * fast-registration MRs, AHs, an SRQ) and logs one "kverbs: ok - ..." or
 * "kverbs: not ok - ..." line per check. The test script loads it on
 * rdma_rxe and on rrxe and compares the lines.
 *
 * Checks that depend on whether the device moves data (posted sends on a
 * QP connected to itself complete or stay queued) accept both outcomes and
 * log what happened.
 *
 * test_frwr() moves data: two RC QPs on the device, connected to each other
 * through the device's own RoCEv2 IPv4 GID, do what NVMe-oF/RDMA and
 * NFS/RDMA do with fast registration: REG_MR work requests, RDMA WRITE and
 * READ through the registered rkey (bytes checked), SEND_WITH_INV
 * invalidating the peer's rkey, a WRITE with that rkey refused, LOCAL_INV
 * and registration again under a new key (ib_update_fast_reg_key).
 *
 * test_inv_other_pd() and test_other_pd() log the outcome of security
 * cases across two PDs (SEND_WITH_INV and LOCAL_INV of another PD's fast
 * MR, a UD send through another PD's AH) as "kverbs: sec - NAME OUTCOME"
 * lines, which may differ between drivers.
 */
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <linux/etherdevice.h>
#include <net/ipv6.h>

static char *dev = "rrxe0";
module_param(dev, charp, 0444);

static int fails;

#define CHECK(cond, fmt, ...)                                              \
	do {                                                               \
		bool __ok = (cond);                                        \
		pr_info("kverbs: %s - " fmt "\n", __ok ? "ok" : "not ok",  \
			##__VA_ARGS__);                                    \
		if (!__ok)                                                 \
			fails++;                                           \
	} while (0)

struct env {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	union ib_gid gid;
	int gid_index;
	u8 mac[ETH_ALEN];	/* the GID's netdev's */
	void *buf;
};

/* Polls until @want completions arrived or about @ms milliseconds passed. */
static int poll_n_for(struct ib_cq *cq, struct ib_wc *wc, int want, int ms)
{
	int got = 0, tries;

	for (tries = 0; tries < ms / 10 && got < want; tries++) {
		int n = ib_poll_cq(cq, want - got, wc + got);

		if (n < 0)
			return n;
		got += n;
		if (got < want)
			msleep(10);
	}
	return got;
}

static int poll_n(struct ib_cq *cq, struct ib_wc *wc, int want)
{
	return poll_n_for(cq, wc, want, 1000);
}

static void fill_av(struct env *e, struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_ah_flags(ah, IB_AH_GRH);
	rdma_ah_set_grh(ah, &e->gid, 0, e->gid_index, 64, 0);
	/*
	 * ib_modify_qp leaves the resolution of the destination MAC to kernel
	 * callers (rdma_cm does it): our own. rdma_rxe short-cuts packets to
	 * its own MAC; with any other it sends them out on the wire.
	 */
	memcpy(ah->roce.dmac, e->mac, ETH_ALEN);
}

static int to_init_access(struct ib_qp *qp, bool rc, int access)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1, .pkey_index = 0,
		.qp_access_flags = access, .qkey = 0x11111111,
	};

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PORT | IB_QP_PKEY_INDEX |
			    (rc ? IB_QP_ACCESS_FLAGS : IB_QP_QKEY));
}

static int to_init(struct ib_qp *qp, bool rc)
{
	return to_init_access(qp, rc, IB_ACCESS_LOCAL_WRITE);
}

/* RESET to RTS, connected to @dest (on the same device), with @access. */
static int rc_connect(struct env *e, struct ib_qp *qp, u32 dest, int access)
{
	struct ib_qp_attr a = {};
	int ret = to_init_access(qp, true, access);

	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	fill_av(e, &a.ah_attr);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* RESET to RTS, connected to itself. */
static int rc_to_rts(struct env *e, struct ib_qp *qp)
{
	return rc_connect(e, qp, qp->qp_num, IB_ACCESS_LOCAL_WRITE);
}

static struct ib_qp *make_qp_on(struct env *e, enum ib_qp_type type,
				struct ib_srq *srq, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq, .srq = srq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 2, .max_recv_sge = srq ? 0 : 2,
			 .max_inline_data = 64 },
	};

	return ib_create_qp(e->pd, &init);
}

static struct ib_qp *make_qp(struct env *e, enum ib_qp_type type,
			     struct ib_srq *srq)
{
	return make_qp_on(e, type, srq, e->cq);
}

static struct ib_recv_wr *recv_wr(struct env *e, struct ib_recv_wr *wr,
				  struct ib_sge *sge, u64 id)
{
	sge->addr = (u64)(uintptr_t)e->buf;
	sge->length = 64;
	sge->lkey = e->pd->local_dma_lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	return wr;
}

/* Receives posted in INIT are flushed in order when the QP enters ERR. */
static void test_flush(struct env *e)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	const struct ib_recv_wr *bad = NULL;
	const struct ib_send_wr *sbad = NULL;
	struct ib_recv_wr wr[3];
	struct ib_sge sge[3];
	struct ib_send_wr swr = { .opcode = IB_WR_SEND };
	struct ib_wc wc[4];
	struct ib_qp *qp;
	int i, n, ret;

	qp = make_qp(e, IB_QPT_RC, NULL);
	CHECK(!IS_ERR(qp), "create RC QP (%ld)", (long)PTR_ERR_OR_ZERO(qp));
	if (IS_ERR(qp))
		return;
	ret = ib_post_recv(qp, recv_wr(e, &wr[0], &sge[0], 1), &bad);
	CHECK(ret == -EINVAL, "post_recv in RESET refused (%d)", ret);
	CHECK(!to_init(qp, true), "RESET->INIT");
	for (i = 0; i < 3; i++) {
		recv_wr(e, &wr[i], &sge[i], 10 + i);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	ret = ib_post_recv(qp, wr, &bad);
	CHECK(ret == 0, "post_recv chain of 3 (%d)", ret);
	swr.wr_id = 99;
	ret = ib_post_send(qp, &swr, &sbad);
	CHECK(ret == -EINVAL && sbad == &swr, "post_send in INIT refused (%d)", ret);
	CHECK(ib_poll_cq(e->cq, 4, wc) == 0, "nothing completed before ERR");
	CHECK(!ib_modify_qp(qp, &err, IB_QP_STATE), "INIT->ERR");
	n = poll_n(e->cq, wc, 3);
	CHECK(n == 3, "3 completions after ERR (%d)", n);
	for (i = 0; i < n && i < 3; i++)
		CHECK(wc[i].wr_id == 10 + i && wc[i].status == IB_WC_WR_FLUSH_ERR &&
		      wc[i].qp == qp, "completion %d: wr_id %llu status %d", i,
		      wc[i].wr_id, wc[i].status);
	/* In ERR a receive is flushed right away. */
	ret = ib_post_recv(qp, recv_wr(e, &wr[0], &sge[0], 20), &bad);
	n = poll_n(e->cq, wc, 1);
	CHECK(ret == 0 && n == 1 && wc[0].wr_id == 20 &&
	      wc[0].status == IB_WC_WR_FLUSH_ERR, "post_recv in ERR is flushed");
	ib_destroy_qp(qp);
}

struct flush_ctx {
	struct env *e;
	struct ib_qp *qp;	/* set while the handler may repost */
	int calls, polled, repost_ret;
	bool reposted;
};

/*
 * A completion handler as some kernel consumers write them: it polls the CQ,
 * re-arms it and posts again from inside the handler.
 */
static void flush_handler(struct ib_cq *cq, void *arg)
{
	struct flush_ctx *c = arg;
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr;
	struct ib_sge sge;
	struct ib_wc wc[8];
	int n;

	c->calls++;
	while ((n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc)) > 0)
		c->polled += n;
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	if (c->qp && !c->reposted) {
		c->reposted = true;
		c->repost_ret = ib_post_recv(c->qp, recv_wr(c->e, &wr, &sge, 30), &bad);
	}
}

/*
 * The flush on ERR calls the handler with none of the QP's locks held: a
 * handler that polls and reposts (the repost is flushed at once, and calls
 * the handler again) must not deadlock.
 */
static void test_flush_handler(struct env *e)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	const struct ib_recv_wr *bad = NULL;
	struct flush_ctx c = { .e = e };
	struct ib_recv_wr wr[3];
	struct ib_sge sge[3];
	struct ib_cq *cq;
	struct ib_qp *qp;
	int i, ret;

	if (e->ibdev->ops.owner && !strcmp(e->ibdev->ops.owner->name, "rdma_rxe")) {
		pr_info("kverbs: # flush handler that polls: not run on rdma_rxe, which calls handlers under its CQ lock (polling from one deadlocks)\n");
		return;
	}
	cq = ib_create_cq(e->ibdev, flush_handler, NULL, &c, &ca);
	CHECK(!IS_ERR(cq), "flush handler: create a CQ with a handler (%ld)",
	      (long)PTR_ERR_OR_ZERO(cq));
	if (IS_ERR(cq))
		return;
	qp = make_qp_on(e, IB_QPT_RC, NULL, cq);
	CHECK(!IS_ERR(qp), "flush handler: create RC QP");
	if (IS_ERR(qp))
		goto out_cq;
	CHECK(!to_init(qp, true), "flush handler: RESET->INIT");
	for (i = 0; i < 3; i++) {
		recv_wr(e, &wr[i], &sge[i], 10 + i);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	ret = ib_post_recv(qp, wr, &bad);
	CHECK(ret == 0, "flush handler: post 3 receives (%d)", ret);
	c.qp = qp;
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	CHECK(!ib_modify_qp(qp, &err, IB_QP_STATE), "flush handler: INIT->ERR");
	c.qp = NULL;
	CHECK(c.reposted && c.repost_ret == 0 && c.calls >= 2 && c.polled == 4,
	      "flush handler: it polled and reposted from the handler (%d calls, %d polled, repost %d)",
	      c.calls, c.polled, c.repost_ret);
	ib_destroy_qp(qp);
out_cq:
	ib_destroy_cq(cq);
}

/* Send requests: checks, then (data path or not) every one completes once. */
static void test_send(struct env *e)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	const struct ib_send_wr *bad = NULL;
	const struct ib_recv_wr *rbad = NULL;
	struct ib_sge sge[5], rsge[2];
	struct ib_recv_wr rwr[2];
	struct ib_send_wr wr[2] = {};
	struct ib_wc wc[8];
	int i, n, ret, seen = 0, flushed = 0;
	struct ib_qp *qp;

	qp = make_qp(e, IB_QPT_RC, NULL);
	CHECK(!IS_ERR(qp), "create RC QP for sends");
	if (IS_ERR(qp))
		return;
	CHECK(!rc_to_rts(e, qp), "RC QP to RTS");
	for (i = 0; i < 2; i++) {
		recv_wr(e, &rwr[i], &rsge[i], 30 + i);
		rwr[i].next = i ? NULL : &rwr[1];
	}
	CHECK(!ib_post_recv(qp, rwr, &rbad), "post 2 receives");
	for (i = 0; i < 5; i++) {
		sge[i].addr = (u64)(uintptr_t)e->buf + 1024;
		sge[i].length = 8;
		sge[i].lkey = e->pd->local_dma_lkey;
	}
	/* Too many SGEs: refused, and bad_wr names it. */
	wr[0].wr_id = 40;
	wr[0].opcode = IB_WR_SEND;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 41;
	/* 2 SGEs or 64 inline bytes asked: rxe sizes the queue for 4 SGEs. */
	wr[1].num_sge = 5;
	wr[1].next = NULL;
	ret = ib_post_send(qp, wr, &bad);
	CHECK(ret == -EINVAL && bad == &wr[1], "5 SGEs on a 4-SGE queue refused at the 2nd WR (%d)", ret);
	/* An inline send. */
	wr[1].num_sge = 1;
	wr[1].send_flags = IB_SEND_INLINE;
	wr[1].next = NULL;
	ret = ib_post_send(qp, &wr[1], &bad);
	CHECK(ret == 0, "inline send posted (%d)", ret);
	/* An atomic must be 8 bytes and aligned. */
	{
		struct ib_atomic_wr awr = { .wr = { .wr_id = 42, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
					    .sg_list = sge, .num_sge = 1 },
					    .remote_addr = 0x1004, .rkey = 1 };

		ret = ib_post_send(qp, &awr.wr, &bad);
		CHECK(ret == -EINVAL, "misaligned atomic refused (%d)", ret);
	}
	msleep(100);
	CHECK(!ib_modify_qp(qp, &err, IB_QP_STATE), "RTS->ERR");
	n = poll_n(e->cq, wc, 5);
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id >= 30 && wc[i].wr_id <= 41)
			seen++;
		if (wc[i].status == IB_WC_WR_FLUSH_ERR)
			flushed++;
	}
	/* 2 receives, the first send and the inline one. */
	CHECK(n == 4 && seen == 4, "every request completed once (%d, %d flushed)", n, flushed);
	pr_info("kverbs: # %d of %d completions were flushes\n", flushed, n);
	ib_destroy_qp(qp);
}

static void test_fast_reg(struct env *e)
{
	struct scatterlist sg[5];
	struct ib_mr *mr;
	int i, n;

	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 4);
	CHECK(!IS_ERR(mr), "alloc_mr for 4 pages");
	if (IS_ERR(mr))
		return;
	CHECK(mr->lkey && mr->rkey, "fast MR keys %#x %#x", mr->lkey, mr->rkey);
	sg_init_table(sg, 5);
	for (i = 0; i < 5; i++) {
		sg_set_page(&sg[i], virt_to_page(e->buf + i * PAGE_SIZE), PAGE_SIZE, 0);
		sg_dma_address(&sg[i]) = (u64)(uintptr_t)(e->buf + i * PAGE_SIZE);
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	n = ib_map_mr_sg(mr, sg, 3, NULL, PAGE_SIZE);
	CHECK(n == 3 && mr->length == 3 * PAGE_SIZE, "map 3 pages (%d, length %llu)", n, mr->length);
	n = ib_map_mr_sg(mr, sg, 5, NULL, PAGE_SIZE);
	CHECK(n == 4, "a 5-page list maps 4 of them (%d)", n);
	ib_dereg_mr(mr);
	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_SG_GAPS, 4);
	CHECK(IS_ERR(mr), "SG_GAPS MRs refused (%ld)", (long)PTR_ERR_OR_ZERO(mr));
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
}

/*
 * Fast registration with traffic: two RC QPs connected to each other on the
 * device. A is the initiator (NVMe-oF's host, NFS's client): it sends and
 * reads and writes through B's fast-registered rkey, as a target does with
 * the keys a host advertises.
 */
#define FRWR_PAGES 4
#define FRWR_WAIT_MS 5000
#define REMOTE_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		       IB_ACCESS_REMOTE_READ)

struct frwr {
	struct env *e;
	struct ib_cq *cqa, *cqb;
	struct ib_qp *a, *b;
	struct ib_mr *mra, *mrb;
	u8 *bufa, *bufb;	/* FRWR_PAGES pages each */
	struct scatterlist sga[FRWR_PAGES], sgb[FRWR_PAGES];
	bool mapped_a, mapped_b;
};

/* Posts @wr (signaled) and waits for its completion in @cq. */
static int post_wait(struct ib_qp *qp, struct ib_cq *cq, struct ib_send_wr *wr,
		     struct ib_wc *wc)
{
	const struct ib_send_wr *bad = NULL;
	int ret;

	wr->send_flags |= IB_SEND_SIGNALED;
	ret = ib_post_send(qp, wr, &bad);
	if (ret)
		return ret;
	ret = poll_n_for(cq, wc, 1, FRWR_WAIT_MS);
	if (ret < 0)
		return ret;
	return ret == 1 ? 0 : -ETIMEDOUT;
}

/*
 * Maps @sg (@n pages, DMA-mapped already) into @mr and registers it with a
 * REG_MR work request on @qp: the ULP's ib_map_mr_sg + IB_WR_REG_MR.
 */
static bool frwr_register(struct ib_qp *qp, struct ib_cq *cq, struct ib_mr *mr,
			  struct scatterlist *sg, int n, int access,
			  const char *what)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 100, .opcode = IB_WR_REG_MR },
		.mr = mr, .key = mr->rkey, .access = access,
	};
	struct ib_wc wc = {};
	int mapped, ret;

	mapped = ib_map_mr_sg(mr, sg, n, NULL, PAGE_SIZE);
	CHECK(mapped == n && mr->length == n * PAGE_SIZE,
	      "%s: map_mr_sg of %d pages (%d, length %llu)", what, n, mapped,
	      mr->length);
	if (mapped != n)
		return false;
	ret = post_wait(qp, cq, &reg.wr, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_REG_MR &&
	      wc.wr_id == 100, "%s: REG_MR key %#x completes (%d, status %d, opcode %d)",
	      what, mr->rkey, ret, wc.status, wc.opcode);
	return !ret && wc.status == IB_WC_SUCCESS;
}

static void fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed + i * 7 + (i >> 8));
}

/* @qp's RDMA @op of @len bytes from its @lkey at @laddr to @raddr/@rkey. */
static int rdma_op_on(struct ib_qp *qp, struct ib_cq *cq, u64 laddr, u32 lkey,
		      u64 raddr, u32 rkey, u32 len, enum ib_wr_opcode op,
		      struct ib_wc *wc)
{
	struct ib_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 200 + op, .opcode = op, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = raddr, .rkey = rkey,
	};

	memset(wc, 0, sizeof(*wc));
	return post_wait(qp, cq, &wr.wr, wc);
}

/* @qp's RDMA WRITE of @len bytes. */
static int frwr_write_on(struct ib_qp *qp, struct ib_cq *cq, u64 laddr, u32 lkey,
			 u64 raddr, u32 rkey, u32 len, struct ib_wc *wc)
{
	return rdma_op_on(qp, cq, laddr, lkey, raddr, rkey, len, IB_WR_RDMA_WRITE, wc);
}

/* A's RDMA WRITE of @len bytes from its @lkey at @laddr to @raddr/@rkey. */
static int frwr_write(struct frwr *f, u64 laddr, u32 lkey, u64 raddr, u32 rkey,
		      u32 len, enum ib_wr_opcode op, struct ib_wc *wc)
{
	return rdma_op_on(f->a, f->cqa, laddr, lkey, raddr, rkey, len, op, wc);
}

static bool frwr_setup(struct frwr *f)
{
	struct env *e = f->e;
	int i, ret;

	f->bufa = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, get_order(FRWR_PAGES * PAGE_SIZE));
	f->bufb = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, get_order(FRWR_PAGES * PAGE_SIZE));
	CHECK(f->bufa && f->bufb, "frwr: buffers");
	if (!f->bufa || !f->bufb)
		return false;
	sg_init_table(f->sga, FRWR_PAGES);
	sg_init_table(f->sgb, FRWR_PAGES);
	for (i = 0; i < FRWR_PAGES; i++) {
		sg_set_buf(&f->sga[i], f->bufa + i * PAGE_SIZE, PAGE_SIZE);
		sg_set_buf(&f->sgb[i], f->bufb + i * PAGE_SIZE, PAGE_SIZE);
	}
	f->mapped_a = ib_dma_map_sg(e->ibdev, f->sga, FRWR_PAGES, DMA_BIDIRECTIONAL) == FRWR_PAGES;
	f->mapped_b = ib_dma_map_sg(e->ibdev, f->sgb, FRWR_PAGES, DMA_BIDIRECTIONAL) == FRWR_PAGES;
	CHECK(f->mapped_a && f->mapped_b, "frwr: dma_map_sg");
	if (!f->mapped_a || !f->mapped_b)
		return false;

	f->cqa = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	f->cqb = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(f->cqa) && !IS_ERR(f->cqb), "frwr: two CQs");
	if (IS_ERR(f->cqa) || IS_ERR(f->cqb))
		return false;
	f->a = make_qp_on(e, IB_QPT_RC, NULL, f->cqa);
	f->b = make_qp_on(e, IB_QPT_RC, NULL, f->cqb);
	CHECK(!IS_ERR(f->a) && !IS_ERR(f->b), "frwr: two RC QPs");
	if (IS_ERR(f->a) || IS_ERR(f->b))
		return false;
	ret = rc_connect(e, f->a, f->b->qp_num, REMOTE_ACCESS);
	CHECK(!ret, "frwr: QP %#x connected to QP %#x (%d)", f->a->qp_num, f->b->qp_num, ret);
	if (ret)
		return false;
	ret = rc_connect(e, f->b, f->a->qp_num, REMOTE_ACCESS);
	CHECK(!ret, "frwr: QP %#x connected to QP %#x (%d)", f->b->qp_num, f->a->qp_num, ret);
	if (ret)
		return false;
	f->mra = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, FRWR_PAGES);
	f->mrb = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, FRWR_PAGES);
	CHECK(!IS_ERR(f->mra) && !IS_ERR(f->mrb), "frwr: two fast MRs");
	return !IS_ERR(f->mra) && !IS_ERR(f->mrb);
}

static void frwr_teardown(struct frwr *f)
{
	struct env *e = f->e;

	if (!IS_ERR_OR_NULL(f->a))
		ib_destroy_qp(f->a);
	if (!IS_ERR_OR_NULL(f->b))
		ib_destroy_qp(f->b);
	if (!IS_ERR_OR_NULL(f->mra))
		ib_dereg_mr(f->mra);
	if (!IS_ERR_OR_NULL(f->mrb))
		ib_dereg_mr(f->mrb);
	if (!IS_ERR_OR_NULL(f->cqa))
		ib_free_cq(f->cqa);
	if (!IS_ERR_OR_NULL(f->cqb))
		ib_free_cq(f->cqb);
	if (f->mapped_a)
		ib_dma_unmap_sg(e->ibdev, f->sga, FRWR_PAGES, DMA_BIDIRECTIONAL);
	if (f->mapped_b)
		ib_dma_unmap_sg(e->ibdev, f->sgb, FRWR_PAGES, DMA_BIDIRECTIONAL);
	free_pages((unsigned long)f->bufa, get_order(FRWR_PAGES * PAGE_SIZE));
	free_pages((unsigned long)f->bufb, get_order(FRWR_PAGES * PAGE_SIZE));
}

/*
 * WRITE then READ across B's page boundary, local side through A's own
 * fast MR, bytes checked (and the bytes around the written range).
 */
static bool frwr_write_read(struct frwr *f)
{
	const u32 len = PAGE_SIZE + 500, rlen = PAGE_SIZE;
	struct ib_wc wc;
	bool same;
	int ret;

	fill(f->bufa, 2 * PAGE_SIZE, 1);
	memset(f->bufb, 0, FRWR_PAGES * PAGE_SIZE);
	ret = frwr_write(f, f->mra->iova + 100, f->mra->lkey, f->mrb->iova + 300,
			 f->mrb->rkey, len, IB_WR_RDMA_WRITE, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RDMA_WRITE,
	      "frwr: RDMA WRITE of %u bytes through rkey %#x (%d, status %d)",
	      len, f->mrb->rkey, ret, wc.status);
	same = !memcmp(f->bufb + 300, f->bufa + 100, len);
	CHECK(same && !f->bufb[299] && !f->bufb[300 + len],
	      "frwr: the WRITE's bytes arrived, nothing around them");
	if (ret || wc.status != IB_WC_SUCCESS)
		return false;

	fill(f->bufb + 1000, rlen, 9);
	memset(f->bufa, 0, 2 * PAGE_SIZE);
	ret = frwr_write(f, f->mra->iova + 50, f->mra->lkey, f->mrb->iova + 1000,
			 f->mrb->rkey, rlen, IB_WR_RDMA_READ, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RDMA_READ,
	      "frwr: RDMA READ of %u bytes through rkey %#x (%d, status %d)",
	      rlen, f->mrb->rkey, ret, wc.status);
	same = !memcmp(f->bufa + 50, f->bufb + 1000, rlen);
	CHECK(same && !f->bufa[49] && !f->bufa[50 + rlen],
	      "frwr: the READ's bytes arrived, nothing around them");
	return !ret && wc.status == IB_WC_SUCCESS;
}

/*
 * An RDMA WRITE with immediate data of several packets through the fast
 * MR: it consumes a receive of B, whose completion carries the data and,
 * as rxe reports it, the WRITE's length.
 */
static bool frwr_write_imm(struct frwr *f)
{
	const struct ib_recv_wr *rbad = NULL;
	const u32 len = PAGE_SIZE + 500;
	const __be32 imm = cpu_to_be32(0x1234abcd);
	struct ib_sge rsge = { .addr = (u64)(uintptr_t)(f->e->buf + 2048), .length = 64,
			       .lkey = f->e->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 450, .sg_list = &rsge, .num_sge = 1 };
	struct ib_sge sge = { .addr = f->mra->iova + 100, .length = len, .lkey = f->mra->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 451, .opcode = IB_WR_RDMA_WRITE_WITH_IMM, .sg_list = &sge,
			.num_sge = 1, .ex.imm_data = imm },
		.remote_addr = f->mrb->iova + 300, .rkey = f->mrb->rkey,
	};
	struct ib_wc wc = {}, rwc = {};
	int ret, n;

	fill(f->bufa, 2 * PAGE_SIZE, 4);
	ret = ib_post_recv(f->b, &rwr, &rbad);
	CHECK(!ret, "frwr: B posts a receive for a WRITE with immediate (%d)", ret);
	ret = post_wait(f->a, f->cqa, &wr.wr, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RDMA_WRITE,
	      "frwr: RDMA WRITE with immediate of %u bytes completes (%d, status %d, opcode %d)",
	      len, ret, wc.status, wc.opcode);
	n = poll_n_for(f->cqb, &rwc, 1, FRWR_WAIT_MS);
	CHECK(n == 1 && rwc.status == IB_WC_SUCCESS && rwc.opcode == IB_WC_RECV_RDMA_WITH_IMM &&
	      rwc.wr_id == 450 && (rwc.wc_flags & IB_WC_WITH_IMM) && rwc.ex.imm_data == imm &&
	      rwc.byte_len == len,
	      "frwr: B's completion has the immediate data and byte_len %u (%d, status %d, opcode %d, flags %#x, byte_len %u)",
	      len, n, rwc.status, rwc.opcode, rwc.wc_flags, rwc.byte_len);
	CHECK(!memcmp(f->bufb + 300, f->bufa + 100, len),
	      "frwr: the WRITE with immediate's bytes arrived");
	return !ret && wc.status == IB_WC_SUCCESS && n == 1;
}

/*
 * LOCAL_INV of A's own MR, then registration again under the next key
 * (ib_update_fast_reg_key) on other pages, and a WRITE from it.
 */
static bool frwr_local_inv_rereg(struct frwr *f)
{
	struct ib_send_wr inv = { .wr_id = 300, .opcode = IB_WR_LOCAL_INV };
	u32 old = f->mra->rkey, len = 256;
	struct ib_wc wc = {};
	int ret;

	inv.ex.invalidate_rkey = old;
	ret = post_wait(f->a, f->cqa, &inv, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_LOCAL_INV &&
	      wc.wr_id == 300, "frwr: LOCAL_INV of key %#x completes (%d, status %d, opcode %d)",
	      old, ret, wc.status, wc.opcode);
	if (ret || wc.status != IB_WC_SUCCESS)
		return false;
	ib_update_fast_reg_key(f->mra, ib_inc_rkey(f->mra->rkey) & 0xff);
	CHECK(f->mra->rkey != old && (f->mra->rkey & ~0xffu) == (old & ~0xffu),
	      "frwr: new key %#x for the MR of key %#x", f->mra->rkey, old);
	if (!frwr_register(f->a, f->cqa, f->mra, &f->sga[2], 2, IB_ACCESS_LOCAL_WRITE,
			   "frwr: A again"))
		return false;
	fill(f->bufa + 2 * PAGE_SIZE, len, 5);
	memset(f->bufb, 0, PAGE_SIZE);
	ret = frwr_write(f, f->mra->iova, f->mra->lkey, f->mrb->iova, f->mrb->rkey,
			 len, IB_WR_RDMA_WRITE, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS &&
	      !memcmp(f->bufb, f->bufa + 2 * PAGE_SIZE, len),
	      "frwr: RDMA WRITE from the MR under its new key (%d, status %d)", ret, wc.status);
	return !ret && wc.status == IB_WC_SUCCESS;
}

/*
 * SEND_WITH_INV from A invalidates B's rkey; B's receive completion says
 * so; a WRITE with that rkey then fails with a remote access error (which
 * takes A to ERR: the last step).
 */
static void frwr_send_inv(struct frwr *f)
{
	const struct ib_recv_wr *rbad = NULL;
	u8 *rbuf = f->e->buf + 2048;
	u32 rkey = f->mrb->rkey, len = 16;
	struct ib_sge sge = { .addr = f->mra->iova, .length = len, .lkey = f->mra->lkey };
	struct ib_sge rsge = { .addr = (u64)(uintptr_t)rbuf, .length = 64,
			       .lkey = f->e->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 400, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 401, .opcode = IB_WR_SEND_WITH_INV,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_wc wc = {}, rwc = {};
	int ret, n;

	memset(rbuf, 0, 64);
	fill(f->bufa + 2 * PAGE_SIZE, len, 3);
	ret = ib_post_recv(f->b, &rwr, &rbad);
	CHECK(!ret, "frwr: B posts a receive (%d)", ret);
	swr.ex.invalidate_rkey = rkey;
	ret = post_wait(f->a, f->cqa, &swr, &wc);
	CHECK(!ret && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_SEND && wc.wr_id == 401,
	      "frwr: SEND_WITH_INV of rkey %#x completes (%d, status %d, opcode %d)",
	      rkey, ret, wc.status, wc.opcode);
	n = poll_n_for(f->cqb, &rwc, 1, FRWR_WAIT_MS);
	CHECK(n == 1 && rwc.status == IB_WC_SUCCESS && rwc.opcode == IB_WC_RECV &&
	      rwc.wr_id == 400 && rwc.byte_len == len &&
	      !memcmp(rbuf, f->bufa + 2 * PAGE_SIZE, len),
	      "frwr: B receives the %u bytes (%d, status %d, opcode %d, byte_len %u)",
	      len, n, rwc.status, rwc.opcode, rwc.byte_len);
	CHECK(n == 1 && (rwc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	      rwc.ex.invalidate_rkey == rkey,
	      "frwr: B's completion has IB_WC_WITH_INVALIDATE and rkey %#x (flags %#x, %#x)",
	      rkey, rwc.wc_flags, rwc.ex.invalidate_rkey);
	/* As rxe's do_complete marks every receive, RC included. */
	CHECK(n == 1 && (rwc.wc_flags & IB_WC_GRH) &&
	      (rwc.wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE) &&
	      rwc.network_hdr_type == RDMA_NETWORK_IPV4,
	      "frwr: B's completion has IB_WC_GRH and network header type IPv4 (flags %#x, type %d)",
	      rwc.wc_flags, rwc.network_hdr_type);
	if (ret || wc.status != IB_WC_SUCCESS || n != 1)
		return;

	memset(f->bufb, 0, PAGE_SIZE);
	ret = frwr_write(f, f->mra->iova, f->mra->lkey, f->mrb->iova, rkey, len,
			 IB_WR_RDMA_WRITE, &wc);
	CHECK(!ret && wc.status == IB_WC_REM_ACCESS_ERR,
	      "frwr: RDMA WRITE with the invalidated rkey %#x: remote access error (%d, status %d)",
	      rkey, ret, wc.status);
	CHECK(!memchr_inv(f->bufb, 0, PAGE_SIZE),
	      "frwr: nothing written through the invalidated rkey");
}

/*
 * More local operations posted at once than the requester keeps started
 * WQEs (128): REG_MR, then LOCAL_INV and REG_MR under the next key, 100
 * times, in one chain, unsignaled but the last (rtrs_server posts 512
 * REG_MRs before a SEND at each login). Each is done as it starts and no
 * answer is due for any: the last must still complete, and so must a
 * SEND posted after them. rrxe once stopped after the first 128, the rest
 * waiting for an unrelated packet.
 */
#define BURST_PAIRS 100
#define BURST_WRS (1 + 2 * BURST_PAIRS)

static void test_local_op_burst(struct env *e)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = BURST_WRS + 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_sge rsge = { .addr = (u64)(uintptr_t)e->buf + 4096, .length = 64,
			       .lkey = e->pd->local_dma_lkey };
	struct ib_sge sge = { .addr = (u64)(uintptr_t)e->buf, .length = 16,
			      .lkey = e->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr send = { .wr_id = 3, .opcode = IB_WR_SEND, .sg_list = &sge,
				   .num_sge = 1, .send_flags = IB_SEND_SIGNALED };
	const struct ib_recv_wr *rbad = NULL;
	const struct ib_send_wr *bad = NULL;
	struct ib_reg_wr *reg = NULL;
	struct ib_send_wr *inv = NULL;
	struct scatterlist sg;
	struct ib_mr *mr = NULL;
	struct ib_qp *qp = NULL;
	struct ib_cq *cq;
	struct ib_wc wc[2] = {};
	u32 key;
	int i, n, ret;

	cq = ib_alloc_cq(e->ibdev, NULL, 8, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "burst: a CQ (%ld)", (long)PTR_ERR_OR_ZERO(cq));
	if (IS_ERR(cq))
		return;
	init.send_cq = init.recv_cq = cq;
	reg = kcalloc(BURST_PAIRS + 1, sizeof(*reg), GFP_KERNEL);
	inv = kcalloc(BURST_PAIRS, sizeof(*inv), GFP_KERNEL);
	qp = ib_create_qp(e->pd, &init);
	CHECK(reg && inv && !IS_ERR(qp), "burst: an RC QP of %d send WRs (%ld)", BURST_WRS + 1,
	      (long)PTR_ERR_OR_ZERO(qp));
	if (!reg || !inv || IS_ERR(qp))
		goto out;
	ret = rc_to_rts(e, qp);
	CHECK(!ret, "burst: QP %#x connected to itself (%d)", qp->qp_num, ret);
	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 1);
	CHECK(!IS_ERR(mr), "burst: a fast MR (%ld)", (long)PTR_ERR_OR_ZERO(mr));
	if (ret || IS_ERR(mr))
		goto out;
	sg_init_one(&sg, e->buf + 2 * PAGE_SIZE, PAGE_SIZE);
	n = ib_dma_map_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
	CHECK(n == 1 && ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) == 1, "burst: one page mapped");
	if (n != 1)
		goto out;
	/* Chained in posting order: REG_MR, then (LOCAL_INV, REG_MR) pairs. */
	key = mr->rkey;
	for (i = 0; i <= BURST_PAIRS; i++) {
		if (i) {
			inv[i - 1] = (struct ib_send_wr){ .wr_id = 100, .opcode = IB_WR_LOCAL_INV,
							  .ex.invalidate_rkey = key };
			reg[i - 1].wr.next = &inv[i - 1];
			inv[i - 1].next = &reg[i].wr;
			key = ib_inc_rkey(key);
		}
		reg[i].wr.wr_id = 100;
		reg[i].wr.opcode = IB_WR_REG_MR;
		reg[i].mr = mr;
		reg[i].key = key;
		reg[i].access = IB_ACCESS_LOCAL_WRITE;
	}
	reg[BURST_PAIRS].wr.wr_id = 1;
	reg[BURST_PAIRS].wr.send_flags = IB_SEND_SIGNALED;
	ret = ib_post_recv(qp, &rwr, &rbad) ?: ib_post_send(qp, &reg[0].wr, &bad);
	CHECK(!ret, "burst: %d local operations posted in one chain (%d)", BURST_WRS, ret);
	if (ret)
		goto unmap;
	n = poll_n_for(cq, wc, 1, FRWR_WAIT_MS);
	CHECK(n == 1 && wc[0].wr_id == 1 && wc[0].status == IB_WC_SUCCESS &&
	      wc[0].opcode == IB_WC_REG_MR,
	      "burst: the last of %d local operations completes (%d, wr_id %llu, status %d)",
	      BURST_WRS, n, wc[0].wr_id, wc[0].status);
	ib_update_fast_reg_key(mr, key & 0xff);
	ret = ib_post_send(qp, &send, &bad);
	n = ret ? 0 : poll_n_for(cq, wc, 2, FRWR_WAIT_MS);
	CHECK(n == 2, "burst: a SEND after them arrives and completes (%d, %d)", ret, n);
unmap:
	ib_dma_unmap_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
out:
	if (!IS_ERR_OR_NULL(mr))
		ib_dereg_mr(mr);
	if (!IS_ERR_OR_NULL(qp))
		ib_destroy_qp(qp);
	kfree(inv);
	kfree(reg);
	ib_free_cq(cq);
}

static void test_frwr(struct env *e)
{
	struct frwr f = { .e = e };

	if (!frwr_setup(&f))
		goto out;
	/* B registers its buffer for A, A its own as a local key. */
	if (!frwr_register(f.b, f.cqb, f.mrb, f.sgb, 2, REMOTE_ACCESS, "frwr: B") ||
	    !frwr_register(f.a, f.cqa, f.mra, f.sga, 2, IB_ACCESS_LOCAL_WRITE, "frwr: A"))
		goto out;
	if (frwr_write_read(&f) && frwr_write_imm(&f) && frwr_local_inv_rereg(&f))
		frwr_send_inv(&f);
out:
	frwr_teardown(&f);
}

static const char *inv_status_name(enum ib_wc_status s)
{
	switch (s) {
	case IB_WC_SUCCESS: return "SUCCESS";
	case IB_WC_REM_INV_REQ_ERR: return "REM_INV_REQ_ERR";
	case IB_WC_REM_ACCESS_ERR: return "REM_ACCESS_ERR";
	case IB_WC_WR_FLUSH_ERR: return "WR_FLUSH_ERR";
	default: return "OTHER";
	}
}

/*
 * Security case (Documentation/testing.rst, "Security"): SEND_WITH_INV
 * naming the rkey of a fast MR of another PD, as a kernel ULP (NVMe-oF,
 * iSER, NFS/RDMA) registers them; the peer of any RC QP of the device
 * could otherwise invalidate it. A and B (the test's PD) are connected to
 * each other, C (a second PD) to itself and registers the MR. Logged as
 * "kverbs: sec - send_inv_other_pd RECV/WRITE": B's receive status, then
 * that of C's RDMA WRITE through the rkey afterwards. rrxe refuses the
 * invalidation (REM_INV_REQ_ERR, Class J) and the MR stays valid
 * (SUCCESS); rdma_rxe 7.3's rxe_invalidate_mr does not compare PDs.
 */
static void test_inv_other_pd(struct env *e)
{
	const struct ib_recv_wr *rbad = NULL;
	struct env e2 = *e;
	struct ib_cq *cqa = NULL, *cqb = NULL, *cqc = NULL;
	struct ib_qp *a = NULL, *b = NULL, *c = NULL;
	struct ib_mr *mr = NULL;
	struct scatterlist sg;
	bool mapped = false;
	u8 *buf;
	struct ib_sge sge, rsge;
	struct ib_recv_wr rwr = { .wr_id = 500, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = { .wr_id = 501, .opcode = IB_WR_SEND_WITH_INV,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_rdma_wr wwr = {
		.wr = { .wr_id = 502, .opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_wc wc = {}, rwc = {};
	int ret, n;

	buf = (u8 *)__get_free_page(GFP_KERNEL | __GFP_ZERO);
	e2.pd = ib_alloc_pd(e->ibdev, 0);
	CHECK(buf && !IS_ERR(e2.pd), "inv_pd: a page and a second PD");
	if (!buf || IS_ERR(e2.pd))
		goto out;
	sg_init_one(&sg, buf, PAGE_SIZE);
	mapped = ib_dma_map_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL) == 1;
	cqa = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	cqb = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	cqc = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(mapped && !IS_ERR(cqa) && !IS_ERR(cqb) && !IS_ERR(cqc),
	      "inv_pd: dma_map_sg and three CQs");
	if (!mapped || IS_ERR(cqa) || IS_ERR(cqb) || IS_ERR(cqc))
		goto out;
	a = make_qp_on(e, IB_QPT_RC, NULL, cqa);
	b = make_qp_on(e, IB_QPT_RC, NULL, cqb);
	c = make_qp_on(&e2, IB_QPT_RC, NULL, cqc);
	CHECK(!IS_ERR(a) && !IS_ERR(b) && !IS_ERR(c), "inv_pd: three RC QPs");
	if (IS_ERR(a) || IS_ERR(b) || IS_ERR(c))
		goto out;
	ret = rc_connect(e, a, b->qp_num, REMOTE_ACCESS);
	ret = ret ?: rc_connect(e, b, a->qp_num, REMOTE_ACCESS);
	ret = ret ?: rc_connect(&e2, c, c->qp_num, REMOTE_ACCESS);
	CHECK(!ret, "inv_pd: A and B connected, C to itself (%d)", ret);
	if (ret)
		goto out;
	mr = ib_alloc_mr(e2.pd, IB_MR_TYPE_MEM_REG, 1);
	CHECK(!IS_ERR(mr), "inv_pd: a fast MR in the second PD");
	if (IS_ERR(mr) || !frwr_register(c, cqc, mr, &sg, 1, REMOTE_ACCESS,
					 "inv_pd: C registers it"))
		goto out;

	rsge = (struct ib_sge){ .addr = (u64)(uintptr_t)(e->buf + 2048), .length = 64,
				.lkey = e->pd->local_dma_lkey };
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)(e->buf + 3072), .length = 16,
			       .lkey = e->pd->local_dma_lkey };
	ret = ib_post_recv(b, &rwr, &rbad);
	CHECK(!ret, "inv_pd: B posts a receive (%d)", ret);
	swr.ex.invalidate_rkey = mr->rkey;
	ret = post_wait(a, cqa, &swr, &wc);
	CHECK(!ret && wc.wr_id == 501, "inv_pd: A's SEND_WITH_INV of rkey %#x completes (%d, status %d)",
	      mr->rkey, ret, wc.status);
	n = poll_n_for(cqb, &rwc, 1, FRWR_WAIT_MS);
	CHECK(n == 1 && rwc.wr_id == 500, "inv_pd: B's receive completes (%d, status %d)",
	      n, rwc.status);
	if (n != 1)
		goto out;

	/* C writes 16 bytes into the MR through its rkey. */
	memset(buf, 0, 16);
	fill((u8 *)e->buf + 3584, 16, 6);
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)(e->buf + 3584), .length = 16,
			       .lkey = e2.pd->local_dma_lkey };
	wwr.remote_addr = mr->iova;
	wwr.rkey = mr->rkey;
	memset(&wc, 0, sizeof(wc));
	ret = post_wait(c, cqc, &wwr.wr, &wc);
	if (!ret && wc.status == IB_WC_SUCCESS)
		CHECK(!memcmp(buf, e->buf + 3584, 16), "inv_pd: the WRITE's bytes arrived");
	pr_info("kverbs: sec - send_inv_other_pd %s/%s\n", inv_status_name(rwc.status),
		ret ? "TIMEOUT" : inv_status_name(wc.status));
out:
	if (!IS_ERR_OR_NULL(a))
		ib_destroy_qp(a);
	if (!IS_ERR_OR_NULL(b))
		ib_destroy_qp(b);
	if (!IS_ERR_OR_NULL(c))
		ib_destroy_qp(c);
	if (!IS_ERR_OR_NULL(mr))
		ib_dereg_mr(mr);
	if (!IS_ERR_OR_NULL(cqa))
		ib_free_cq(cqa);
	if (!IS_ERR_OR_NULL(cqb))
		ib_free_cq(cqb);
	if (!IS_ERR_OR_NULL(cqc))
		ib_free_cq(cqc);
	if (mapped)
		ib_dma_unmap_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(e2.pd) && e2.pd != e->pd)
		ib_dealloc_pd(e2.pd);
	free_page((unsigned long)buf);
}

static void test_ud_ah_srq(struct env *e)
{
	struct rdma_ah_attr attr, q;
	const struct ib_recv_wr *bad = NULL;
	const struct ib_send_wr *sbad = NULL;
	struct ib_srq_init_attr sinit = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_attr a = {};
	struct ib_recv_wr rwr;
	struct ib_sge sge;
	struct ib_ud_wr uwr = {};
	struct ib_srq *srq;
	struct ib_ah *ah, *ah2;
	struct ib_qp *qp;
	struct ib_wc wc[4];
	int ret, n;

	fill_av(e, &attr);
	ah = rdma_create_ah(e->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	CHECK(!IS_ERR(ah), "create AH (%ld)", (long)PTR_ERR_OR_ZERO(ah));
	if (IS_ERR(ah))
		return;
	ah2 = rdma_create_ah(e->pd, &attr, 0);
	CHECK(!IS_ERR(ah2), "create AH without sleeping");
	if (!IS_ERR(ah2))
		rdma_destroy_ah(ah2, 0);
	CHECK(!rdma_query_ah(ah, &q) && !memcmp(q.grh.dgid.raw, e->gid.raw, 16),
	      "query AH gives the GID back");
	attr.grh.hop_limit = 7;
	ret = rdma_modify_ah(ah, &attr);
	CHECK(ret == 0, "modify AH (%d)", ret);
	CHECK(!rdma_query_ah(ah, &q) && q.grh.hop_limit == 7,
	      "query AH gives the new hop limit (%d)", q.grh.hop_limit);

	srq = ib_create_srq(e->pd, &sinit);
	CHECK(!IS_ERR(srq), "create SRQ");
	if (IS_ERR(srq))
		goto out_ah;
	ret = ib_post_srq_recv(srq, recv_wr(e, &rwr, &sge, 50), &bad);
	CHECK(ret == 0, "post_srq_recv (%d)", ret);

	qp = make_qp(e, IB_QPT_UD, srq);
	CHECK(!IS_ERR(qp), "create UD QP on the SRQ");
	if (IS_ERR(qp))
		goto out_srq;
	ret = ib_post_recv(qp, &rwr, &bad);
	CHECK(ret == -EINVAL, "post_recv on an SRQ QP refused (%d)", ret);
	CHECK(!to_init(qp, false), "UD RESET->INIT");
	a.qp_state = IB_QPS_RTR;
	CHECK(!ib_modify_qp(qp, &a, IB_QP_STATE), "UD INIT->RTR");
	a.qp_state = IB_QPS_RTS;
	CHECK(!ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN), "UD RTR->RTS");
	sge.length = 8;
	uwr.wr.wr_id = 60;
	uwr.wr.opcode = IB_WR_RDMA_WRITE;
	uwr.wr.sg_list = &sge;
	uwr.wr.num_sge = 1;
	uwr.ah = ah;
	uwr.remote_qpn = 0xffffff;
	uwr.remote_qkey = 0x11111111;
	ret = ib_post_send(qp, &uwr.wr, &sbad);
	CHECK(ret == -EINVAL, "RDMA WRITE on UD refused (%d)", ret);
	uwr.wr.opcode = IB_WR_SEND;
	ret = ib_post_send(qp, &uwr.wr, &sbad);
	CHECK(ret == 0, "UD send posted (%d)", ret);
	a.qp_state = IB_QPS_ERR;
	CHECK(!ib_modify_qp(qp, &a, IB_QP_STATE), "UD RTS->ERR");
	n = poll_n(e->cq, wc, 1);
	CHECK(n == 1 && wc[0].wr_id == 60, "the UD send completed once (%d)", n);
	ib_destroy_qp(qp);
out_srq:
	ib_destroy_srq(srq);
out_ah:
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/*
 * Security cases across PDs (Documentation/testing.rst, "Security"). Their
 * outcome may differ between rdma_rxe and rrxe, so each is logged as a
 * "kverbs: sec - NAME OUTCOME" line for the test script to compare, not as
 * a check; only their setup is checked.
 */
static const char *wc_name(enum ib_wc_status s)
{
	switch (s) {
	case IB_WC_SUCCESS: return "SUCCESS";
	case IB_WC_LOC_QP_OP_ERR: return "LOC_QP_OP_ERR";
	case IB_WC_LOC_PROT_ERR: return "LOC_PROT_ERR";
	case IB_WC_WR_FLUSH_ERR: return "WR_FLUSH_ERR";
	case IB_WC_REM_ACCESS_ERR: return "REM_ACCESS_ERR";
	default: return "OTHER";
	}
}

static const char *qp_state_name(struct ib_qp *qp)
{
	struct ib_qp_attr a = {};
	struct ib_qp_init_attr init = {};

	if (ib_query_qp(qp, &a, IB_QP_STATE, &init))
		return "?";
	switch (a.qp_state) {
	case IB_QPS_RTS: return "RTS";
	case IB_QPS_ERR: return "ERR";
	case IB_QPS_SQE: return "SQE";
	default: return "OTHER";
	}
}

/*
 * LOCAL_INV posted on a QP of another PD than the fast MR's (a ULP's
 * registration, invalidated by someone else's QP), then an RDMA WRITE
 * through the MR's rkey from a QP of its own PD: "INV/WRITE" statuses.
 * rxe's rxe_invalidate_mr does not look at the PD.
 */
static void sec_local_inv_other_pd(struct env *e, struct ib_pd *pd2)
{
	struct ib_send_wr inv = { .wr_id = 700, .opcode = IB_WR_LOCAL_INV };
	struct ib_cq *cqa = NULL, *cqx = NULL;
	struct ib_qp *a = NULL, *x = NULL;
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct scatterlist sg;
	struct ib_mr *mr = NULL;
	struct ib_wc wc = {}, wwc = {};
	u8 *page = (u8 *)__get_free_page(GFP_KERNEL | __GFP_ZERO);
	bool mapped = false;
	int ret, wret;

	CHECK(page, "sec: a page");
	if (!page)
		return;
	sg_init_one(&sg, page, PAGE_SIZE);
	mapped = ib_dma_map_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL) == 1;
	cqa = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	cqx = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(mapped && !IS_ERR(cqa) && !IS_ERR(cqx), "sec: dma_map_sg and two CQs");
	if (!mapped || IS_ERR(cqa) || IS_ERR(cqx))
		goto out;
	init.send_cq = init.recv_cq = cqa;
	a = ib_create_qp(e->pd, &init);
	init.send_cq = init.recv_cq = cqx;
	x = ib_create_qp(pd2, &init);
	CHECK(!IS_ERR(a) && !IS_ERR(x), "sec: RC QPs in two PDs");
	if (IS_ERR(a) || IS_ERR(x))
		goto out;
	ret = rc_connect(e, a, a->qp_num, REMOTE_ACCESS) ?: rc_connect(e, x, x->qp_num, REMOTE_ACCESS);
	CHECK(!ret, "sec: both connected to themselves (%d)", ret);
	if (ret)
		goto out;
	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 1);
	CHECK(!IS_ERR(mr), "sec: fast MR");
	if (IS_ERR(mr) || !frwr_register(a, cqa, mr, &sg, 1, REMOTE_ACCESS, "sec: MR of PD 1"))
		goto out;
	inv.ex.invalidate_rkey = mr->rkey;
	ret = post_wait(x, cqx, &inv, &wc);
	CHECK(!ret, "sec: LOCAL_INV from PD 2 completes (%d)", ret);
	if (ret)
		goto out;
	memset(e->buf, 0x5a, 64);
	wret = frwr_write_on(a, cqa, (u64)(uintptr_t)e->buf, e->pd->local_dma_lkey,
			     mr->iova, mr->rkey, 64, &wwc);
	pr_info("kverbs: sec - local_inv_other_pd %s/%s\n", wc_name(wc.status),
		wret ? "TIMEOUT" : wc_name(wwc.status));
out:
	if (!IS_ERR_OR_NULL(a))
		ib_destroy_qp(a);
	if (!IS_ERR_OR_NULL(x))
		ib_destroy_qp(x);
	if (!IS_ERR_OR_NULL(mr))
		ib_dereg_mr(mr);
	if (!IS_ERR_OR_NULL(cqa))
		ib_free_cq(cqa);
	if (!IS_ERR_OR_NULL(cqx))
		ib_free_cq(cqx);
	if (mapped)
		ib_dma_unmap_sg(e->ibdev, &sg, 1, DMA_BIDIRECTIONAL);
	free_page((unsigned long)page);
}

/*
 * A kernel UD send through an AH of another PD than the QP's: "STATUS/STATE"
 * (rxe_get_av refuses the AH: LOC_QP_OP_ERR, QP in ERR).
 */
static void sec_ud_ah_other_pd(struct env *e, struct ib_pd *pd2)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct ib_sge sge = { .addr = (u64)(uintptr_t)e->buf, .length = 64,
			      .lkey = e->pd->local_dma_lkey };
	struct ib_ud_wr uwr = {
		.wr = { .wr_id = 710, .opcode = IB_WR_SEND, .sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x11111111,
	};
	struct rdma_ah_attr attr;
	struct ib_qp_attr a = {};
	struct ib_ah *ah;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_wc wc = {};
	int ret, n;

	fill_av(e, &attr);
	ah = rdma_create_ah(pd2, &attr, RDMA_CREATE_AH_SLEEPABLE);
	cq = ib_alloc_cq(e->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(ah) && !IS_ERR(cq), "sec: AH in PD 2, a CQ");
	if (IS_ERR(ah) || IS_ERR(cq))
		goto out_ah;
	init.send_cq = init.recv_cq = cq;
	qp = ib_create_qp(e->pd, &init);
	CHECK(!IS_ERR(qp), "sec: UD QP in PD 1");
	if (IS_ERR(qp))
		goto out_ah;
	ret = to_init(qp, false);
	a.qp_state = IB_QPS_RTR;
	ret = ret ?: ib_modify_qp(qp, &a, IB_QP_STATE);
	a.qp_state = IB_QPS_RTS;
	ret = ret ?: ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
	CHECK(!ret, "sec: UD QP to RTS (%d)", ret);
	if (ret)
		goto out_qp;
	uwr.ah = ah;
	uwr.remote_qpn = qp->qp_num;
	ret = ib_post_send(qp, &uwr.wr, &bad);
	CHECK(!ret, "sec: UD send through PD 2's AH posted (%d)", ret);
	if (ret)
		goto out_qp;
	n = poll_n_for(cq, &wc, 1, FRWR_WAIT_MS);
	pr_info("kverbs: sec - ud_ah_other_pd %s/%s\n",
		n == 1 ? wc_name(wc.status) : "TIMEOUT", qp_state_name(qp));
out_qp:
	ib_destroy_qp(qp);
out_ah:
	if (!IS_ERR(cq))
		ib_free_cq(cq);
	if (!IS_ERR(ah))
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

static void test_other_pd(struct env *e)
{
	struct ib_pd *pd2 = ib_alloc_pd(e->ibdev, 0);

	CHECK(!IS_ERR(pd2), "sec: a second PD");
	if (IS_ERR(pd2))
		return;
	sec_local_inv_other_pd(e, pd2);
	sec_ud_ah_other_pd(e, pd2);
	ib_dealloc_pd(pd2);
}

/*
 * The index of the port's RoCEv2 GID of the netdev's IPv4 address
 * (::ffff:a.b.c.d, entered by the core's roce_gid_mgmt), or -ENOENT; the
 * GID in @gid, the netdev's MAC address in @mac.
 */
static int roce_v2_ipv4_gid(struct ib_device *ibdev, union ib_gid *gid, u8 *mac)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int i;

	for (i = 0; i < 64; i++) {
		attr = rdma_get_gid_attr(ibdev, 1, i);
		if (IS_ERR(attr)) {
			if (PTR_ERR(attr) == -EINVAL)
				break;	/* past the table */
			continue;	/* an empty entry */
		}
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw)) {
			*gid = attr->gid;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				ether_addr_copy(mac, ndev->dev_addr);
			rcu_read_unlock();
			rdma_put_gid_attr(attr);
			return i;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

static void run(struct ib_device *ibdev)
{
	struct env e = { .ibdev = ibdev };

	e.buf = kzalloc(8 * PAGE_SIZE, GFP_KERNEL);
	e.gid_index = roce_v2_ipv4_gid(ibdev, &e.gid, e.mac);
	CHECK(e.buf && e.gid_index >= 0, "RoCEv2 IPv4 GID of %s at index %d", dev, e.gid_index);
	e.pd = ib_alloc_pd(e.ibdev, 0);
	CHECK(!IS_ERR(e.pd), "alloc PD");
	if (IS_ERR(e.pd))
		goto out;
	e.cq = ib_alloc_cq(e.ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(e.cq), "alloc CQ (%ld)", (long)PTR_ERR_OR_ZERO(e.cq));
	if (!IS_ERR(e.cq) && e.buf) {
		test_flush(&e);
		test_flush_handler(&e);
		test_send(&e);
		test_fast_reg(&e);
		test_frwr(&e);
		test_local_op_burst(&e);
		test_inv_other_pd(&e);
		test_ud_ah_srq(&e);
		test_other_pd(&e);
		ib_free_cq(e.cq);
	}
	ib_dealloc_pd(e.pd);
out:
	kfree(e.buf);
}

static bool found;

/* The core offers every kernel-verbs device to a new client, in turn. */
static int kverbs_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev))
		return -EOPNOTSUPP;
	found = true;
	run(ibdev);
	pr_info("kverbs: done on %s, %d failed\n", dev, fails);
	return 0;
}

static void kverbs_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client kverbs_client = {
	.name = "rrxe_kverbs_test",
	.add = kverbs_add,
	.remove = kverbs_remove,
};

static int __init kverbs_init(void)
{
	int ret = ib_register_client(&kverbs_client);

	if (ret)
		return ret;
	if (!found)
		pr_info("kverbs: not ok - no kernel-verbs device %s\n", dev);
	return 0;
}

static void __exit kverbs_exit(void)
{
	ib_unregister_client(&kverbs_client);
}

module_init(kverbs_init);
module_exit(kverbs_exit);
MODULE_DESCRIPTION("rrxe test: kernel verbs consumer");
MODULE_LICENSE("GPL");
