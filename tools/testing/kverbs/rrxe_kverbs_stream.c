// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel consumer that dies mid-flight, for 17-kill-storm.sh: loaded with
 * devs=DEV1,DEV2 it connects an RC QP on each device to the other's (across
 * whatever wire joins their netdevs) and streams as a storage ULP does:
 * fast registration of each side's buffer (REG_MR), then RDMA WRITE and READ
 * through the peer's rkey and SEND/RECV, several work requests outstanding.
 * Unloading it (or removing either device) stops the stream without waiting
 * for what is in flight and destroys everything: the kernel's equivalent of
 * a process killed during its traffic.
 *
 * It logs "kverbs-stream: started ..." once both QPs are connected and
 * "kverbs-stream: stopped after N rounds (M errors)" when it ends. Errors
 * (a completion in error, a post refused) end the stream early; they are
 * counted, not checked: the storm judges the kernel log and what is left.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

static char *devs = "rrxe1,rrxe2";
module_param(devs, charp, 0444);
MODULE_PARM_DESC(devs, "the two devices to stream between, DEV1,DEV2");

#define STREAM_PAGES 16
#define STREAM_CHUNK (4 * PAGE_SIZE)
#define STREAM_DEPTH 16	/* send queue depth; at most half of it posted */
#define STREAM_RECVS 8
#define RECV_ID 1000		/* receives' work request IDs start here */
#define STREAM_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		       IB_ACCESS_REMOTE_READ)

/* One end of the stream: a device and what the stream holds on it. */
struct side {
	struct ib_device *ibdev;
	char name[IB_DEVICE_NAME_MAX];
	union ib_gid gid;
	int gid_index;
	u8 mac[ETH_ALEN];	/* the GID's netdev's */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;	/* the fast MR over buf, the peer's target */
	u8 *buf;
	struct scatterlist sg[STREAM_PAGES];
	bool mapped;
	int outstanding;	/* signaled sends not completed yet */
};

/*
 * The stream. Both sides are found by the client's add callback; the thread
 * runs while both devices are registered and the module is loaded.
 */
static struct {
	struct mutex lock;	/* sides' devices and the thread */
	struct side side[2];
	struct task_struct *task;
	unsigned long rounds, errors;
} st;

/* The device's RoCEv2 IPv4-mapped GID (its index) and its netdev's MAC. */
static int roce_v2_ipv4_gid(struct side *s)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int i;

	for (i = 0; i < 64; i++) {
		attr = rdma_get_gid_attr(s->ibdev, 1, i);
		if (IS_ERR(attr)) {
			if (PTR_ERR(attr) == -EINVAL)
				break;
			continue;
		}
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw)) {
			s->gid = attr->gid;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				ether_addr_copy(s->mac, ndev->dev_addr);
			rcu_read_unlock();
			rdma_put_gid_attr(attr);
			return i;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

/* RESET to RTS, @s's QP connected to @peer's. */
static int connect_to(struct side *s, struct side *peer)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = STREAM_ACCESS,
	};
	struct rdma_ah_attr *ah = &a.ah_attr;
	int ret;

	ret = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_PORT |
			   IB_QP_PKEY_INDEX | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_ah_flags(ah, IB_AH_GRH);
	rdma_ah_set_grh(ah, &peer->gid, 0, s->gid_index, 64, 0);
	/* Kernel callers resolve the destination MAC themselves. */
	memcpy(ah->roce.dmac, peer->mac, ETH_ALEN);
	ret = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 10;		/* 4 ms: keep the retransmit timer busy */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static int alloc_side(struct side *s)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = STREAM_DEPTH, .max_recv_wr = STREAM_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i;

	s->gid_index = roce_v2_ipv4_gid(s);
	if (s->gid_index < 0)
		return s->gid_index;
	s->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(STREAM_PAGES * PAGE_SIZE));
	if (!s->buf)
		return -ENOMEM;
	sg_init_table(s->sg, STREAM_PAGES);
	for (i = 0; i < STREAM_PAGES; i++)
		sg_set_buf(&s->sg[i], s->buf + i * PAGE_SIZE, PAGE_SIZE);
	s->mapped = ib_dma_map_sg(s->ibdev, s->sg, STREAM_PAGES,
				  DMA_BIDIRECTIONAL) == STREAM_PAGES;
	if (!s->mapped)
		return -ENOMEM;
	s->pd = ib_alloc_pd(s->ibdev, 0);
	if (IS_ERR(s->pd))
		return PTR_ERR(s->pd);
	s->cq = ib_alloc_cq(s->ibdev, NULL, 2 * (STREAM_DEPTH + STREAM_RECVS),
			    0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return PTR_ERR(s->cq);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ib_create_qp(s->pd, &init);
	if (IS_ERR(s->qp))
		return PTR_ERR(s->qp);
	s->mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, STREAM_PAGES);
	return PTR_ERR_OR_ZERO(s->mr);
}

