/*
 * bench_open.c — in-process timing helper for tools/bench/bench.py.
 *
 * Built by bench.py itself (no meson changes):
 *   cc -O2 -std=gnu11 -I include -I BUILD/proto tools/bench/bench_open.c
 *      BUILD/proto/onnx.pb-c.c -L BUILD/src -lonnxzip -Wl,-rpath,BUILD/src
 *      -lprotobuf-c -lxxhash -lz
 *
 * Modes (every time is the median of REPS runs, in seconds; output is
 * "key value" lines that bench.py parses):
 *   open   ARCHIVE REPS          P1: onnxzip_open + touch every view struct +
 *                                close, vs protobuf-c unpack+free of the same
 *                                __MODEL_PROTO bytes (already in memory)
 *   pass   ARCHIVE DATAFILE cold|warm REPS FLAGS
 *                                P2: FLAGS >= 0: onnxzip_open(FLAGS) + sum
 *                                every 8th byte of every view; FLAGS < 0: the
 *                                peers: mmap of the archive summing every 8th
 *                                byte (and touching one byte per page), and
 *                                read() of the classic data file into a buffer
 *                                + the same sum. cold: sync + drop_caches
 *                                before each run (needs root).
 *   update ARCHIVE NEW_A NEW_B REPS [cold]
 *                                P4: onnxzip_update_model alternating A/B;
 *                                wall time and /proc/self/io wchar delta;
 *                                cold: sync + drop_caches before each.
 *   hash   ARCHIVE REPS          P5: onnxzip_verify vs XXH3_64bits, zlib
 *                                crc32 and (when built with HAVE_LIBDEFLATE)
 *                                libdeflate_crc32 over the mapped archive (warm).
 *   launch CMD [ARGS...]         P3/P4/P5: fork+exec+wait4: wall time, peak
 *                                RSS (ru_maxrss) and the child's wchar /
 *                                write_bytes from /proc/PID/io (read while it
 *                                is a zombie, via waitid(WNOWAIT)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "onnx.pb-c.h"
#include "onnxzip/onnxzip.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what)
{
    const onnxzip_error_info *e = onnxzip_last_error();
    fprintf(stderr, "bench_open: %s: %s\n", what, e->message ? e->message : strerror(errno));
    exit(2);
}

static void drop_caches(void)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd < 0 || write(fd, "3\n", 2) != 2) {
        fprintf(stderr, "bench_open: cannot drop caches (need root)\n");
        exit(3);
    }
    close(fd);
}

static volatile uint64_t sink;

static uint64_t sum8(const unsigned char *p, uint64_t n)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i += 8) s += p[i];
    return s;
}

/* ---- P1 ---------------------------------------------------------------- */
static int mode_open(const char *path, int reps)
{
    double *t_open = calloc((size_t)reps, sizeof(double));
    double *t_pb = calloc((size_t)reps, sizeof(double));
    double *t_pb_only = calloc((size_t)reps, sizeof(double));
    size_t ntensors = 0;
    /* the floor's input: the same model bytes, read into memory once */
    onnxzip_archive *a = NULL;
    if (onnxzip_open(path, 0, &a)) die("onnxzip_open");
    const void *mb;
    size_t msz;
    if (onnxzip_model_bytes(a, &mb, &msz)) die("onnxzip_model_bytes");
    uint8_t *copy = malloc(msz);
    memcpy(copy, mb, msz);
    onnxzip_close(&a);
    /* alternated, so that both see the same machine state */
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (onnxzip_open(path, 0, &a)) die("onnxzip_open");
        size_t n = onnxzip_tensor_count(a);
        uint64_t s = 0;
        for (size_t i = 0; i < n; i++) {
            const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
            s += t->nbytes + (uint64_t)(uintptr_t)t->data + t->ndims + (unsigned char)t->name[0];
            for (uint32_t d = 0; d < t->ndims; d++) s += (uint64_t)t->dims[d];
        }
        sink += s;
        onnxzip_close(&a);
        t_open[r] = now() - t0;
        ntensors = n;

        t0 = now();
        Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, msz, copy);
        double t1 = now();
        if (!m) die("onnx__model_proto__unpack");
        sink += m->graph ? m->graph->n_initializer : 0;
        onnx__model_proto__free_unpacked(m, NULL);
        t_pb[r] = now() - t0;
        t_pb_only[r] = t1 - t0;
    }
    printf("tensors %zu\nmodel_proto_bytes %zu\n", ntensors, msz);
    printf("open_touch_close %.9f\n", median(t_open, reps));
    printf("protobufc_unpack_free %.9f\n", median(t_pb, reps));
    printf("protobufc_unpack_only %.9f\n", median(t_pb_only, reps));
    free(copy);
    free(t_open); free(t_pb); free(t_pb_only);
    return 0;
}

