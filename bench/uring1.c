/*
 * uring1: the plainest io_uring loop at depth 1, to tell whether fsbench or fio is the odd one
 * on bench/uring-vs-fio.sh's depth-1 line. One thread: 4K O_DIRECT random reads of FILE,
 * aligned to 4K, one in flight, for SECONDS; raw system calls (no liburing), no clock read per
 * op, no statistics. Prints {"reads":..,"seconds":..,"iops":..,"cpu_us_per_read":..}.
 *
 * Usage: uring1 FILE SECONDS [MODE [MISALIGN]]
 *   MODE  one    submit and wait in one io_uring_enter (fsbench's default at depth 1)
 *         two    submit, then wait: two calls per read (fio's io_uring engine)
 *         fio    as two, with IORING_ENTER_GETEVENTS (min_complete 0) on the submission, as
 *                fio 3.33 calls it (strace)
 *   MISALIGN  bytes the buffer starts past a page boundary (default 0; 512 puts a 4K read
 *             across two pages)
 *   Rings are made as fio 3.33 and fsbench make them: SINGLE_ISSUER | DEFER_TASKRUN, falling
 *   back to COOP_TASKRUN, then none.
 *
 * Build: gcc -O2 -o uring1 bench/uring1.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int setup(unsigned entries, struct io_uring_params *p) {
    unsigned flags[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                        IORING_SETUP_COOP_TASKRUN, 0};
    for (int i = 0; i < 3; i++) {
        memset(p, 0, sizeof(*p));
        p->flags = flags[i];
        int fd = syscall(__NR_io_uring_setup, entries, p);
        if (fd >= 0) return fd;
    }
    return -1;
}

static int enter(int fd, unsigned submit, unsigned min, unsigned flags) {
    return syscall(__NR_io_uring_enter, fd, submit, min, flags, NULL, 0);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec +
           r.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: uring1 FILE SECONDS [one|two|fio [MISALIGN]]\n");
        return 2;
    }
    double seconds = atof(argv[2]);
    int two = argc > 3 && (strcmp(argv[3], "two") == 0 || strcmp(argv[3], "fio") == 0);
    /* fio 3.33's exact calls: the submission also carries IORING_ENTER_GETEVENTS (min 0). */
    unsigned submit_flags = argc > 3 && strcmp(argv[3], "fio") == 0 ? IORING_ENTER_GETEVENTS : 0;
    int file = open(argv[1], O_RDONLY | O_DIRECT);
    if (file < 0) { perror("open"); return 1; }
    struct stat st;
    fstat(file, &st);
    uint64_t blocks = st.st_size / 4096;
    void *page;
    if (posix_memalign(&page, 4096, 8192)) return 1;
    char *buf = (char *)page + (argc > 4 ? atoi(argv[4]) : 0);

    struct io_uring_params p;
    int ring = setup(1, &p);
    if (ring < 0) { perror("io_uring_setup"); return 1; }
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (p.features & IORING_FEAT_SINGLE_MMAP) sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
    char *sq = mmap(0, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                    IORING_OFF_SQ_RING);
    char *cq = (p.features & IORING_FEAT_SINGLE_MMAP)
                   ? sq
                   : mmap(0, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                          IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe),
                                     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                                     IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) { perror("mmap"); return 1; }
    unsigned *sq_tail = (unsigned *)(sq + p.sq_off.tail);
    unsigned *sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *sq_array = (unsigned *)(sq + p.sq_off.array);
    unsigned *cq_head = (unsigned *)(cq + p.cq_off.head);
    unsigned *cq_tail = (unsigned *)(cq + p.cq_off.tail);
    unsigned *cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);

    uint64_t x = 0x9E3779B97F4A7C15ull, reads = 0;
    double c0 = cpu(), t0 = now(), end = t0 + seconds, t = t0;
    while (t < end) {
        for (int k = 0; k < 256; k++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            unsigned tail = *sq_tail, i = tail & *sq_mask;
            struct io_uring_sqe *e = &sqes[i];
            memset(e, 0, sizeof(*e));
            e->opcode = IORING_OP_READ;
            e->fd = file;
            e->addr = (uint64_t)buf;
            e->len = 4096;
            e->off = (x % blocks) * 4096;
            sq_array[i] = i;
            __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
            int r = two ? enter(ring, 1, 0, submit_flags) : enter(ring, 1, 1, IORING_ENTER_GETEVENTS);
            if (r < 0) { perror("io_uring_enter"); return 1; }
            unsigned head = *cq_head;
            while (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE)) {
                if (enter(ring, 0, 1, IORING_ENTER_GETEVENTS) < 0) {
                    perror("io_uring_enter");
                    return 1;
                }
            }
            struct io_uring_cqe *c = &cqes[head & *cq_mask];
            if (c->res != 4096) { fprintf(stderr, "read returned %d\n", c->res); return 1; }
            __atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
            reads++;
        }
        t = now();
    }
    double wall = t - t0, used = cpu() - c0;
    printf("{\"reads\":%llu,\"seconds\":%.3f,\"iops\":%.0f,\"cpu_us_per_read\":%.2f}\n",
           (unsigned long long)reads, wall, reads / wall, 1e6 * used / reads);
    return 0;
}