/* Destroys what alloc_side() made, whatever is still in flight. */
static void free_side(struct side *s)
{
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (!IS_ERR_OR_NULL(s->mr))
		ib_dereg_mr(s->mr);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	if (s->mapped)
		ib_dma_unmap_sg(s->ibdev, s->sg, STREAM_PAGES, DMA_BIDIRECTIONAL);
	if (s->buf)
		free_pages((unsigned long)s->buf, get_order(STREAM_PAGES * PAGE_SIZE));
	s->qp = NULL;
	s->mr = NULL;
	s->cq = NULL;
	s->pd = NULL;
	s->buf = NULL;
	s->mapped = false;
	s->outstanding = 0;
}

static int post_send(struct side *s, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;
	int ret;

	wr->send_flags |= IB_SEND_SIGNALED;
	ret = ib_post_send(s->qp, wr, &bad);
	if (!ret)
		s->outstanding++;
	return ret;
}

static int post_recv(struct side *s, u64 id)
{
	struct ib_sge sge = {
		.addr = sg_dma_address(&s->sg[STREAM_PAGES - 1]),
		.length = PAGE_SIZE, .lkey = s->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(s->qp, &wr, &bad);
}

/* Registers @s's buffer in its fast MR (REG_MR on its own QP). */
static int register_buf(struct side *s)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 1, .opcode = IB_WR_REG_MR },
		.mr = s->mr, .access = STREAM_ACCESS,
	};

	if (ib_map_mr_sg(s->mr, s->sg, STREAM_PAGES, NULL, PAGE_SIZE) != STREAM_PAGES)
		return -EINVAL;
	reg.key = s->mr->rkey;
	return post_send(s, &reg.wr);
}

/* @s's RDMA @op of one chunk to or from @peer's registered buffer. */
static int post_rdma(struct side *s, struct side *peer, enum ib_wr_opcode op,
		     unsigned long round)
{
	u32 off = (round % (STREAM_PAGES / 4 - 1)) * STREAM_CHUNK;
	struct ib_sge sge = {
		.addr = sg_dma_address(&s->sg[0]) + off, .length = STREAM_CHUNK,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = op, .opcode = op, .sg_list = &sge, .num_sge = 1 },
		.remote_addr = peer->mr->iova + off, .rkey = peer->mr->rkey,
	};

	return post_send(s, &wr.wr);
}

static int post_msg(struct side *s)
{
	struct ib_sge sge = {
		.addr = sg_dma_address(&s->sg[0]), .length = 512,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 3, .opcode = IB_WR_SEND, .sg_list = &sge, .num_sge = 1,
	};

	return post_send(s, &wr);
}

/*
 * Reaps @s's completions, reposting a receive for each received message.
 * Returns how many were in error, or a negative error.
 */
static int reap(struct side *s)
{
	struct ib_wc wc[8];
	int n, i, bad = 0;

	while ((n = ib_poll_cq(s->cq, ARRAY_SIZE(wc), wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IB_WC_SUCCESS)
				bad++;
			/* A flushed completion's opcode is undefined. */
			if (wc[i].wr_id >= RECV_ID) {
				if (wc[i].status == IB_WC_SUCCESS &&
				    post_recv(s, wc[i].wr_id))
					bad++;
			} else {
				s->outstanding--;
			}
		}
	}
	return n < 0 ? n : bad;
}