/* ---- P2 ---------------------------------------------------------------- */
static double pass_ours(const char *path, unsigned flags, uint64_t *payload)
{
    double t0 = now();
    onnxzip_archive *a = NULL;
    if (onnxzip_open(path, flags, &a)) die("onnxzip_open");
    size_t n = onnxzip_tensor_count(a);
    uint64_t s = 0, tot = 0;
    for (size_t i = 0; i < n; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        if (t->data) s += sum8(t->data, t->nbytes);
        tot += t->nbytes;
    }
    sink += s;
    onnxzip_close(&a);
    *payload = tot;
    return now() - t0;
}

/* the limit: plain mmap of the raw archive, the same work on every byte (or
 * one byte per page) */
static double pass_mmap(const char *path, int per_page)
{
    long pg = sysconf(_SC_PAGESIZE);
    double t0 = now();
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) die(path);
    unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) die("mmap");
    if (!per_page) {
        sink += sum8(p, (uint64_t)st.st_size);
    } else {
        uint64_t ss = 0;
        for (off_t i = 0; i < st.st_size; i += pg) ss += p[i];
        sink += ss;
    }
    munmap(p, (size_t)st.st_size);
    close(fd);
    return now() - t0;
}

/* read() of the classic data file into one buffer, then the same sum */
static double pass_read(const char *datafile)
{
    double t0 = now();
    int fd = open(datafile, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) die(datafile);
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) die("malloc");
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
        if (k <= 0) die("read");
        got += (size_t)k;
    }
    sink += sum8(buf, got);
    free(buf);
    close(fd);
    return now() - t0;
}

/* FLAGS < 0: the peers; else onnxzip_open with those flags + the pass */
static int mode_pass(const char *path, const char *datafile, int cold, int reps, int flags)
{
    double *t[3];
    for (int k = 0; k < 3; k++) t[k] = calloc((size_t)reps, sizeof(double));
    uint64_t payload = 0;
    for (int r = 0; r < reps; r++) {
        if (flags >= 0) {
            if (cold) drop_caches();
            t[0][r] = pass_ours(path, (unsigned)flags, &payload);
            continue;
        }
        for (int k = 0; k < 3; k++) {
            if (cold) drop_caches();
            t[k][r] = k == 2 ? pass_read(datafile) : pass_mmap(path, k);
        }
    }
    if (flags >= 0) {
        printf("payload_bytes %llu\n", (unsigned long long)payload);
        printf("ours_open_sum8 %.9f\n", median(t[0], reps));
    } else {
        printf("mmap_sum8 %.9f\n", median(t[0], reps));
        printf("mmap_touch_pages %.9f\n", median(t[1], reps));
        printf("read_sum8 %.9f\n", median(t[2], reps));
    }
    for (int k = 0; k < 3; k++) free(t[k]);
    return 0;
}

/* ---- P4 ---------------------------------------------------------------- */
static uint8_t *slurp(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) die(path);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
        if (k <= 0) die("read");
        got += (size_t)k;
    }
    close(fd);
    *n = got;
    return b;
}

static int read_io(pid_t pid, unsigned long long *wchar, unsigned long long *wbytes)
{
    char p[64];
    if (pid) snprintf(p, sizeof p, "/proc/%d/io", (int)pid);
    else snprintf(p, sizeof p, "/proc/self/io");
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    char line[128];
    *wchar = *wbytes = 0;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "wchar: %llu", wchar);
        sscanf(line, "write_bytes: %llu", wbytes);
    }
    fclose(f);
    return 0;
}

