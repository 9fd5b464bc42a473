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
 */
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

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
	void *buf;
};

/* Polls until @want completions arrived or about a second passed. */
static int poll_n(struct ib_cq *cq, struct ib_wc *wc, int want)
{
	int got = 0, tries;

	for (tries = 0; tries < 100 && got < want; tries++) {
		int n = ib_poll_cq(cq, want - got, wc + got);

		if (n < 0)
			return n;
		got += n;
		if (got < want)
			msleep(10);
	}
	return got;
}

static void fill_av(struct env *e, struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_ah_flags(ah, IB_AH_GRH);
	rdma_ah_set_grh(ah, &e->gid, 0, 1, 64, 0);
}

static int to_init(struct ib_qp *qp, bool rc)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1, .pkey_index = 0,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE, .qkey = 0x11111111,
	};

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PORT | IB_QP_PKEY_INDEX |
			    (rc ? IB_QP_ACCESS_FLAGS : IB_QP_QKEY));
}

static int rc_to_rts(struct env *e, struct ib_qp *qp)
{
	struct ib_qp_attr a = {};
	int ret = to_init(qp, true);

	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = qp->qp_num;
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

static struct ib_qp *make_qp(struct env *e, enum ib_qp_type type,
			     struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.qp_type = type, .send_cq = e->cq, .recv_cq = e->cq, .srq = srq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 2, .max_recv_sge = srq ? 0 : 2,
			 .max_inline_data = 64 },
	};

	return ib_create_qp(e->pd, &init);
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

static void run(struct ib_device *ibdev)
{
	struct env e = { .ibdev = ibdev };
	int ret;

	e.buf = kzalloc(8 * PAGE_SIZE, GFP_KERNEL);
	ret = rdma_query_gid(e.ibdev, 1, 1, &e.gid);
	CHECK(e.buf && !ret, "GID 1 of %s", dev);
	e.pd = ib_alloc_pd(e.ibdev, 0);
	CHECK(!IS_ERR(e.pd), "alloc PD");
	if (IS_ERR(e.pd))
		goto out;
	e.cq = ib_alloc_cq(e.ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(e.cq), "alloc CQ (%ld)", (long)PTR_ERR_OR_ZERO(e.cq));
	if (!IS_ERR(e.cq) && e.buf) {
		test_flush(&e);
		test_send(&e);
		test_fast_reg(&e);
		test_ud_ah_srq(&e);
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
