/* Readers and an in-place updater, and the mmap hazard.
 *
 *   1. Reader processes open the archive in a tight loop (onnxzip_open, the
 *      first and last byte of every tensor, onnxzip_model_bytes compared with
 *      the two known models) while a writer process runs
 *      onnxzip_update_model() back and forth between two models of different
 *      sizes: every open must succeed and see exactly one of the two models
 *      (the update lock, spec 15.5), weights unchanged.
 *   2. onnxzip_check(): unchanged file, set-model (rewritten), replaced by
 *      rename, truncated by another process (ONNXZIP_ETRUNC); in a forked
 *      child, a view past the new end raises SIGBUS while one before it reads.
 *
 *   test_concurrency [UPDATES [READERS]]   default 200 updates, 3 readers */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define NT 6
#define EACH (256u << 10) /* bytes per tensor */

typedef struct fixture {
    char path[4096];
    uint8_t *model[2];
    size_t len[2];
} fixture;

static uint8_t first_byte(int i)
{
    return (uint8_t)(0x40 + i);
}

static uint8_t last_byte(int i)
{
    return (uint8_t)(0xA0 + i);
}

static void build(fixture *f, const char *path)
{
    snprintf(f->path, sizeof f->path, "%s", path);
    f->model[0] = tu_model_entries(NT, EACH, 300, &f->len[0]);
    f->model[1] = tu_model_entries(NT, EACH, 300000, &f->len[1]); /* the file shrinks and grows by ~73 pages */
    uint8_t *buf = calloc(1, EACH);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    for (int i = 0; i < NT; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        buf[0] = first_byte(i);
        buf[EACH - 1] = last_byte(i);
        CHECK_RC(onnxzip_writer_add_memory(w, name, buf, EACH), 0);
    }
    free(buf);
    CHECK_RC(onnxzip_writer_set_model(w, f->model[0], f->len[0]), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
}

/* ---- 1. readers against an updater --------------------------------------- */

typedef struct shared {
    volatile int stop;
    volatile int started;
    struct {
        long opens, saw[2], failed, wrong;
        char why[256];
    } r[16];
} shared;

static void reader(const fixture *f, shared *sh, int k)
{
    /* Niced: on a small machine, spinning readers would otherwise leave the
     * updater little CPU and make the test slow, not more thorough. */
    if (nice(5) == -1 && errno) perror("nice");
    __sync_fetch_and_add(&sh->started, 1);
    while (!sh->stop) {
        onnxzip_archive *a;
        int rc = onnxzip_open(f->path, 0, &a);
        sh->r[k].opens++;
        if (rc) {
            if (!sh->r[k].failed++)
                snprintf(sh->r[k].why, sizeof sh->r[k].why, "%s", onnxzip_last_error()->message);
            continue;
        }
        const void *m;
        size_t n;
        int which = -1;
        if (!onnxzip_model_bytes(a, &m, &n))
            for (int j = 0; j < 2; j++)
                if (n == f->len[j] && !memcmp(m, f->model[j], n)) which = j;
        int ok = which >= 0 && onnxzip_tensor_count(a) == NT;
        for (int i = 0; ok && i < NT; i++) {
            const onnxzip_tensor *t = onnxzip_tensor_at(a, (size_t)i);
            const uint8_t *d = t->data;
            ok = t->nbytes == EACH && d[0] == first_byte(i) && d[EACH - 1] == last_byte(i);
        }
        if (ok)
            sh->r[k].saw[which]++;
        else if (!sh->r[k].wrong++)
            snprintf(sh->r[k].why, sizeof sh->r[k].why, "open %ld: model %d, or a tensor's bytes differ",
                     sh->r[k].opens, which);
        onnxzip_close(&a);
    }
}

static void readers_vs_updater(const fixture *f, int updates, int nreaders)
{
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    pid_t pids[16];
    for (int k = 0; k < nreaders; k++)
        if ((pids[k] = fork()) == 0) {
            reader(f, sh, k);
            _exit(0);
        }
    while (sh->started < nreaders) usleep(1000);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int failed = 0;
    for (int u = 0; u < updates; u++) {
        int rc = onnxzip_update_model(f->path, f->model[(u + 1) % 2], f->len[(u + 1) % 2]);
        if (rc && !failed++) fprintf(stderr, "  update %d: %s\n", u, onnxzip_last_error()->message);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    sh->stop = 1;
    long opens = 0, saw[2] = { 0 }, bad = 0, wrong = 0;
    int crashed = 0;
    for (int k = 0; k < nreaders; k++) {
        int status;
        waitpid(pids[k], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status)) {
            crashed++;
            fprintf(stderr, "  reader %d died: %s\n", k,
                    WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit status");
        }
        opens += sh->r[k].opens, saw[0] += sh->r[k].saw[0], saw[1] += sh->r[k].saw[1];
        bad += sh->r[k].failed, wrong += sh->r[k].wrong;
        if (sh->r[k].why[0]) fprintf(stderr, "  reader %d: %s\n", k, sh->r[k].why);
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%d updates in %.2f s (%d failed) against %d reader processes: %ld opens, %ld saw the small model, %ld "
           "the large one, %ld failed, %ld saw something else, %d readers died\n",
           updates, secs, failed, nreaders, opens, saw[0], saw[1], bad, wrong, crashed);
    CHECK(failed == 0);
    CHECK(bad == 0);
    CHECK(wrong == 0);
    CHECK(crashed == 0);
    CHECK(saw[0] > 0 && saw[1] > 0);
    munmap(sh, sizeof *sh);
}

/* ---- 2. onnxzip_check() and SIGBUS ---------------------------------------- */

static void check_states(const fixture *f, const char *dir)
{
    onnxzip_archive *a, *b;
    CHECK_RC(onnxzip_check(NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open(f->path, 0, &a), 0);
    CHECK_RC(onnxzip_check(a), 0);
    /* set-model rewrites the file in place: reported, but views stay valid */
    CHECK_RC(onnxzip_update_model(f->path, f->model[1], f->len[1]), 0);
    CHECK_RC(onnxzip_check(a), ONNXZIP_ETRUNC);
    CHECK(((const uint8_t *)onnxzip_tensor_at(a, NT - 1)->data)[EACH - 1] == last_byte(NT - 1));
    onnxzip_close(&a);
    /* replaced by rename: reported; the old file stays mapped */
    CHECK_RC(onnxzip_open(f->path, 0, &a), 0);
    const char *copy = tu_path(dir, "copy.onnxzip");
    char cp[4096];
    snprintf(cp, sizeof cp, "%s", copy);
    onnxzip_writer *w;
    size_t mlen;
    uint8_t *m = tu_model_entries(0, 0, 0, &mlen); /* no tensors */
    CHECK_RC(onnxzip_writer_create(cp, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_set_model(w, m, mlen), 0);
    free(m);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK(rename(cp, f->path) == 0);
    CHECK_RC(onnxzip_check(a), ONNXZIP_ETRUNC);
    CHECK(((const uint8_t *)onnxzip_tensor_at(a, 0)->data)[0] == first_byte(0));
    onnxzip_close(&a);
    /* buffers are the caller's: nothing to check */
    static const uint8_t empty_zip[22] = { 0x50, 0x4b, 0x05, 0x06 };
    CHECK(onnxzip_open_buffer(empty_zip, sizeof empty_zip, 0, &b) != 0); /* no model: refused, fine */
    (void)b;
}

/* Truncation by another process: onnxzip_check() reports it, and in a child
 * a view before the new end reads while one past it raises SIGBUS. */
static void truncation(const char *dir)
{
    fixture g;
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_path(dir, "trunc.onnxzip"));
    build(&g, path);
    onnxzip_archive *a, *b;
    int fd = open(path, O_RDONLY);
    CHECK_RC(onnxzip_open_fd(fd, 0, &b), 0); /* fd handles are checked too */
    close(fd);
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    if (!a || !b) return;
    const onnxzip_tensor *first = onnxzip_tensor_at(a, 0), *last = onnxzip_tensor_at(a, NT - 1);
    uint64_t cut = (last->file_offset & ~(uint64_t)4095) - 4096; /* well before the last tensor */
    CHECK(first->file_offset + EACH < cut);
    pid_t pid = fork();
    if (pid == 0) _exit(truncate(path, (off_t)cut) ? 1 : 0); /* "another process" */
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_RC(onnxzip_check(a), ONNXZIP_ETRUNC);
    CHECK(onnxzip_last_error()->offset == (int64_t)cut);
    CHECK_RC(onnxzip_check(b), ONNXZIP_ETRUNC);
    onnxzip_close(&b);
    /* before the cut: readable */
    pid = fork();
    if (pid == 0) {
        const uint8_t *d = first->data;
        _exit(d[0] == first_byte(0) && d[EACH - 1] == last_byte(0) ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* past it: SIGBUS */
    pid = fork();
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL);
        volatile uint8_t x = ((const volatile uint8_t *)last->data)[EACH - 1];
        (void)x;
        _exit(0);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
    printf("truncated to %llu bytes under a %llu-byte mapping: onnxzip_check says %s; a view before the cut reads, "
           "one past it: %s\n", (unsigned long long)cut, (unsigned long long)(last->file_offset + EACH),
           onnxzip_status_name(ONNXZIP_ETRUNC),
           WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no signal");
    onnxzip_close(&a);
    free(g.model[0]);
    free(g.model[1]);
}

int main(int argc, char **argv)
{
    int updates = argc > 1 ? atoi(argv[1]) : 200;
    int nreaders = argc > 2 ? atoi(argv[2]) : 3;
    if (nreaders > 16) nreaders = 16;
    char *dir = tu_tmpdir();
    fixture f;
    build(&f, tu_path(dir, "c.onnxzip"));
    readers_vs_updater(&f, updates, nreaders);
    check_states(&f, dir);
    truncation(dir);
    free(f.model[0]);
    free(f.model[1]);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("concurrency");
}
