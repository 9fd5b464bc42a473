// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_mpi: two MPI ranks checking what they exchange, for
 * tools/testing/vm/23-userspace-stacks.sh (Open MPI over UCX, ob1/tcp as
 * the control), one rank per host.
 *
 *   mpirun -n 2 ... rrxe_mpi
 *
 * Steps, each reported by rank 0 on a line of its own:
 *   - "hosts": the processor names of both ranks (they must differ: one
 *     rank per host);
 *   - "pingpong SIZE": ITERS round trips of SIZE bytes (1, 4096 and
 *     1048576), rank 0 sending a pattern that depends on the iteration
 *     and the sender, rank 1 checking it and answering with its own,
 *     which rank 0 checks; the mismatched bytes of both sides and the
 *     average round trip;
 *   - "allreduce COUNT": MPI_Allreduce (MPI_SUM) of COUNT 64-bit integers
 *     (1 and 65536), rank r contributing (r + 1) * i + r at index i, the
 *     result checked by both ranks against the sum.
 * A step's line says "ok" or how many values each rank found wrong; each
 * rank describes its first wrong value of the step on stderr. The last
 * line is "rrxe_mpi: ok" or "rrxe_mpi: FAILED": rank 0 exits 1 after any
 * mismatch, rank 1 after one of its own (and mpirun with them).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define TAG_DATA 1
#define TAG_COUNT 2
#define TAG_NAME 3

static int rank;

/* The byte at OFF of the buffer FROM sends in iteration ITER. */
static unsigned char pattern(size_t off, int iter, int from)
{
	return (unsigned char)(off * 131 + (off >> 8) * 7 + iter * 29 + from * 101 + 1);
}

static void fill(unsigned char *buf, size_t len, int iter, int from)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(i, iter, from);
}

/* A step's first bad value. */
struct first {
	long at; /* -1: none yet */
	int iter;
	unsigned got;
};

/*
 * The bytes of BUF that are not FROM's pattern of ITER; the first one, if
 * F has none yet, in F.
 */
static long check(const unsigned char *buf, size_t len, int iter, int from, struct first *f)
{
	long bad = 0;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] == pattern(i, iter, from))
			continue;
		if (f->at < 0) {
			f->at = (long)i;
			f->iter = iter;
			f->got = buf[i];
		}
		bad++;
	}
	return bad;
}

/* Rank 1's count of bad values, to rank 0. */
static long peer_count(long mine)
{
	long peer = 0;

	if (rank == 1)
		MPI_Send(&mine, 1, MPI_LONG, 0, TAG_COUNT, MPI_COMM_WORLD);
	else
		MPI_Recv(&peer, 1, MPI_LONG, 1, TAG_COUNT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return peer;
}

static long pingpong(size_t len, int iters)
{
	unsigned char *buf = malloc(len);
	struct first f = { .at = -1 };
	long bad = 0, peer;
	double t0;

	if (!buf) {
		fprintf(stderr, "rank %d: no memory for %zu bytes\n", rank, len);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		if (rank == 0) {
			fill(buf, len, it, 0);
			MPI_Send(buf, (int)len, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += check(buf, len, it, 1, &f);
		} else {
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += check(buf, len, it, 0, &f);
			fill(buf, len, it, 1);
			MPI_Send(buf, (int)len, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
		}
	}
	t0 = MPI_Wtime() - t0;
	if (bad)
		fprintf(stderr, "rank %d: pingpong %zu: %ld bad bytes, the first at offset %ld of round trip %d: 0x%02x, not 0x%02x\n",
			rank, len, bad, f.at, f.iter, f.got, pattern((size_t)f.at, f.iter, !rank));
	peer = peer_count(bad);
	if (rank == 0) {
		if (!bad && !peer)
			printf("pingpong %zu: ok, %d round trips, %.1f us each, %.2f MB/s each way\n", len, iters,
			       t0 * 1e6 / iters, (double)len * iters / t0 / 1e6);
		else
			printf("pingpong %zu: %ld bad bytes on rank 0, %ld on rank 1\n", len, bad, peer);
		fflush(stdout);
	}
	free(buf);
	return bad + peer;
}

static long allreduce(int count)
{
	int64_t *in = malloc(count * sizeof(*in)), *out = malloc(count * sizeof(*out));
	long bad = 0, peer;
	int first = -1, size;

	if (!in || !out) {
		fprintf(stderr, "rank %d: no memory for %d values\n", rank, count);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < count; i++) {
		in[i] = (int64_t)(rank + 1) * i + rank;
		out[i] = -1;
	}
	MPI_Allreduce(in, out, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++) {
		/* The sum over r < size of (r + 1) * i + r. */
		int64_t want = (int64_t)size * (size + 1) / 2 * i + (int64_t)size * (size - 1) / 2;

		if (out[i] == want)
			continue;
		if (first < 0) {
			first = i;
			fprintf(stderr, "rank %d: allreduce %d: index %d is %" PRId64 ", not %" PRId64 "\n", rank, count,
				i, out[i], want);
		}
		bad++;
	}
	peer = peer_count(bad);
	if (rank == 0) {
		if (!bad && !peer)
			printf("allreduce %d: ok, sum of %d x int64\n", count, count);
		else
			printf("allreduce %d: %ld bad values on rank 0, %ld on rank 1\n", count, bad, peer);
		fflush(stdout);
	}
	free(in);
	free(out);
	return bad + peer;
}

int main(int argc, char **argv)
{
	static const struct {
		size_t len;
		int iters;
	} sizes[] = { { 1, 10 }, { 4096, 10 }, { 1 << 20, 3 } };
	char name[MPI_MAX_PROCESSOR_NAME] = "", peer[MPI_MAX_PROCESSOR_NAME] = "";
	int size, len;
	long bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "rrxe_mpi: wants 2 ranks, has %d\n", size);
		MPI_Finalize();
		return 2;
	}
	MPI_Get_processor_name(name, &len);
	if (rank == 1) {
		MPI_Send(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, TAG_NAME, MPI_COMM_WORLD);
	} else {
		MPI_Recv(peer, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, TAG_NAME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		peer[MPI_MAX_PROCESSOR_NAME - 1] = 0;
		printf("hosts: rank 0 on %s, rank 1 on %s\n", name, peer);
		fflush(stdout);
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bad += pingpong(sizes[i].len, sizes[i].iters);
	bad += allreduce(1);
	bad += allreduce(65536);
	if (rank == 0) {
		printf("rrxe_mpi: %s\n", bad ? "FAILED" : "ok");
		fflush(stdout);
	}
	MPI_Finalize();
	return bad ? 1 : 0;
}
