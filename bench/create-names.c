/* How much a file's name changes the cost of creating it: N open(O_CREAT) + close in one
 * directory, named "f<i>" (fsbench's default name_prefix) or "file.mdtest.0.<i>" (mdtest's),
 * then unlinked. A reference loop with no harness, to tell a filesystem's behaviour from a tool's.
 *
 *   cc -O2 -o /tmp/create-names bench/create-names.c
 *   truncate -s 2G /dev/shm/n.img && mkfs.ext4 -q -F /dev/shm/n.img && mkdir -p /tmp/n &&
 *   mount -o loop /dev/shm/n.img /tmp/n
 *   for r in 1 2 3; do for l in 0 1; do mkdir /tmp/n/d$r$l && /tmp/create-names /tmp/n/d$r$l $l &&
 *     rmdir /tmp/n/d$r$l; done; done
 *   umount /tmp/n && rm /dev/shm/n.img
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void name(char *p, size_t n, const char *dir, int longname, int i) {
    if (longname)
        snprintf(p, n, "%s/file.mdtest.0.%d", dir, i);
    else
        snprintf(p, n, "%s/f%d", dir, i);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR LONGNAMES(0|1) [N]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int longname = atoi(argv[2]);
    int n = argc > 3 ? atoi(argv[3]) : 20000;
    char p[4096];
    double t0 = now();
    for (int i = 0; i < n; i++) {
        name(p, sizeof p, dir, longname, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            perror(p);
            return 1;
        }
        close(fd);
    }
    double t1 = now();
    for (int i = 0; i < n; i++) {
        name(p, sizeof p, dir, longname, i);
        unlink(p);
    }
    printf("names %s: %d creates at %.0f/s\n", longname ? "file.mdtest.0.N" : "fN", n, n / (t1 - t0));
    return 0;
}
