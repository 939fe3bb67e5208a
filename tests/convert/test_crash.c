/* Crash safety of every operation that writes: pack, unpack (each layout),
 * repack and set-model run in a forked child that is SIGKILLed at a random
 * instant. After each kill the input must be byte-identical, the output
 * absent or complete and valid; after the next un-killed run no temporary
 * (".NAME.tmp-*" file, ".NAME.unpack-*" directory) may be left: the writers
 * remove those of dead processes (spec 12.2), and never those of live ones.
 *
 *   test_crash [RUNS [MIB]]   default 30 runs per operation, 24 MiB input
 *                             (16 MiB under AddressSanitizer, to stay fast) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

#define NT 8 /* tensors */

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
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

static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Temporaries of any writer in `dir`. */
static int leftovers(const char *dir)
{
    return tu_count_files(dir, ".tmp-") + tu_count_files(dir, ".unpack-");
}

/* Removes every entry of `dir` that does not start with '.', so that each
 * run starts without output (temporaries stay, for the sweep to find). */
static void clear_outputs(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') unlink(tu_path(dir, e->d_name));
    if (d) closedir(d);
}

typedef struct fixture {
    char *dir;
    char archive[4096];       /* the source archive: NT random tensors */
    char classic[4096];       /* the same as a classic model + data file */
    char classic_data[4096];
    uint64_t each;
    uint8_t *model[2];        /* set-model: two models of different sizes */
    size_t len[2];
} fixture;

static void build(fixture *f, uint64_t total)
{
    f->each = total / NT;
    snprintf(f->archive, sizeof f->archive, "%s", tu_path(f->dir, "src.onnxzip"));
    uint8_t *buf = malloc(f->each);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(f->archive, NULL, &w), 0);
    for (int i = 0; i < NT; i++) {
        for (uint64_t k = 0; k + 8 <= f->each; k += 8) { /* xorshift: incompressible, no holes */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            memcpy(buf + k, &x, 8);
        }
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        CHECK_RC(onnxzip_writer_add_memory(w, name, buf, f->each), 0);
    }
    free(buf);
    f->model[0] = tu_model_entries(NT, f->each, 100, &f->len[0]);
    f->model[1] = tu_model_entries(NT, f->each, 8u << 20, &f->len[1]); /* the tail is written twice, with fsyncs */
    CHECK_RC(onnxzip_writer_set_model(w, f->model[0], f->len[0]), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    /* pack's input: a classic model with its data file, from unpack */
    const char *cdir = tu_path(f->dir, "classic");
    mkdir(cdir, 0755);
    snprintf(f->classic, sizeof f->classic, "%s/model.onnx", cdir);
    snprintf(f->classic_data, sizeof f->classic_data, "%s/model.onnx.data", cdir);
    CHECK_RC(onnxzip_unpack(f->archive, f->classic, NULL), 0);
}

/* ---- one kill loop ------------------------------------------------------ */

typedef struct op op;
struct op {
    const char *label;
    const char *out_dir;                 /* where outputs and temporaries appear */
    int (*run)(const op *o);             /* in the child */
    int (*state)(const op *o);           /* 0 absent, 1 complete, 2 the other complete state, -1 bad */
    void (*prepare)(const op *o, int r); /* before each run */
    const char *inputs[2];               /* byte-identical before and after */
    fixture *f;
    char out[4096];
    int layout;
    int turn; /* set-model: which model the run writes */
};

static pid_t start(const op *o)
{
    pid_t pid = fork();
    if (pid == 0) _exit(o->run(o) ? 1 : 0);
    return pid;
}

