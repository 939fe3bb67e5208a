/* onnxzip_update_model(): the model is replaced in place, weights untouched
 * and unmoved, O(model) bytes written, refusals leave the archive unchanged,
 * and a process killed at random points always leaves the old or the new
 * model readable.
 *
 *   test_update            a small archive, file size limits, 300 kills
 *   test_update big        a 1 GiB sparse archive, 40 kills, bytes written */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

typedef struct fixture {
    const char *path;
    int n;
    uint64_t each;
    uint8_t *model[2]; /* two valid models of different sizes */
    size_t len[2];
    uint64_t offsets[64];
} fixture;

static void build(fixture *f, const char *dir)
{
    const char *src = tu_path(dir, "src.bin");
    int fd = open(src, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)f->each) == 0);
    CHECK(pwrite(fd, "weights!", 8, 0) == 8);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(f->path, NULL, &w), 0);
    for (int i = 0; i < f->n; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        CHECK_RC(onnxzip_writer_add_file_range(w, name, fd, 0, f->each), 0);
    }
    f->model[0] = tu_model_entries(f->n, f->each, 1000, &f->len[0]);
    f->model[1] = tu_model_entries(f->n, f->each, 70000, &f->len[1]);
    CHECK_RC(onnxzip_writer_set_model(w, f->model[0], f->len[0]), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    close(fd);
    unlink(src);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(f->path, 0, &a), 0);
    for (int i = 0; a && i < f->n; i++) f->offsets[i] = onnxzip_entry_at(a, (size_t)i)->data_offset;
    onnxzip_close(&a);
}

/* Which model the archive holds now: 0, 1, or -1 (unreadable or other). */
static int which_model(const fixture *f)
{
    onnxzip_archive *a;
    if (onnxzip_open(f->path, 0, &a)) {
        fprintf(stderr, "  unreadable: %s\n", onnxzip_last_error()->message);
        return -1;
    }
    const void *m;
    size_t n;
    onnxzip_model_bytes(a, &m, &n);
    int k = n == f->len[0] && !memcmp(m, f->model[0], n) ? 0 : n == f->len[1] && !memcmp(m, f->model[1], n) ? 1 : -1;
    for (int i = 0; i < f->n; i++) /* weights never move */
        if (onnxzip_entry_at(a, (size_t)i)->data_offset != f->offsets[i]) k = -1;
    const onnxzip_tensor *t = onnxzip_find_tensor(a, "w0");
    if (!t || memcmp(t->data, "weights!", 8)) k = -1;
    onnxzip_close(&a);
    return k;
}

static uint64_t bytes_written(void)
{
    FILE *io = fopen("/proc/self/io", "r");
    char line[128];
    unsigned long long v = 0;
    while (io && fgets(line, sizeof line, io))
        if (sscanf(line, "wchar: %llu", &v) == 1) break;
    if (io) fclose(io);
    return v;
}

static void basics(fixture *f)
{
    uint64_t before = bytes_written();
    CHECK_RC(onnxzip_update_model(f->path, f->model[1], f->len[1]), 0);
    uint64_t written = bytes_written() - before;
    CHECK(which_model(f) == 1);
    printf("set-model on a %llu-byte archive: %llu bytes written for a %zu-byte model\n",
           (unsigned long long)(f->n * f->each), (unsigned long long)written, f->len[1]);
    CHECK(written < 3 * f->len[1] + 65536); /* two copies of the tail, not the weights */
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(f->path, ONNXZIP_OPEN_VERIFY, &a), 0);
    onnxzip_close(&a);
    CHECK_RC(onnxzip_update_model(f->path, f->model[0], f->len[0]), 0); /* shrinking works too */
    CHECK(which_model(f) == 0);
    struct stat st;
    CHECK(stat(f->path, &st) == 0);
    CHECK((uint64_t)st.st_size < f->n * f->each + f->len[0] + 4096); /* compacted: no dead space left */
}

static uint32_t file_crc(const char *path)
{
    FILE *fp = fopen(path, "rb");
    uint8_t buf[1 << 16];
    uLong crc = crc32(0, NULL, 0);
    for (size_t k; fp && (k = fread(buf, 1, sizeof buf, fp)) > 0;) crc = crc32(crc, buf, (uInt)k);
    if (fp) fclose(fp);
    return (uint32_t)crc;
}

