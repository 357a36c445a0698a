/*
 * cloop: the practical limit for bench/vs-fio.sh. The same system calls as fsbench's psync
 * engine and fio's psync engine (open, pread/pwrite at the same offset pattern, optional fsync,
 * close) in the tightest loop C allows: no per-op clock read, no statistics, no progress counter.
 * Only the total wall time is measured, from the release of all threads (before open) to the
 * last thread's close(), as fsbench times its phases.
 *
 * Usage: cloop MODE PATH FILE_SIZE BS OFFSET ALIGN THREADS BYTES_PER_THREAD [FLAGS]
 *   MODE      read | write
 *   OFFSET    seq | rand      (seq: each thread reads/writes its 1/THREADS share of the file,
 *                              wrapping around at its end, like fsbench on a shared file)
 *   ALIGN     alignment of random offsets in bytes (random offset in [0, FILE_SIZE-BS])
 *   FLAGS     comma-separated: create, trunc, dsync, fsync_end (or "-" for none);
 *             clock_per_op adds one clock_gettime(CLOCK_MONOTONIC) per op (what fsbench's hot
 *             loop does for its latency histogram), to measure that cost alone;
 *             raw_syscall calls syscall(SYS_pread64/SYS_pwrite64) instead of glibc's pread/pwrite,
 *             whose cancellation-point bookkeeping Rust's rustix (fsbench) does not have
 * Prints one JSON object: {"ops":..,"bytes":..,"wall_s":..}.
 *
 * Built by bench/vs-fio.sh with gcc -O2 -pthread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int is_write, is_rand, oflags, fsync_end, clock_per_op, raw_syscall;
static const char *path;
static uint64_t file_size, bs, align_, per_thread;
static int threads;
static pthread_barrier_t barrier;
static struct timespec t_start[64], t_end[64];
static uint64_t done_ops[64], done_bytes[64];

/* wyrand, the generator fastrand (fsbench) uses: one multiply per draw. */
static inline uint64_t wyrand(uint64_t *s)
{
	*s += 0xa0761d6478bd642fULL;
	__uint128_t t = (__uint128_t)*s * (*s ^ 0xe7037ed1a0b428dbULL);
	return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

static void die(const char *what)
{
	fprintf(stderr, "cloop: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *worker(void *arg)
{
	int k = (int)(intptr_t)arg;
	uint64_t rng = 0x5eed0000ULL + (uint64_t)k * 0x9e3779b97f4a7c15ULL;
	uint64_t region = file_size / threads;
	uint64_t region_start = region * k;
	if (k == threads - 1)
		region = file_size - region_start;
	uint64_t slots = (file_size - bs) / align_ + 1;
	uint64_t nops = per_thread / bs;
	/* Write data: a random pool with a window moving by 4 KiB per write (as fsbench). */
	size_t pool_len = bs + (1 << 20);
	char *buf;
	if (posix_memalign((void **)&buf, 4096, pool_len))
		die("posix_memalign");
	for (size_t i = 0; i < pool_len; i += 8) {
		uint64_t r = wyrand(&rng);
		memcpy(buf + i, &r, 8);
	}
	size_t win = 0;
	uint64_t seq = 0, bytes = 0, ops = 0, lat_sum = 0;
	struct timespec prev = {0, 0}, now;

	pthread_barrier_wait(&barrier);
	clock_gettime(CLOCK_MONOTONIC, &t_start[k]);
	int fd = open(path, oflags, 0644);
	if (fd < 0)
		die("open");
	for (uint64_t i = 0; i < nops; i++) {
		uint64_t off;
		if (is_rand) {
			off = (uint64_t)(((__uint128_t)wyrand(&rng) * slots) >> 64) * align_;
		} else {
			off = region_start + seq;
			seq += bs;
			if (seq + bs > region)
				seq = 0;
		}
		ssize_t n;
		if (raw_syscall) {
			n = syscall(is_write ? SYS_pwrite64 : SYS_pread64, fd, is_write ? buf + win : buf,
				    bs, off);
			if (is_write) {
				win += 4096;
				if (win + bs > pool_len)
					win = 0;
			}
		} else if (is_write) {
			n = pwrite(fd, buf + win, bs, off);
			win += 4096;
			if (win + bs > pool_len)
				win = 0;
		} else {
			n = pread(fd, buf, bs, off);
		}
		if (n <= 0)
			die(is_write ? "pwrite" : "pread");
		bytes += n;
		ops++;
		if (clock_per_op) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			lat_sum += (now.tv_sec - prev.tv_sec) * 1000000000ULL + now.tv_nsec - prev.tv_nsec;
			prev = now;
		}
	}
	if (lat_sum == 1) /* keep the clock reads observable */
		fprintf(stderr, "%llu\n", (unsigned long long)lat_sum);
	if (fsync_end && fsync(fd))
		die("fsync");
	if (close(fd))
		die("close");
	clock_gettime(CLOCK_MONOTONIC, &t_end[k]);
	done_ops[k] = ops;
	done_bytes[k] = bytes;
	free(buf);
	return NULL;
}

static double ts(struct timespec t) { return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv)
{
	if (argc < 9 || argc > 10) {
		fprintf(stderr, "usage: cloop read|write PATH FILE_SIZE BS seq|rand ALIGN THREADS BYTES_PER_THREAD [create,trunc,dsync,fsync_end]\n");
		return 2;
	}
	is_write = strcmp(argv[1], "write") == 0;
	path = argv[2];
	file_size = strtoull(argv[3], NULL, 10);
	bs = strtoull(argv[4], NULL, 10);
	is_rand = strcmp(argv[5], "rand") == 0;
	align_ = strtoull(argv[6], NULL, 10);
	threads = atoi(argv[7]);
	per_thread = strtoull(argv[8], NULL, 10);
	if (!bs || !align_ || threads < 1 || threads > 64 || bs > file_size) {
		fprintf(stderr, "cloop: bad arguments\n");
		return 2;
	}
	oflags = is_write ? O_RDWR : O_RDONLY;
	if (argc == 10) {
		char *save, *tok;
		for (tok = strtok_r(argv[9], ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "create"))
				oflags |= O_CREAT;
			else if (!strcmp(tok, "trunc"))
				oflags |= O_TRUNC;
			else if (!strcmp(tok, "dsync"))
				oflags |= O_DSYNC;
			else if (!strcmp(tok, "fsync_end"))
				fsync_end = 1;
			else if (!strcmp(tok, "clock_per_op"))
				clock_per_op = 1;
			else if (!strcmp(tok, "raw_syscall"))
				raw_syscall = 1;
			else if (strcmp(tok, "-")) {
				fprintf(stderr, "cloop: unknown flag %s\n", tok);
				return 2;
			}
		}
	}
	pthread_t th[64];
	pthread_barrier_init(&barrier, NULL, threads);
	for (int k = 0; k < threads; k++)
		if (pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k))
			die("pthread_create");
	for (int k = 0; k < threads; k++)
		pthread_join(th[k], NULL);
	double s = ts(t_start[0]), e = ts(t_end[0]);
	uint64_t ops = 0, bytes = 0;
	for (int k = 0; k < threads; k++) {
		if (ts(t_start[k]) < s)
			s = ts(t_start[k]);
		if (ts(t_end[k]) > e)
			e = ts(t_end[k]);
		ops += done_ops[k];
		bytes += done_bytes[k];
	}
	printf("{\"ops\":%llu,\"bytes\":%llu,\"wall_s\":%.9f}\n", (unsigned long long)ops,
	       (unsigned long long)bytes, e - s);
	return 0;
}
