// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_mcast: the multicast verbs (ibv_attach_mcast, ibv_detach_mcast) of
 * one device, case by case, for tools/testing/vm/16-multicast.sh, which
 * runs it on rdma_rxe and on rrxe and compares the answers.
 *
 *   rrxe_mcast -d DEV [-n NETDEV] [-x]
 *
 * Prints one line per case, "case NAME: RESULT", RESULT being "ok" or the
 * errno's name, and, with -n, which link-layer multicast addresses of
 * NETDEV (from /proc/net/dev_mcast) the groups joined: "maddr NAME: HEX
 * ..." (the script knows what each driver joins). With -x the process
 * exits with QPs still attached, leaving the cleanup to the kernel.
 * Exit status 0 unless the device cannot be used at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define GROUP_QPS 56 /* max_mcast_qp_attach of both drivers */

static const char *errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSYS: return "ENOSYS";
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	default: return "other";
	}
}

static void report(const char *name, int ret)
{
	/* libibverbs returns the errno (positive), or -1 with errno set. */
	if (ret < 0)
		ret = errno;
	printf("case %s: %s\n", name, errname(ret));
	fflush(stdout);
}

/* An IPv4-mapped GID for a.b.c.d. */
static union ibv_gid v4gid(int a, int b, int c, int d)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[10] = 0xff;
	g.raw[11] = 0xff;
	g.raw[12] = a;
	g.raw[13] = b;
	g.raw[14] = c;
	g.raw[15] = d;
	return g;
}

/* An IPv6 multicast GID ff0e::db8:N. */
static union ibv_gid v6gid(int n)
{
	union ibv_gid g;

	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xff;
	g.raw[1] = 0x0e;
	g.raw[12] = 0x0d;
	g.raw[13] = 0xb8;
	g.raw[15] = n;
	return g;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};

	return ibv_create_qp(pd, &init);
}

/* Prints NETDEV's multicast link addresses found in /proc/net/dev_mcast. */
static void show_maddrs(const char *label, const char *netdev)
{
	char line[256], name[64], addr[64];
	int idx, users, global;
	FILE *f;

	if (!netdev)
		return;
	f = fopen("/proc/net/dev_mcast", "r");
	printf("maddr %s:", label);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %63s %d %d %63s", &idx, name, &users,
			   &global, addr) == 5 && !strcmp(name, netdev))
			printf(" %s", addr);
	}
	printf("\n");
	fflush(stdout);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *netdev = NULL;
	struct ibv_qp *ud[GROUP_QPS + 1], *ud2, *rc;
	union ibv_gid g1 = v4gid(239, 1, 2, 3), g2 = v6gid(1);
	union ibv_gid g3 = v4gid(239, 1, 2, 4), uc = v4gid(198, 18, 0, 9);
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int exit_attached = 0, opt, i, n, ret;

	while ((opt = getopt(argc, argv, "d:n:x")) != -1) {
		switch (opt) {
		case 'd': devname = optarg; break;
		case 'n': netdev = optarg; break;
		case 'x': exit_attached = 1; break;
		default:
			fprintf(stderr, "usage: %s -d DEV [-n NETDEV] [-x]\n", argv[0]);
			return 2;
		}
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (devname && !strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "rrxe_mcast: cannot open %s\n", devname ? devname : "(no -d)");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "rrxe_mcast: no PD or CQ\n");
		return 1;
	}
	for (i = 0; i <= GROUP_QPS; i++) {
		ud[i] = make_qp(pd, cq, IBV_QPT_UD);
		if (!ud[i]) {
			fprintf(stderr, "rrxe_mcast: cannot create UD QP %d\n", i);
			return 1;
		}
	}
	ud2 = ud[1];
	rc = make_qp(pd, cq, IBV_QPT_RC);
	if (!rc) {
		fprintf(stderr, "rrxe_mcast: cannot create an RC QP\n");
		return 1;
	}

	show_maddrs("before", netdev);
	report("attach_ud_v4", ibv_attach_mcast(ud[0], &g1, 0));
	report("attach_ud_v4_again", ibv_attach_mcast(ud[0], &g1, 0));
	report("attach_ud_v6", ibv_attach_mcast(ud[0], &g2, 0));
	show_maddrs("attached", netdev);
	report("attach_rc", ibv_attach_mcast(rc, &g1, 0));
	report("attach_unicast_gid", ibv_attach_mcast(ud[0], &uc, 0));
	report("detach_unknown_group", ibv_detach_mcast(ud[0], &g3, 0));
	report("detach_not_attached_qp", ibv_detach_mcast(ud2, &g1, 0));
	report("detach_rc", ibv_detach_mcast(rc, &g1, 0));
	report("destroy_attached_qp", ibv_destroy_qp(ud[0]));

	/* Fill the group: the QP past max_mcast_qp_attach is refused. */
	for (i = 1, ret = 0; i < GROUP_QPS && !ret; i++)
		ret = ibv_attach_mcast(ud[i], &g1, 0);
	report("attach_56_qps", ret);
	report("attach_57th_qp", ibv_attach_mcast(ud[GROUP_QPS], &g1, 0));
	for (i = 1, ret = 0; i < GROUP_QPS && !ret; i++)
		ret = ibv_detach_mcast(ud[i], &g1, 0);
	report("detach_55_qps", ret);

	report("detach_ud_v6", ibv_detach_mcast(ud[0], &g2, 0));
	report("detach_ud_v6_again", ibv_detach_mcast(ud[0], &g2, 0));
	if (exit_attached) {
		/* The kernel detaches (uverbs) and the driver cleans up. */
		printf("exiting with ud[0] attached to 239.1.2.3\n");
		return 0;
	}
	report("detach_ud_v4", ibv_detach_mcast(ud[0], &g1, 0));
	show_maddrs("detached", netdev);
	report("destroy_detached_qp", ibv_destroy_qp(ud[0]));
	report("reattach_after_empty", ibv_attach_mcast(ud2, &g1, 0));
	report("detach_reattached", ibv_detach_mcast(ud2, &g1, 0));

	for (i = 1; i <= GROUP_QPS; i++)
		ibv_destroy_qp(ud[i]);
	ibv_destroy_qp(rc);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