static void refusals(fixture *f, const char *dir)
{
    uint32_t crc = file_crc(f->path);
    tu_tensor bad = { "t", 2, { 4 }, 1, "missing", 0 }, wrong = { "t", 2, { 5 }, 1, "w0", 0 };
    size_t n;
    uint8_t *m = tu_model(&bad, 1, &n);
    CHECK_RC(onnxzip_update_model(f->path, m, n), ONNXZIP_EREF);
    free(m);
    m = tu_model(&wrong, 1, &n);
    CHECK_RC(onnxzip_update_model(f->path, m, n), ONNXZIP_ESIZE);
    free(m);
    CHECK_RC(onnxzip_update_model(f->path, "\xff\xff", 2), ONNXZIP_EPROTO);
    int fd = open(f->path, O_RDONLY);
    CHECK(flock(fd, LOCK_EX) == 0);
    CHECK_RC(onnxzip_update_model(f->path, f->model[1], f->len[1]), ONNXZIP_EBUSY);
    close(fd);
    CHECK(file_crc(f->path) == crc); /* refused: not one byte changed */
    const char *classic = tu_path(dir, "classic.onnx");
    fd = open(classic, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(write(fd, "\x08\x08", 2) == 2);
    close(fd);
    CHECK_RC(onnxzip_update_model(classic, f->model[0], f->len[0]), ONNXZIP_EUNSUPPORTED);
    CHECK_RC(onnxzip_update_model(NULL, "", 0), ONNXZIP_EINVAL);
    /* Only a regular file has an end to update: a FIFO must not block. */
    const char *fifo = tu_path(dir, "fifo");
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_RC(onnxzip_update_model(fifo, f->model[0], f->len[0]), ONNXZIP_ENOTREG);
    CHECK_RC(onnxzip_update_model(dir, f->model[0], f->len[0]), ONNXZIP_ENOTREG);
    CHECK_RC(onnxzip_update_model("/dev/null", f->model[0], f->len[0]), ONNXZIP_ENOTREG);
    unlink(fifo);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    uint8_t *b = NULL;
    if (fp && !fseek(fp, 0, SEEK_END) && (*n = (size_t)ftell(fp)) > 0 && (b = malloc(*n)) && !fseek(fp, 0, SEEK_SET))
        CHECK(fread(b, 1, *n, fp) == *n);
    if (fp) fclose(fp);
    return b;
}

/* Restores the archive to `orig`, then updates it to model `to` in a child
 * whose file size limit is `limit` (writes past it fail with EFBIG, no
 * privileges needed). Checks: success <=> the new model is in place,
 * failure <=> the file is byte-identical. Returns 1 on success. */
static int limited_update(const fixture *f, off_t limit, int to, const uint8_t *orig, size_t n)
{
    FILE *fp = fopen(f->path, "r+b");
    CHECK(fp && fwrite(orig, 1, n, fp) == n && ftruncate(fileno(fp), (off_t)n) == 0);
    if (fp) fclose(fp);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = { (rlim_t)limit, (rlim_t)limit };
        signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
        _exit(setrlimit(RLIMIT_FSIZE, &rl) || onnxzip_update_model(f->path, f->model[to], f->len[to]) ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    size_t m = 0;
    uint8_t *now = ok ? NULL : slurp(f->path, &m);
    CHECK(ok ? which_model(f) == to : m == n && now && !memcmp(now, orig, n));
    free(now);
    return ok;
}

/* A write that fails is rolled back. The least limit that lets the update
 * through is the end of its shadow end (spec 15.4 step 1): found by
 * bisection, then every limit that cuts the write of its trailer short (a
 * torn trailer, which the update must undo) is tried. The ENOSPC and EIO sweeps are in
 * tests/cli/setmodel_full.py. */
static void size_limit(fixture *f)
{
    size_t n = 0;
    uint8_t *orig = slurp(f->path, &n);
    int to = which_model(f) == 0 ? 1 : 0, refused = 0;
    off_t lo = (off_t)n, hi = lo; /* lo fails, hi passes */
    while (hi < (off_t)n + 8 * (off_t)f->len[1] && !limited_update(f, hi, to, orig, n)) lo = hi, hi += 4096;
    while (hi - lo > 1) {
        off_t mid = lo + (hi - lo) / 2;
        *(limited_update(f, mid, to, orig, n) ? &hi : &lo) = mid;
    }
    for (off_t cut = 1; cut <= 24; cut++) refused += !limited_update(f, hi - cut, to, orig, n);
    printf("file size limit: the update needs %lld bytes; %d limits that tear its trailer refused, the archive "
           "unchanged\n", (long long)hi, refused);
    CHECK(refused == 24 && hi > (off_t)n);
    CHECK(limited_update(f, hi, to, orig, n));
    free(orig);
}

/* Kills an updating child at random instants; after each kill the archive
 * must hold the old or the new model. Counts the states left behind. */
static void kill_loop(fixture *f, int rounds)
{
    int states[3] = { 0 }, bad = 0;
    srand((unsigned)time(NULL));
    for (int r = 0; r < rounds; r++) {
        int from = which_model(f);
        if (from < 0) {
            bad++;
            break;
        }
        pid_t pid = fork();
        if (pid == 0) {
            onnxzip_update_model(f->path, f->model[!from], f->len[!from]);
            _exit(0);
        }
        struct timespec ts = { 0, (long)(rand() % 4000) * 1000L };
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        struct stat st;
        stat(f->path, &st);
        FILE *fp = fopen(f->path, "rb");
        char tail[8] = { 0 };
        if (fp && !fseek(fp, st.st_size - 24, SEEK_SET) && fread(tail, 1, 8, fp) == 8 && !memcmp(tail, "OZUPDATE", 8))
            states[1]++; /* killed between the shadow end (its trailer) and the flip */
        else if ((uint64_t)st.st_size > f->n * f->each + f->len[1] + 4096)
            states[2]++; /* killed between flip and truncation: dead space */
        else
            states[0]++; /* before the trailer, or done */
        if (fp) fclose(fp);
        bad += which_model(f) < 0;
    }
    printf("kill -9 loop: %d rounds, %d unreadable; states seen: %d plain, %d trailer, %d dead space\n", rounds, bad,
           states[0], states[1], states[2]);
    CHECK(bad == 0);
    CHECK(onnxzip_update_model(f->path, f->model[1], f->len[1]) == 0 && which_model(f) == 1); /* recovers */
}

int main(int argc, char **argv)
{
    int big = argc > 1 && !strcmp(argv[1], "big");
    char *dir = tu_tmpdir();
    fixture f = { .path = tu_path(dir, "u.onnxzip"), .n = big ? 16 : 4, .each = big ? 64ull << 20 : 4096 };
    char path[4096];
    snprintf(path, sizeof path, "%s", f.path);
    f.path = path;
    build(&f, dir);
    basics(&f);
    refusals(&f, dir);
    if (!big) size_limit(&f); /* restores the whole file before each of its ~40 runs */
    kill_loop(&f, big ? 40 : 300);
    free(f.model[0]);
    free(f.model[1]);
    tu_rmtree(dir);
    free(dir);
    return tu_finish(big ? "update_1gib" : "update");
}