static void kill_loop(op *o, int runs)
{
    uint32_t crc[2] = { 0 };
    for (int i = 0; i < 2 && o->inputs[i]; i++) crc[i] = file_crc(o->inputs[i]);
    /* Clean runs first, to time the operation: the fastest of three, since
     * a first run on a loaded machine (cold caches, sanitizer start-up) can
     * take several times longer than the rest, and kills timed from it would
     * all come after the run finished. */
    int status;
    uint64_t took = UINT64_MAX;
    for (int c = 0; c < 3; c++) {
        if (o->prepare) o->prepare(o, 0);
        uint64_t t0 = now_us();
        waitpid(start(o), &status, 0);
        uint64_t t = now_us() - t0;
        if (t < took) took = t;
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(o->state(o) >= 1);
    }
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    int killed = 0, finished = 0, absent = 0, complete = 0, other = 0, bad = 0, changed = 0, max_left = 0;
    for (int r = 1; r <= runs; r++) {
        if (o->prepare) o->prepare(o, r);
        pid_t pid = start(o);
        struct timespec ts = { 0, 0 };
        uint64_t delay = (uint64_t)rand() % (took + took / 5 + 1);
        ts.tv_sec = (time_t)(delay / 1000000u);
        ts.tv_nsec = (long)(delay % 1000000u) * 1000L;
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            killed++;
        else {
            finished++;
            CHECK(WEXITSTATUS(status) == 0);
        }
        for (int i = 0; i < 2 && o->inputs[i]; i++) changed += file_crc(o->inputs[i]) != crc[i];
        int s = o->state(o);
        absent += s == 0, complete += s == 1, other += s == 2, bad += s < 0;
        int left = leftovers(o->out_dir);
        if (left > max_left) max_left = left;
    }
    /* The next run completes and removes every stale temporary. */
    if (o->prepare) o->prepare(o, runs + 1);
    waitpid(start(o), &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(o->state(o) >= 1);
    int left = leftovers(o->out_dir);
    printf("%-18s %d runs (clean run %.1f ms): %d killed mid-run, %d finished before the kill; outputs: %d absent, "
           "%d complete, %d old model, %d bad; inputs changed: %d; stale temporaries: up to %d after kills, %d after "
           "the next clean run\n",
           o->label, runs, (double)took / 1000.0, killed, finished, absent, complete, other, bad, changed, max_left,
           left);
    CHECK(bad == 0);
    CHECK(changed == 0);
    CHECK(left == 0);
    CHECK(killed > 0);
}

/* ---- the operations ----------------------------------------------------- */

static int archive_state(const char *path, int nt)
{
    if (!exists(path)) return 0;
    onnxzip_archive *a;
    int rc = onnxzip_open(path, 0, &a);
    if (!rc) rc = onnxzip_verify(a);
    if (!rc && onnxzip_tensor_count(a) != (size_t)nt) rc = -1;
    if (rc) fprintf(stderr, "  %s: bad output: %s\n", path, onnxzip_last_error()->message);
    onnxzip_close(&a);
    return rc ? -1 : 1;
}

static void clear_out(const op *o, int r)
{
    (void)r;
    clear_outputs(o->out_dir);
}

static int run_pack(const op *o)
{
    return onnxzip_pack(o->f->classic, o->out, NULL);
}

static int run_repack(const op *o)
{
    return onnxzip_repack(o->f->archive, o->out, NULL);
}

static int file_state(const op *o)
{
    return archive_state(o->out, NT);
}

static int run_unpack(const op *o)
{
    onnxzip_unpack_options opts;
    onnxzip_unpack_options_init(&opts);
    opts.layout = (onnxzip_unpack_layout)o->layout;
    return onnxzip_unpack(o->f->archive, o->out, &opts);
}

/* No model.onnx, or one that opens with all its data files and reads whole. */
static int unpack_state(const op *o)
{
    if (!exists(o->out)) return 0;
    onnxzip_archive *a;
    int rc = onnxzip_open(o->out, 0, &a);
    if (!rc) rc = onnxzip_verify(a);
    if (!rc && onnxzip_tensor_count(a) != NT) rc = -1;
    for (size_t i = 0; !rc && i < NT; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        if (!t->data || t->nbytes != o->f->each) rc = -1;
    }
    if (rc) fprintf(stderr, "  %s: bad output: %s\n", o->out, onnxzip_last_error()->message);
    onnxzip_close(&a);
    return rc ? -1 : 1;
}

static int run_set_model(const op *o)
{
    return onnxzip_update_model(o->out, o->f->model[o->turn], o->f->len[o->turn]);
}

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int pread_all(int fd, void *b, size_t n, uint64_t off)
{
    return pread(fd, b, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/* The archive as zip tools that know no update trailer find it (libzip,
 * unzip and zipfile are run on every kill point by setmodel_full.py; this is
 * their cheap core): the last EOCD signature in the last 65557 bytes, its
 * comment reaching the end of the file exactly, the central directory it
 * names (through zip64 records when present) immediately before the end
 * records, and that many central records, each naming a local header. */
static int zip_tools_read(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size < 22) return fd >= 0 ? close(fd), -1 : -1;
    uint64_t size = (uint64_t)st.st_size, span = size < 65557 ? size : 65557, e = 0, n, cd_size, cd_off;
    uint8_t *b = malloc(span), *p = NULL;
    int bad = !b || pread_all(fd, b, span, size - span);
    for (uint64_t i = span - 22; !bad && !p; i--) {
        if (!memcmp(b + i, "PK\5\6", 4)) p = b + i, e = size - span + i;
        if (!i) break;
    }
    bad = bad || !p || rd(p + 20, 2) != size - e - 22;
    if (!bad) n = rd(p + 10, 2), cd_size = rd(p + 12, 4), cd_off = rd(p + 16, 4);
    uint64_t ends = e; /* where the end records start */
    if (!bad && cd_off == 0xFFFFFFFFu) {
        uint8_t z[76];
        bad = e < 76 || pread_all(fd, z, 76, e - 76) || memcmp(z, "PK\6\6", 4) || memcmp(z + 56, "PK\6\7", 4) ||
              rd(z + 64, 8) != e - 76;
        if (!bad) n = rd(z + 32, 8), cd_size = rd(z + 40, 8), cd_off = rd(z + 48, 8), ends = e - 76;
    }
    free(b);
    b = NULL;
    bad = bad || cd_off + cd_size != ends || !(b = malloc(cd_size + 1)) || pread_all(fd, b, cd_size, cd_off);
    uint64_t at = 0;
    for (uint64_t k = 0; !bad && k < n; k++) {
        uint8_t lh[4] = "PK\3\4";
        uint64_t local = at + 46 <= cd_size ? rd(b + at + 42, 4) : 0; /* 0xFFFFFFFF: in a zip64 field */
        bad = at + 46 > cd_size || memcmp(b + at, "PK\1\2", 4) ||
              (local != 0xFFFFFFFFu && pread_all(fd, lh, 4, local)) || memcmp(lh, "PK\3\4", 4);
        if (!bad) at += 46 + rd(b + at + 28, 2) + rd(b + at + 30, 2) + rd(b + at + 32, 2);
    }
    if (!bad && at != cd_size) bad = 1;
    free(b);
    close(fd);
    return bad ? -1 : 0;
}

/* Old or new model, weights intact (verify checks every entry's CRC), and
 * the file readable by zip tools too (spec 15.6). */
static int set_model_state(const op *o)
{
    onnxzip_archive *a;
    int rc = onnxzip_open(o->out, 0, &a);
    if (!rc) rc = onnxzip_verify(a);
    int which = -1;
    if (!rc) {
        const void *m;
        size_t n;
        onnxzip_model_bytes(a, &m, &n);
        for (int k = 0; k < 2; k++)
            if (n == o->f->len[k] && !memcmp(m, o->f->model[k], n)) which = k;
    } else
        fprintf(stderr, "  %s: unreadable: %s\n", o->out, onnxzip_last_error()->message);
    onnxzip_close(&a);
    if (which >= 0 && zip_tools_read(o->out)) {
        fprintf(stderr, "  %s: onnxzip reads it, zip tools would not (no end of central directory)\n", o->out);
        which = -1;
    }
    return which < 0 ? -1 : which == o->turn ? 1 : 2; /* 2: the model before the run */
}

static void set_model_prepare(const op *o, int r)
{
    (void)r;
    op *m = (op *)o;
    int before = set_model_state(o);
    /* write the model the archive does not hold: a real change every run */
    if (before == 1) m->turn = !m->turn;
}

/* ---- the sweep itself ----------------------------------------------------- */

static int make_file(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0 && write(fd, "stale", 5) != 5) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Stale temporaries of the same target go; locked ones (a live writer),
 * those of other targets and other names stay. */
static void sweep_rules(fixture *f)
{
    const char *d = tu_path(f->dir, "sweep");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", d);
    mkdir(dir, 0755);
    const char *names[] = { ".x.onnxzip.tmp-deadbeef", ".x.onnxzip.tmp-cafebabe", ".y.onnxzip.tmp-deadbeef",
                            ".x.onnxzip.tmp-dead", ".x.onnxzip.tmp-deadbeef0" };
    int fds[5];
    for (int i = 0; i < 5; i++) fds[i] = make_file(tu_path(dir, names[i]));
    for (int i = 0; i < 5; i++) CHECK(fds[i] >= 0);
    CHECK(flock(fds[1], LOCK_EX) == 0); /* a live writer: its own open file description */
    for (int i = 0; i < 5; i++)
        if (i != 1) close(fds[i]);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(tu_path(dir, "x.onnxzip"), NULL, &w), 0);
    CHECK(!exists(tu_path(dir, names[0])));
    for (int i = 1; i < 5; i++) CHECK(exists(tu_path(dir, names[i])));
    CHECK(tu_count_files(dir, ".x.onnxzip.tmp-") == 4); /* ours, locked + 2 other names */
    /* our own temporary is locked: a second writer of the same target leaves it */
    onnxzip_writer *w2;
    CHECK_RC(onnxzip_writer_create(tu_path(dir, "x.onnxzip"), NULL, &w2), 0);
    CHECK(tu_count_files(dir, ".x.onnxzip.tmp-") == 5);
    onnxzip_writer_abort(&w2);
    onnxzip_writer_abort(&w);
    CHECK(tu_count_files(dir, ".x.onnxzip.tmp-") == 3);
    close(fds[1]); /* the "writer" dies: its file is now stale */
    int fd = make_file(tu_path(dir, ".t.bin.tmp-0badf00d"));
    close(fd);
    /* extract (atomic_file) sweeps its target's stale files too */
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(f->archive, 0, &a), 0);
    CHECK_RC(onnxzip_extract_tensor(a, "w0", tu_path(dir, "t.bin")), 0);
    onnxzip_close(&a);
    CHECK(!exists(tu_path(dir, ".t.bin.tmp-0badf00d")));
    CHECK(exists(tu_path(dir, "t.bin")));
    /* unpack: directories, with files inside */
    const char *stale = tu_path(dir, ".m.onnx.unpack-AbC123");
    char sd[4096], ld[4096];
    snprintf(sd, sizeof sd, "%s", stale);
    snprintf(ld, sizeof ld, "%s", tu_path(dir, ".m.onnx.unpack-live00"));
    CHECK(mkdir(sd, 0700) == 0 && mkdir(ld, 0700) == 0);
    close(make_file(tu_path(sd, "m.onnx")));
    close(make_file(tu_path(sd, "m.onnx.data")));
    int lfd = open(ld, O_RDONLY | O_DIRECTORY);
    CHECK(lfd >= 0 && flock(lfd, LOCK_EX) == 0);
    CHECK_RC(onnxzip_unpack(f->archive, tu_path(dir, "m.onnx"), NULL), 0);
    CHECK(!exists(sd));
    CHECK(exists(ld));
    CHECK(tu_count_files(dir, ".m.onnx.unpack-") == 1);
    close(lfd);
    CHECK_RC(onnxzip_unpack(f->archive, tu_path(dir, "m.onnx"), NULL), 0);
    CHECK(tu_count_files(dir, ".m.onnx.unpack-") == 0);
    /* writer finish: the rename happens while the lock is held, so the
     * temporary never looks stale; pack removes the x.onnxzip leftovers */
    CHECK_RC(onnxzip_pack(tu_path(dir, "m.onnx"), tu_path(dir, "x.onnxzip"), NULL), 0);
    CHECK(tu_count_files(dir, ".x.onnxzip.tmp-") == 2); /* the two other-pattern names */
    CHECK(tu_count_files(dir, ".y.onnxzip.tmp-") == 1);
}