/* One round: A writes, reads and sends to B, B sends to A; then reaps. */
static int stream_round(struct side *a, struct side *b, unsigned long round)
{
	int ret = 0, bad;

	if (a->outstanding <= STREAM_DEPTH / 2 - 3) {
		ret = post_rdma(a, b, IB_WR_RDMA_WRITE, round) ?:
		      post_rdma(a, b, IB_WR_RDMA_READ, round) ?:
		      post_msg(a);
	}
	if (!ret && b->outstanding < STREAM_DEPTH / 2)
		ret = post_msg(b);
	if (ret)
		return ret;
	bad = reap(a);
	if (bad)
		return bad < 0 ? bad : -EIO;
	bad = reap(b);
	return bad ? (bad < 0 ? bad : -EIO) : 0;
}

static int stream_setup(void)
{
	struct side *a = &st.side[0], *b = &st.side[1];
	int ret, i, j;

	ret = alloc_side(a) ?: alloc_side(b) ?:
	      connect_to(a, b) ?: connect_to(b, a);
	if (ret)
		return ret;
	for (i = 0; i < 2; i++)
		for (j = 0; j < STREAM_RECVS; j++) {
			ret = post_recv(&st.side[i], RECV_ID + j);
			if (ret)
				return ret;
		}
	ret = register_buf(a) ?: register_buf(b);
	/* The peer's WRITEs must not overtake its registration. */
	for (i = 0; !ret && i < 500 && (a->outstanding || b->outstanding); i++) {
		ret = reap(a) ?: reap(b);
		msleep(10);
	}
	return ret ?: (a->outstanding || b->outstanding ? -ETIMEDOUT : 0);
}

static int stream_thread(void *unused)
{
	int ret = stream_setup();

	if (ret)
		pr_info("kverbs-stream: setup failed (%d)\n", ret);
	else
		pr_info("kverbs-stream: started %s QP %#x <-> %s QP %#x\n",
			st.side[0].name, st.side[0].qp->qp_num,
			st.side[1].name, st.side[1].qp->qp_num);
	while (!ret && !kthread_should_stop()) {
		ret = stream_round(&st.side[0], &st.side[1], st.rounds);
		if (ret)
			st.errors++;
		else
			st.rounds++;
		usleep_range(200, 1000);
	}
	/* An error ends the traffic; wait for the stop all the same. */
	while (!kthread_should_stop())
		msleep(20);
	return ret;
}

/* With st.lock held: stops the thread and destroys the stream. */
static void stream_stop(void)
{
	if (!st.task)
		return;
	kthread_stop(st.task);
	put_task_struct(st.task);
	st.task = NULL;
	free_side(&st.side[0]);
	free_side(&st.side[1]);
	pr_info("kverbs-stream: stopped after %lu rounds (%lu errors)\n",
		st.rounds, st.errors);
}

static int stream_add(struct ib_device *ibdev)
{
	const char *name = dev_name(&ibdev->dev);
	const char *comma = strchr(devs, ',');
	int i = -1;

	if (!comma)
		return -EINVAL;
	if (strlen(name) == comma - devs && !strncmp(name, devs, comma - devs))
		i = 0;
	else if (!strcmp(name, comma + 1))
		i = 1;
	if (i < 0)
		return -EOPNOTSUPP;
	mutex_lock(&st.lock);
	st.side[i].ibdev = ibdev;
	strscpy(st.side[i].name, name);
	if (st.side[0].ibdev && st.side[1].ibdev && !st.task) {
		st.task = kthread_run(stream_thread, NULL, "kverbs-stream");
		if (IS_ERR(st.task))
			st.task = NULL;
		else
			get_task_struct(st.task);
	}
	mutex_unlock(&st.lock);
	return 0;
}

static void stream_remove(struct ib_device *ibdev, void *data)
{
	int i;

	mutex_lock(&st.lock);
	stream_stop();
	for (i = 0; i < 2; i++)
		if (st.side[i].ibdev == ibdev)
			st.side[i].ibdev = NULL;
	mutex_unlock(&st.lock);
}

static struct ib_client stream_client = {
	.name = "rrxe_kverbs_stream",
	.add = stream_add,
	.remove = stream_remove,
};

static int __init stream_init(void)
{
	mutex_init(&st.lock);
	return ib_register_client(&stream_client);
}

static void __exit stream_exit(void)
{
	ib_unregister_client(&stream_client);
}

module_init(stream_init);
module_exit(stream_exit);
MODULE_DESCRIPTION("rrxe test: a kernel consumer streaming RC traffic until unloaded");
MODULE_LICENSE("GPL");
