// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_mccm: UD multicast traffic through rdma_cm, every byte checked, for
 * tools/testing/vm/16-multicast.sh.
 *
 *   receiver: rrxe_mccm -b BIND_IP -m GROUP [-c COUNT] [-S SIZE] [-t SECS]
 *   sender:   rrxe_mccm -b BIND_IP -m GROUP -s [-c COUNT] [-S SIZE] [-t SECS]
 *
 * Both join GROUP (rdma_join_multicast) on the device that owns BIND_IP.
 * The receiver posts COUNT receives first, prints "joined" once the join
 * completed, then waits for COUNT messages and checks each one (status,
 * length with the 40-byte GRH, immediate data = message number, bytes
 * derived from the message number) and prints "received N ok". The sender
 * sends COUNT messages to the group (destination QPN 0xffffff, the group's
 * Q_Key), each signaled and completed before the next (mckey posts them
 * unsignaled and destroys its QP at once, which loses sends on rdma_rxe),
 * and prints "sent N". Exit 0 on success, 1 on an error, 3 on a timeout.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define GRH 40

static int timeout_s = 30;
static time_t deadline;

static void die(int code, const char *what)
{
	printf("rrxe_mccm: %s\n", what);
	fflush(stdout);
	exit(code);
}

static void get_addr(const char *s, struct sockaddr_storage *ss)
{
	struct addrinfo *res;

	if (getaddrinfo(s, NULL, NULL, &res))
		die(1, "bad address");
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

/* Waits for the next rdma_cm event, which must be `want`. */
static void expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
			 struct rdma_ud_param *ud)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	char msg[128];

	if (poll(&p, 1, timeout_s * 1000) <= 0)
		die(3, "timed out waiting for an rdma_cm event");
	if (rdma_get_cm_event(ch, &ev))
		die(1, "rdma_get_cm_event failed");
	if (ev->event != want) {
		snprintf(msg, sizeof(msg), "got %s (status %d), wanted %s",
			 rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		die(1, msg);
	}
	if (ud)
		*ud = ev->param.ud;
	rdma_ack_cm_event(ev);
}

static unsigned char pattern(int msg, int i)
{
	return (unsigned char)(msg * 31 + i * 7 + 1);
}

/* One completion, or exit on a timeout. */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			die(1, "ibv_poll_cq failed");
		if (n == 1)
			return;
		if (time(NULL) > deadline)
			die(3, "timed out waiting for a completion");
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	const char *bind_ip = NULL, *group = NULL;
	int sender = 0, count = 5, size = 256, opt, i, k;
	struct sockaddr_storage src, dst;
	struct rdma_event_channel *ch;
	struct ibv_qp_init_attr qpa;
	struct rdma_ud_param ud;
	struct rdma_cm_id *id;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	char msg[160];

	while ((opt = getopt(argc, argv, "b:m:sc:S:t:")) != -1) {
		switch (opt) {
		case 'b': bind_ip = optarg; break;
		case 'm': group = optarg; break;
		case 's': sender = 1; break;
		case 'c': count = atoi(optarg); break;
		case 'S': size = atoi(optarg); break;
		case 't': timeout_s = atoi(optarg); break;
		default: die(1, "usage: rrxe_mccm -b BIND_IP -m GROUP [-s] [-c COUNT] [-S SIZE] [-t SECS]");
		}
	}
	if (!bind_ip || !group || count < 1 || size < 1 || size > 1024)
		die(1, "usage: rrxe_mccm -b BIND_IP -m GROUP [-s] [-c COUNT] [-S SIZE] [-t SECS]");
	deadline = time(NULL) + timeout_s;
	get_addr(bind_ip, &src);
	get_addr(group, &dst);

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_UDP))
		die(1, "rdma_create_id failed");
	if (rdma_bind_addr(id, (struct sockaddr *)&src))
		die(1, "rdma_bind_addr failed");
	if (rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000))
		die(1, "rdma_resolve_addr failed");
	expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);

	pd = ibv_alloc_pd(id->verbs);
	cq = pd ? ibv_create_cq(id->verbs, 2 * count, NULL, NULL, 0) : NULL;
	if (!cq)
		die(1, "no PD or CQ");
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = cq;
	qpa.recv_cq = cq;
	qpa.qp_type = IBV_QPT_UD;
	qpa.cap.max_send_wr = 1;
	qpa.cap.max_recv_wr = count;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pd, &qpa))
		die(1, "rdma_create_qp failed");
	buf = calloc(count, size + GRH);
	mr = buf ? ibv_reg_mr(pd, buf, (size_t)count * (size + GRH), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		die(1, "no MR");

	if (!sender) {
		for (k = 0; k < count; k++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)buf + (size_t)k * (size + GRH),
				.length = size + GRH, .lkey = mr->lkey,
			};
			struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;

			if (ibv_post_recv(id->qp, &wr, &bad))
				die(1, "ibv_post_recv failed");
		}
	}
	if (rdma_join_multicast(id, (struct sockaddr *)&dst, NULL))
		die(1, "rdma_join_multicast failed");
	expect_event(ch, RDMA_CM_EVENT_MULTICAST_JOIN, &ud);
	printf("joined qpn 0x%x qkey 0x%x\n", ud.qp_num, ud.qkey);
	fflush(stdout);

	if (sender) {
		ah = ibv_create_ah(pd, &ud.ah_attr);
		if (!ah)
			die(1, "ibv_create_ah failed");
		for (k = 0; k < count; k++) {
			struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = size, .lkey = mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = k, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl(k),
			}, *bad;

			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = ud.qp_num;
			wr.wr.ud.remote_qkey = ud.qkey;
			for (i = 0; i < size; i++)
				buf[i] = pattern(k, i);
			if (ibv_post_send(id->qp, &wr, &bad))
				die(1, "ibv_post_send failed");
			poll_one(cq, &wc);
			if (wc.status != IBV_WC_SUCCESS) {
				snprintf(msg, sizeof(msg), "send %d: %s", k, ibv_wc_status_str(wc.status));
				die(1, msg);
			}
		}
		printf("sent %d\n", count);
	} else {
		for (k = 0; k < count; k++) {
			unsigned char *p;
			int m;

			poll_one(cq, &wc);
			if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) {
				snprintf(msg, sizeof(msg), "receive %d: %s", k, ibv_wc_status_str(wc.status));
				die(1, msg);
			}
			m = ntohl(wc.imm_data);
			if (!(wc.wc_flags & IBV_WC_WITH_IMM) || m < 0 || m >= count ||
			    wc.byte_len != (unsigned int)(size + GRH) || !(wc.wc_flags & IBV_WC_GRH)) {
				snprintf(msg, sizeof(msg), "receive %d: flags 0x%x imm %d len %u",
					 k, wc.wc_flags, m, wc.byte_len);
				die(1, msg);
			}
			p = buf + (size_t)wc.wr_id * (size + GRH) + GRH;
			for (i = 0; i < size; i++) {
				if (p[i] != pattern(m, i)) {
					snprintf(msg, sizeof(msg), "message %d byte %d: 0x%02x, expected 0x%02x",
						 m, i, p[i], pattern(m, i));
					die(1, msg);
				}
			}
		}
		printf("received %d ok\n", count);
	}
	fflush(stdout);
	rdma_leave_multicast(id, (struct sockaddr *)&dst);
	if (ah)
		ibv_destroy_ah(ah);
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	free(buf);
	return 0;
}