int main(int argc, char **argv)
{
#ifdef __SANITIZE_ADDRESS__
    const uint64_t default_mib = 16;
#else
    const uint64_t default_mib = 24;
#endif
    int runs = argc > 1 ? atoi(argv[1]) : 30;
    uint64_t mib = argc > 2 ? (uint64_t)atoll(argv[2]) : default_mib;
    fixture f = { .dir = tu_tmpdir() };
    build(&f, mib << 20);
    if (tu_failed) {
        tu_rmtree(f.dir);
        free(f.dir);
        return tu_finish("crash");
    }
    sweep_rules(&f);

    static op ops[6];
    const char *labels[] = { "pack", "unpack single", "unpack per-tensor", "unpack inline", "repack", "set-model" };
    for (int i = 0; i < 6; i++) {
        op *o = &ops[i];
        char sub[64];
        snprintf(sub, sizeof sub, "out%d", i);
        o->out_dir = strdup(tu_path(f.dir, sub));
        mkdir(o->out_dir, 0755);
        o->label = labels[i];
        o->f = &f;
        o->prepare = clear_out;
    }
    snprintf(ops[0].out, sizeof ops[0].out, "%s/packed.onnxzip", ops[0].out_dir);
    ops[0].run = run_pack, ops[0].state = file_state;
    ops[0].inputs[0] = f.classic, ops[0].inputs[1] = f.classic_data;
    for (int l = 0; l < 3; l++) {
        op *o = &ops[1 + l];
        snprintf(o->out, sizeof o->out, "%s/model.onnx", o->out_dir);
        o->run = run_unpack, o->state = unpack_state, o->layout = l;
        o->inputs[0] = f.archive;
    }
    snprintf(ops[4].out, sizeof ops[4].out, "%s/re.onnxzip", ops[4].out_dir);
    ops[4].run = run_repack, ops[4].state = file_state, ops[4].inputs[0] = f.archive;
    op *sm = &ops[5];
    snprintf(sm->out, sizeof sm->out, "%s/sm.onnxzip", sm->out_dir);
    {
        int in = open(f.archive, O_RDONLY), out = open(sm->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        struct stat st;
        fstat(in, &st);
        for (off_t off = 0; off < st.st_size;) {
            ssize_t k = copy_file_range(in, &off, out, NULL, (size_t)(st.st_size - off), 0);
            if (k <= 0) break;
        }
        close(in);
        close(out);
    }
    sm->run = run_set_model, sm->state = set_model_state, sm->prepare = set_model_prepare, sm->turn = 0;

    for (int i = 0; i < 6; i++) {
        if (ops[i].run == run_repack && !onnxzip_has_feature(ONNXZIP_FEATURE_REPACK)) {
            printf("crash: repack not killed: this build has no libzip (test_repack checks its status)\n");
            continue;
        }
        kill_loop(&ops[i], runs);
    }
    for (int i = 0; i < 6; i++) free((char *)ops[i].out_dir);
    free(f.model[0]);
    free(f.model[1]);
    tu_rmtree(f.dir);
    free(f.dir);
    return tu_finish("crash");
}