static int mode_update(const char *path, const char *fa, const char *fb, int reps, int cold)
{
    size_t na, nb;
    uint8_t *ma = slurp(fa, &na), *mb = slurp(fb, &nb);
    double *t = calloc((size_t)reps, sizeof(double));
    double *w = calloc((size_t)reps, sizeof(double));
    for (int r = 0; r < reps; r++) {
        unsigned long long w0, b0, w1, b1;
        if (cold) drop_caches();
        read_io(0, &w0, &b0);
        double t0 = now();
        int rc = (r % 2) ? onnxzip_update_model(path, mb, nb) : onnxzip_update_model(path, ma, na);
        t[r] = now() - t0;
        read_io(0, &w1, &b1);
        if (rc) die("onnxzip_update_model");
        w[r] = (double)(w1 - w0);
    }
    printf("model_bytes %zu\n", na);
    printf("update_model %.9f\n", median(t, reps));
    printf("update_wchar %.0f\n", median(w, reps));
    free(ma); free(mb); free(t); free(w);
    return 0;
}

/* ---- P5 ---------------------------------------------------------------- */
static int mode_hash(const char *path, int reps)
{
    double *tv = calloc((size_t)reps, sizeof(double));
    double *tx = calloc((size_t)reps, sizeof(double));
    double *tc = calloc((size_t)reps, sizeof(double));
    double *td = calloc((size_t)reps, sizeof(double));
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) die(path);
    size_t n = (size_t)st.st_size;
    unsigned char *p = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) die("mmap");
    sink += sum8(p, n); /* warm the page cache and the mapping */
    onnxzip_archive *a = NULL;
    if (onnxzip_open(path, 0, &a)) die("onnxzip_open");
    if (onnxzip_verify(a)) die("onnxzip_verify"); /* warm */
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (onnxzip_verify(a)) die("onnxzip_verify");
        tv[r] = now() - t0;
        t0 = now();
        sink += XXH3_64bits(p, n);
        tx[r] = now() - t0;
        t0 = now();
        uLong c = crc32(0L, Z_NULL, 0);
        for (size_t off = 0; off < n;) {
            size_t k = n - off > (1u << 30) ? (1u << 30) : n - off;
            c = crc32(c, p + off, (uInt)k);
            off += k;
        }
        sink += c;
        tc[r] = now() - t0;
#ifdef HAVE_LIBDEFLATE
        t0 = now();
        sink += libdeflate_crc32(0, p, n);
        td[r] = now() - t0;
#endif
    }
    onnxzip_close(&a);
    printf("bytes %zu\n", n);
    printf("verify %.9f\n", median(tv, reps));
    printf("xxh3 %.9f\n", median(tx, reps));
    printf("crc32 %.9f\n", median(tc, reps));
#ifdef HAVE_LIBDEFLATE
    printf("libdeflate_crc32 %.9f\n", median(td, reps));
#endif
    munmap(p, n);
    close(fd);
    return 0;
}

/* ---- launcher ---------------------------------------------------------- */
static int mode_launch(char **argv)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
    double t1 = now();
    unsigned long long wc = 0, wb = 0;
    int io_ok = read_io(pid, &wc, &wb) == 0;
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) die("wait4");
    printf("wall %.9f\n", t1 - t0);
    printf("maxrss_kib %ld\n", ru.ru_maxrss);
    if (io_ok) printf("wchar %llu\nwrite_bytes %llu\n", wc, wb);
    printf("status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "open")) return mode_open(argv[2], atoi(argv[3]));
    if (argc >= 7 && !strcmp(argv[1], "pass"))
        return mode_pass(argv[2], argv[3], !strcmp(argv[4], "cold"), atoi(argv[5]), atoi(argv[6]));
    if (argc >= 6 && !strcmp(argv[1], "update"))
        return mode_update(argv[2], argv[3], argv[4], atoi(argv[5]), argc >= 7 && !strcmp(argv[6], "cold"));
    if (argc >= 4 && !strcmp(argv[1], "hash")) return mode_hash(argv[2], atoi(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "launch")) return mode_launch(argv + 2);
    fprintf(stderr, "usage: bench_open open|pass|update|hash|launch ... (see the source)\n");
    return 2;
}
