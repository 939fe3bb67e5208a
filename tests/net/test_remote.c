/* Remote archives against real servers: tests/remote/run.py starts nginx and
 * the scripted fault server (tests/remote/servers.py) over one document
 * root and runs
 *     test_remote NGINX_URL FAULT_URL DOCROOT
 * Archives are written into DOCROOT here; each case reads them over HTTP and
 * compares with onnxzip_open() of the same file. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static const char *nginx, *fault, *docroot;
static char url_buf[4][1024];
static int url_slot;

/* BASE/LOCATION/NAME, in one of four rotating buffers. */
static const char *url(const char *base, const char *loc, const char *name)
{
    char *u = url_buf[url_slot++ % 4];
    snprintf(u, sizeof url_buf[0], "%s/%s/%s", base, loc, name);
    return u;
}

static onnxzip_remote_options opts(void)
{
    onnxzip_remote_options o;
    onnxzip_remote_options_init(&o);
    o.allow_http = 1;
    o.stall_timeout_ms = 1000;
    o.backoff_ms = 50;
    return o;
}

static uint8_t *payload(size_t n, uint32_t seed)
{
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
    return p;
}

/* DOCROOT/NAME: `n` UINT8 tensors w0.. of `each` bytes (payload seed + i),
 * the model padded by `pad` bytes. */
static void write_archive(const char *name, int n, uint64_t each, size_t pad, uint32_t seed)
{
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/%s", docroot, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    onnxzip_writer *w = NULL;
    CHECK_RC(onnxzip_writer_create(tmp, NULL, &w), 0);
    for (int i = 0; i < n && w; i++) {
        char e[16];
        snprintf(e, sizeof e, "w%d", i);
        uint8_t *p = payload((size_t)each, seed + (uint32_t)i);
        CHECK_RC(onnxzip_writer_add_memory(w, e, p, (size_t)each), 0);
        free(p);
    }
    size_t len;
    uint8_t *model = tu_model_entries(n, each, pad, &len);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
    CHECK(rename(tmp, path) == 0);
}

static const char *local(const char *name)
{
    static char p[1024];
    snprintf(p, sizeof p, "%s/%s", docroot, name);
    return p;
}

/* Flips byte `off` of DOCROOT/NAME in place. */
static void flip(const char *name, long off)
{
    FILE *f = fopen(local(name), "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

/* The remote handle lists what the local one does. */
static void same_index(onnxzip_archive *r, onnxzip_archive *l)
{
    CHECK(onnxzip_entry_count(r) == onnxzip_entry_count(l));
    for (size_t i = 0; i < onnxzip_entry_count(l) && i < onnxzip_entry_count(r); i++) {
        const onnxzip_entry *a = onnxzip_entry_at(r, i), *b = onnxzip_entry_at(l, i);
        CHECK(!strcmp(a->name, b->name) && a->header_offset == b->header_offset && a->data_offset == b->data_offset &&
              a->size == b->size && a->crc32 == b->crc32 && a->xxh3 == b->xxh3);
    }
    CHECK(onnxzip_tensor_count(r) == onnxzip_tensor_count(l));
    for (size_t i = 0; i < onnxzip_tensor_count(l) && i < onnxzip_tensor_count(r); i++) {
        const onnxzip_tensor *a = onnxzip_tensor_at(r, i), *b = onnxzip_tensor_at(l, i);
        CHECK(!strcmp(a->name, b->name) && a->storage == b->storage && a->file_offset == b->file_offset &&
              a->nbytes == b->nbytes && a->ndims == b->ndims && a->data_type == b->data_type);
        CHECK((a->storage == ONNXZIP_STORAGE_ENTRY) == (a->data == NULL));
    }
}

/* Every tensor read whole over HTTP equals the local view. */
static void same_bytes(onnxzip_archive *r, onnxzip_archive *l)
{
    for (size_t i = 0; i < onnxzip_tensor_count(l); i++) {
        const onnxzip_tensor *a = onnxzip_tensor_at(r, i), *b = onnxzip_tensor_at(l, i);
        uint64_t n = 0;
        if (onnxzip_tensor_size(l, b, &n)) continue; /* STRING */
        uint8_t *x = malloc(n ? n : 1), *y = malloc(n ? n : 1);
        CHECK_RC(onnxzip_tensor_read(r, a, 0, n, x), 0);
        CHECK_RC(onnxzip_tensor_read(l, b, 0, n, y), 0);
        CHECK(!memcmp(x, y, n));
        free(x);
        free(y);
    }
}

static void test_synthetic(void)
{
    const uint64_t each = (9u << 20) + 77; /* two pieces in flight per read */
    write_archive("syn.onnxzip", 2, each, 10, 1);
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL, *l = NULL;
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "syn.onnxzip"), &o, &r), 0);
    CHECK_RC(onnxzip_open(local("syn.onnxzip"), 0, &l), 0);
    if (!r || !l) goto out;
    onnxzip_remote_stats st;
    CHECK_RC(onnxzip_remote_get_stats(r, &st), 0);
    CHECK(st.requests == 1 && st.bytes_received <= 65536 && st.file_size > 2 * each);
    same_index(r, l);
    same_bytes(r, l);
    onnxzip_remote_stats st2;
    onnxzip_remote_get_stats(r, &st2);
    /* each tensor: its header, then two pieces; the bytes: the tensors and headers */
    CHECK(st2.requests == st.requests + 6);
    CHECK(st2.bytes_received - st.bytes_received < 2 * each + 2 * 200);
    const onnxzip_tensor *t = onnxzip_find_tensor(r, "w1");
    uint8_t buf[1000], *p = payload((size_t)each, 2);
    CHECK_RC(onnxzip_tensor_read(r, t, 12345, sizeof buf, buf), 0);
    CHECK(!memcmp(buf, p + 12345, sizeof buf));
    CHECK_RC(onnxzip_tensor_read(r, t, each - 10, 11, buf), ONNXZIP_ERANGE);
    CHECK_RC(onnxzip_verify(r), 0);
    CHECK_RC(onnxzip_check(r), 0);
    /* extract fetches; a view needs a local file */
    char out[1100];
    snprintf(out, sizeof out, "%s/extracted.bin", docroot);
    CHECK_RC(onnxzip_extract_tensor(r, "w1", out), 0);
    FILE *f = fopen(out, "rb");
    uint8_t *got = malloc((size_t)each);
    CHECK(f && fread(got, 1, (size_t)each, f) == each && fgetc(f) == EOF && !memcmp(got, p, (size_t)each));
    if (f) fclose(f);
    free(got);
    remove(out);
    void *view;
    size_t vlen;
    CHECK_RC(onnxzip_view_model(r, NULL, &view, &vlen), ONNXZIP_EUNSUPPORTED);
    snprintf(out, sizeof out, "%s/syn.view.onnx", docroot);
    CHECK_RC(onnxzip_view_write(r, out, NULL), ONNXZIP_EUNSUPPORTED);
    free(p);
    CHECK_RC(onnxzip_remote_get_stats(l, &st), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_fetch(l, "x", NULL, NULL), ONNXZIP_EINVAL);
out:
    onnxzip_close(&r);
    onnxzip_close(&l);
}

typedef struct reader {
    onnxzip_archive *a;
    uint64_t off;
    int ok;
} reader;

static void *read_slice(void *arg)
{
    reader *rd = arg;
    const onnxzip_tensor *t = onnxzip_find_tensor(rd->a, "w0");
    uint8_t *b = malloc(1 << 20), *p = payload(t->nbytes, 1);
    rd->ok = onnxzip_tensor_read(rd->a, t, rd->off, 1 << 20, b) == 0 && !memcmp(b, p + rd->off, 1 << 20);
    free(b);
    free(p);
    return NULL;
}

/* Threads reading one handle at once, before any checked the header. */
static void test_threads(void)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "syn.onnxzip"), &o, &r), 0);
    if (!r) return;
    pthread_t th[4];
    reader rd[4];
    for (int i = 0; i < 4; i++) {
        rd[i] = (reader){ r, (uint64_t)i * (2u << 20), 0 };
        pthread_create(&th[i], NULL, read_slice, &rd[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(rd[i].ok);
    }
    onnxzip_close(&r);
}

/* The file replaced on the server after open: never mixed. */
static void test_replaced(void)
{
    write_archive("swap.onnxzip", 2, 5000, 10, 7);
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "swap.onnxzip"), &o, &r), 0);
    write_archive("swap.onnxzip", 2, 5000, 500, 9); /* another size: another ETag */
    if (!r) return;
    uint8_t b[100];
    CHECK_RC(onnxzip_tensor_read(r, onnxzip_find_tensor(r, "w0"), 0, sizeof b, b), ONNXZIP_ECHANGED);
    CHECK_RC(onnxzip_check(r), ONNXZIP_ECHANGED);
    CHECK_RC(onnxzip_verify(r), ONNXZIP_ECHANGED);
    onnxzip_close(&r);
}

/* Damage found where onnxzip_open() finds it: a local header at open when
 * its bytes came in the first request (as onnxzip_open() checks them all),
 * else on the first read of its entry; data by verify. */
static void test_damaged(void)
{
    write_archive("badhdr.onnxzip", 2, 5000, 10, 3);
    write_archive("badcrc.onnxzip", 2, 5000, 10, 3);
    onnxzip_archive *l = NULL, *r = NULL;
    CHECK_RC(onnxzip_open(local("badhdr.onnxzip"), 0, &l), 0);
    uint64_t lho = l ? onnxzip_entry_at(l, 1)->header_offset : 0, data = l ? onnxzip_entry_at(l, 1)->data_offset : 0;
    onnxzip_close(&l);
    flip("badhdr.onnxzip", (long)lho + 30); /* the local name of the second entry */
    flip("badcrc.onnxzip", (long)data + 100);
    CHECK_RC(onnxzip_open(local("badhdr.onnxzip"), 0, &l), ONNXZIP_ELOCAL);
    onnxzip_remote_options o = opts();
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "badhdr.onnxzip"), &o, &r), ONNXZIP_ELOCAL); /* all in the tail */
    onnxzip_close(&r);
    o.tail_bytes = 4096; /* the damaged header before the first request's bytes */
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "badhdr.onnxzip"), &o, &r), 0);
    uint8_t b[100];
    if (r) {
        const onnxzip_tensor *t0 = onnxzip_find_tensor(r, "w0"), *t1 = onnxzip_find_tensor(r, "w1");
        CHECK_RC(onnxzip_tensor_read(r, t0, 0, sizeof b, b), 0);
        CHECK_RC(onnxzip_tensor_read(r, t1, 0, sizeof b, b), ONNXZIP_ELOCAL);
        CHECK_RC(onnxzip_tensor_read(r, t1, 0, sizeof b, b), ONNXZIP_ELOCAL); /* every time */
        CHECK_RC(onnxzip_verify(r), ONNXZIP_ELOCAL);
        onnxzip_close(&r);
    }
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "badcrc.onnxzip"), &o, &r), 0);
    if (r) CHECK_RC(onnxzip_verify(r), ONNXZIP_ECRC);
    onnxzip_close(&r);
}

/* A directory larger than the first request: still two requests. */
static void test_big_directory(void)
{
    write_archive("many.onnxzip", 3000, 64, 10, 5);
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL, *l = NULL;
    onnxzip_remote_stats st;
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "many.onnxzip"), &o, &r), 0);
    CHECK_RC(onnxzip_open(local("many.onnxzip"), 0, &l), 0);
    if (r && l) {
        onnxzip_remote_get_stats(r, &st);
        CHECK(st.requests == 2);
        CHECK(onnxzip_entry_at(l, 0)->header_offset == 0);
        same_index(r, l);
        CHECK_RC(onnxzip_verify(r), 0);
    }
    onnxzip_close(&r);
    o.tail_bytes = 4096; /* a tail of 4 KiB: the model's record is not in it */
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "syn.onnxzip"), &o, &r), 0);
    if (r) {
        onnxzip_remote_get_stats(r, &st);
        CHECK(st.requests <= 2);
    }
    onnxzip_close(&r);
    onnxzip_close(&l);
}

typedef struct fault_case {
    const char *mode;
    int want;
} fault_case;

/* Each misbehaviour with its status; retried ones end well. */
static void test_faults(void)
{
    write_archive("f.onnxzip", 2, 100000, 10, 11);
    static const fault_case cases[] = {
        { "ok", 0 }, { "noranges", ONNXZIP_ENORANGE }, { "trunc", ONNXZIP_ENETWORK }, { "truncfirst", 0 },
        { "flaky503", 0 }, { "stall", ONNXZIP_ETIMEOUT }, { "stallbody", ONNXZIP_ETIMEOUT },
        { "liar_total", ONNXZIP_EREPLY }, { "wrong_range", ONNXZIP_EREPLY }, { "extra", ONNXZIP_EREPLY },
        { "noetag", ONNXZIP_EHTTP }, { "weaketag", ONNXZIP_EHTTP }, { "status500", ONNXZIP_EHTTP },
        /* not HTTP, or framing that contradicts itself: refused saying so (run.py checks the words) */
        { "nostatus", ONNXZIP_EREPLY }, { "status2060", ONNXZIP_EREPLY }, { "longheader", ONNXZIP_EREPLY },
        { "overlong", ONNXZIP_EREPLY },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        onnxzip_remote_options o = opts();
        o.retries = 2;
        onnxzip_archive *r = NULL;
        int rc = onnxzip_open_url(url(fault, cases[i].mode, "f.onnxzip"), &o, &r);
        uint8_t b[64];
        if (!rc) rc = onnxzip_tensor_read(r, onnxzip_find_tensor(r, "w1"), 99000, sizeof b, b);
        if (!rc) rc = onnxzip_verify(r);
        if (rc != cases[i].want) printf("fault mode %s: %s\n", cases[i].mode, onnxzip_last_error()->message);
        CHECK_RC(rc, cases[i].want);
        onnxzip_remote_stats st;
        if (r && !onnxzip_remote_get_stats(r, &st) && strstr(cases[i].mode, "503")) CHECK(st.retries == 2);
        if (r && !strcmp(cases[i].mode, "truncfirst")) CHECK(st.retries >= 1);
        onnxzip_close(&r);
    }
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    CHECK_RC(onnxzip_open_url(url(fault, "changing", "f.onnxzip"), &o, &r), 0); /* one request: the tail */
    uint8_t b[64];
    if (r) CHECK_RC(onnxzip_tensor_read(r, onnxzip_find_tensor(r, "w1"), 0, sizeof b, b), ONNXZIP_ECHANGED);
    onnxzip_close(&r);
    o.allow_http = 0;
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "f.onnxzip"), &o, &r), ONNXZIP_EINVAL);
    o = opts();
    CHECK_RC(onnxzip_open_url(url(nginx, "missing", "f.onnxzip"), &o, &r), ONNXZIP_EHTTP);
    CHECK_RC(onnxzip_open_url(url(nginx, "loop", "f.onnxzip"), &o, &r), ONNXZIP_EHTTP);
    CHECK_RC(onnxzip_open_url(url(nginx, "redirect", "f.onnxzip"), &o, &r), 0);
    onnxzip_close(&r);
    o.max_redirects = 0;
    CHECK_RC(onnxzip_open_url(url(nginx, "redirect", "f.onnxzip"), &o, &r), ONNXZIP_EHTTP);
    CHECK_RC(onnxzip_open_url("ftp://127.0.0.1/f.onnxzip", &o, &r), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open_url("https://127.0.0.1:1/f.onnxzip", &o, &r), ONNXZIP_ENETWORK);
}

static int same_file(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y, c;
    while (same && (c = fgetc(x)) == fgetc(y))
        if (c == EOF) break;
    same = same && c == EOF;
    if (x) fclose(x);
    if (y) fclose(y);
    return same;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The files a fetch to OUT keeps while it runs: OUT.part and OUT.part.etag. */
typedef struct part_files {
    char part[1100], meta[1100];
} part_files;

static part_files part_files_of(const char *out)
{
    part_files f;
    snprintf(f.part, sizeof f.part, "%s.part", out);
    snprintf(f.meta, sizeof f.meta, "%s.part.etag", out);
    return f;
}

/* Neither of a fetch's part files is left beside OUT. */
static int no_part_files(const char *out)
{
    part_files f = part_files_of(out);
    return !exists(f.part) && !exists(f.meta);
}

/* Downloads: whole; over a stale part (restarted); from a file replaced
 * meanwhile (refused, nothing kept). Resuming after a kill: run.py. */
static void test_fetch(char *dir)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    const char *out = tu_path(dir, "got.onnxzip");
    part_files stale = part_files_of(out);
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "syn.onnxzip"), &o, &r), 0);
    if (r) CHECK_RC(onnxzip_fetch(r, out, NULL, NULL), 0);
    CHECK(same_file(out, local("syn.onnxzip")) && no_part_files(out));
    remove(out);
    write_file(stale.part, "not the archive's first bytes");
    write_file(stale.meta, "123 ETag \"other\"\n");
    if (r) CHECK_RC(onnxzip_fetch(r, out, NULL, NULL), 0);
    CHECK(same_file(out, local("syn.onnxzip")) && no_part_files(out));
    onnxzip_close(&r);
    remove(out);
    write_archive("swap2.onnxzip", 2, 5000, 10, 7);
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "swap2.onnxzip"), &o, &r), 0);
    write_archive("swap2.onnxzip", 2, 5000, 600, 7);
    if (r) CHECK_RC(onnxzip_fetch(r, out, NULL, NULL), ONNXZIP_ECHANGED);
    CHECK(!exists(out) && no_part_files(out));
    onnxzip_close(&r);
}

/* A shard: only w0's entry crosses the network; w1 becomes a graph input. */
static void test_shard(char *dir)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL, *sh = NULL, *l = NULL;
    const char *out = tu_path(dir, "shard.onnxzip");
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "syn.onnxzip"), &o, &r), 0);
    if (!r) return;
    const char *pat[] = { "nothing*", "w[0]" }, *none[] = { "x?" };
    onnxzip_remote_stats before, after;
    onnxzip_remote_get_stats(r, &before);
    CHECK_RC(onnxzip_fetch_tensors(r, out, pat, 2, NULL, NULL), 0);
    onnxzip_remote_get_stats(r, &after);
    const onnxzip_tensor *t0 = onnxzip_find_tensor(r, "w0");
    uint64_t got = after.bytes_received - before.bytes_received;
    CHECK(got >= t0->nbytes && got < t0->nbytes + 200);
    CHECK_RC(onnxzip_open(out, ONNXZIP_OPEN_VERIFY, &sh), 0);
    if (sh) {
        CHECK(onnxzip_entry_count(sh) == 2 && onnxzip_tensor_count(sh) == 1);
        const onnxzip_tensor *s0 = onnxzip_find_tensor(sh, "w0");
        uint8_t *p = payload((size_t)t0->nbytes, 1);
        CHECK(s0 && s0->nbytes == t0->nbytes && !memcmp(s0->data, p, (size_t)s0->nbytes));
        free(p);
        const void *m;
        size_t mlen;
        onnxzip_model_bytes(sh, &m, &mlen);
        CHECK(tu_memmem(m, mlen, "w1", 2) != NULL); /* declared as an input */
    }
    onnxzip_close(&sh);
    CHECK_RC(onnxzip_fetch_tensors(r, tu_path(dir, "none.onnxzip"), none, 1, NULL, NULL), ONNXZIP_ENOTFOUND);
    CHECK(tu_count_files(dir, "none") == 0);
    CHECK_RC(onnxzip_open(local("syn.onnxzip"), 0, &l), 0); /* from a local archive too */
    if (l) CHECK_RC(onnxzip_fetch_tensors(l, tu_path(dir, "local.onnxzip"), pat, 2, NULL, NULL), 0);
    CHECK(same_file(tu_path(dir, "local.onnxzip"), out));
    onnxzip_close(&l);
    onnxzip_close(&r);
}

/* Progress callbacks: how many calls; cancel at call `stop_at` (0: never). */
typedef struct calls {
    int n, stop_at;
    uint64_t last, total;
} calls;

static void count_call(void *user, uint64_t done, uint64_t total)
{
    calls *c = user;
    c->last = done;
    c->total = total;
    if (++c->n == c->stop_at) onnxzip_cancel();
}

/* onnxzip_cancel() in a progress callback stops fetch and fetch_tensors
 * with ONNXZIP_ECANCELED and nothing written; called anywhere else, it
 * stops nothing. */
static void test_cancel(char *dir)
{
    onnxzip_remote_options o = opts();
    onnxzip_archive *r = NULL;
    const char *out = tu_path(dir, "cancel.onnxzip");
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "syn.onnxzip"), &o, &r), 0);
    if (!r) return;
    calls c = { 0, 1, 0, 0 };
    CHECK_RC(onnxzip_fetch(r, out, count_call, &c), ONNXZIP_ECANCELED);
    CHECK(c.n == 1 && !exists(out) && no_part_files(out));
    const char *pat[] = { "w*" };
    c = (calls){ 0, 1, 0, 0 };
    CHECK_RC(onnxzip_fetch_tensors(r, out, pat, 1, count_call, &c), ONNXZIP_ECANCELED);
    CHECK(c.n == 1 && !exists(out) && tu_count_files(dir, "cancel") == 0);
    onnxzip_cancel(); /* outside a callback: no effect on the next call */
    c = (calls){ 0, 0, 0, 0 };
    CHECK_RC(onnxzip_fetch(r, out, count_call, &c), 0);
    CHECK(c.n >= 1 && c.last == c.total && same_file(out, local("syn.onnxzip")));
    onnxzip_close(&r);
}

/* Chunked fetches: 64 KiB chunks, 8 connections, entries straddling chunks. */
#define CHUNK 65536

static onnxzip_remote_options chunk_opts(void)
{
    onnxzip_remote_options o = opts();
    o.chunk_size = CHUNK;
    o.parallel = 8;
    return o;
}

static uint64_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* OUT.part holding the source's bytes [from, to) of each span, and
 * OUT.part.etag recording them as nginx's ETag ("mtime-size" in hex) names
 * the source: what an interrupted fetch leaves. */
static void fake_part(const char *out, const char *name, const uint64_t (*spans)[3], size_t n)
{
    part_files pf = part_files_of(out);
    struct stat st;
    CHECK(stat(local(name), &st) == 0);
    FILE *src = fopen(local(name), "rb"), *dst = fopen(pf.part, "wb");
    char meta[1000];
    int k = snprintf(meta, sizeof meta, "%llu ETag \"%llx-%llx\"\n", (unsigned long long)st.st_size,
                     (unsigned long long)st.st_mtime, (unsigned long long)st.st_size);
    for (size_t i = 0; i < n && src && dst; i++) {
        uint8_t *b = malloc((size_t)spans[i][2]);
        fseek(src, (long)spans[i][0], SEEK_SET);
        fseek(dst, (long)spans[i][0], SEEK_SET);
        CHECK(fread(b, 1, (size_t)spans[i][2], src) == spans[i][2] && fwrite(b, 1, (size_t)spans[i][2], dst) == spans[i][2]);
        free(b);
        k += snprintf(meta + k, sizeof meta - (size_t)k, "%llu %llu %llu\n", (unsigned long long)spans[i][0],
                      (unsigned long long)spans[i][1], (unsigned long long)spans[i][2]);
    }
    if (src) fclose(src);
    if (dst) fclose(dst);
    write_file(pf.meta, meta);
}

/* Bytes received and requests sent by fetch(out) of NAME with chunk_opts. */
static int fetch_counted(const char *name, const char *out, uint64_t *got, uint64_t *requests)
{
    onnxzip_remote_options o = chunk_opts();
    onnxzip_archive *r = NULL;
    onnxzip_remote_stats a, b;
    int rc = onnxzip_open_url(url(nginx, "files", name), &o, &r);
    if (rc) return rc;
    onnxzip_remote_get_stats(r, &a);
    rc = onnxzip_fetch(r, out, NULL, NULL);
    onnxzip_remote_get_stats(r, &b);
    *got = b.bytes_received - a.bytes_received;
    *requests = b.requests - a.requests;
    onnxzip_close(&r);
    return rc;
}

static void test_chunks(char *dir)
{
    write_archive("chunks.onnxzip", 6, 100003, 10, 21);
    uint64_t size = file_size(local("chunks.onnxzip")), got = 0, req = 0, want = (size + CHUNK - 1) / CHUNK;
    const char *out = tu_path(dir, "chunks.onnxzip");
    CHECK_RC(fetch_counted("chunks.onnxzip", out, &got, &req), 0);
    printf("chunked fetch: %llu bytes in %llu requests (%llu chunks)\n", (unsigned long long)got,
           (unsigned long long)req, (unsigned long long)want);
    CHECK(same_file(out, local("chunks.onnxzip")) && no_part_files(out) && got == size && req == want);
    remove(out);
    /* resumed: chunks 0-2 and part of chunk 5 on disk; only the rest is asked for */
    const uint64_t spans[][3] = { { 0, 3 * CHUNK, 3 * CHUNK }, { 5 * CHUNK, 6 * CHUNK, 1000 } };
    fake_part(out, "chunks.onnxzip", spans, 2);
    CHECK_RC(fetch_counted("chunks.onnxzip", out, &got, &req), 0);
    printf("resumed fetch: %llu bytes in %llu requests\n", (unsigned long long)got, (unsigned long long)req);
    CHECK(same_file(out, local("chunks.onnxzip")) && no_part_files(out) && got == size - 3 * CHUNK - 1000 &&
          req == want - 3);
    remove(out);
    /* resumed over bytes damaged on disk in chunk 2 (entry w1): refetched from w1 on, w0 kept */
    fake_part(out, "chunks.onnxzip", spans, 2);
    part_files pf = part_files_of(out);
    FILE *f = fopen(pf.part, "r+b");
    if (f) {
        fseek(f, 2 * CHUNK + 5000, SEEK_SET);
        fputc(~0x2a, f);
        fclose(f);
    }
    CHECK_RC(fetch_counted("chunks.onnxzip", out, &got, &req), 0);
    printf("resumed over damage: %llu bytes\n", (unsigned long long)got);
    onnxzip_archive *l = NULL;
    CHECK_RC(onnxzip_open(local("chunks.onnxzip"), 0, &l), 0);
    const onnxzip_entry *w0 = l ? onnxzip_entry_at(l, 0) : NULL;
    uint64_t w0_end = w0 ? w0->data_offset + w0->size : 0;
    onnxzip_close(&l);
    /* what the first round got before the checker stopped it, then all from w1 on: never w0 again */
    CHECK(same_file(out, local("chunks.onnxzip")) && no_part_files(out) && got > size - 3 * CHUNK - 1000 &&
          w0_end > 0 && w0_end < 2 * CHUNK + 5000 && got <= size - 3 * CHUNK - 1000 + size - w0_end);
    remove(out);
    /* damage at the origin, in a middle chunk: ECRC, nothing kept */
    write_archive("chunkbad.onnxzip", 6, 100003, 10, 21);
    flip("chunkbad.onnxzip", 3 * CHUNK + 77);
    CHECK_RC(fetch_counted("chunkbad.onnxzip", out, &got, &req), ONNXZIP_ECRC);
    CHECK(!exists(out) && no_part_files(out));
}

/* A shard over chunked spans: the kept entries' bytes only, in 64 KiB requests. */
static void test_chunked_shard(char *dir)
{
    onnxzip_remote_options o = chunk_opts();
    onnxzip_archive *r = NULL, *sh = NULL;
    const char *out = tu_path(dir, "cshard.onnxzip"), *pat[] = { "w[1235]" };
    CHECK_RC(onnxzip_open_url(url(nginx, "files", "chunks.onnxzip"), &o, &r), 0);
    if (!r) return;
    onnxzip_remote_stats a, b;
    onnxzip_remote_get_stats(r, &a);
    CHECK_RC(onnxzip_fetch_tensors(r, out, pat, 1, NULL, NULL), 0);
    onnxzip_remote_get_stats(r, &b);
    uint64_t spans = 0, requests = 0;
    const char *runs[][2] = { { "w1", "w3" }, { "w5", "w5" } };
    for (int i = 0; i < 2; i++) {
        const onnxzip_entry *e0 = NULL, *e1 = NULL;
        for (size_t k = 0; k < onnxzip_entry_count(r); k++) {
            const onnxzip_entry *e = onnxzip_entry_at(r, k);
            if (!strcmp(e->name, runs[i][0])) e0 = e;
            if (!strcmp(e->name, runs[i][1])) e1 = e;
        }
        uint64_t len = e0 && e1 ? e1->data_offset + e1->size - e0->header_offset : 0;
        spans += len;
        requests += (len + CHUNK - 1) / CHUNK;
    }
    printf("chunked shard: %llu bytes in %llu requests for spans of %llu bytes\n",
           (unsigned long long)(b.bytes_received - a.bytes_received), (unsigned long long)(b.requests - a.requests),
           (unsigned long long)spans);
    CHECK(b.bytes_received - a.bytes_received == spans && b.requests - a.requests == requests);
    CHECK_RC(onnxzip_open(out, ONNXZIP_OPEN_VERIFY, &sh), 0);
    if (sh) {
        CHECK(onnxzip_entry_count(sh) == 5 && onnxzip_tensor_count(sh) == 4);
        for (int i = 1; i < 6; i++) {
            char n[8];
            snprintf(n, sizeof n, "w%d", i);
            const onnxzip_tensor *t = onnxzip_find_tensor(sh, n);
            uint8_t *p = payload(100003, 21 + (uint32_t)i);
            CHECK(i == 4 ? t == NULL : t && t->nbytes == 100003 && !memcmp(t->data, p, 100003));
            free(p);
        }
    }
    onnxzip_close(&sh);
    onnxzip_close(&r);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_remote NGINX_URL FAULT_URL DOCROOT (run by tests/remote/run.py)\n");
        return 2;
    }
    nginx = argv[1];
    fault = argv[2];
    docroot = argv[3];
    if (!onnxzip_has_feature(ONNXZIP_FEATURE_REMOTE)) {
        fprintf(stderr, "test_remote: this build has no libcurl\n");
        return 1;
    }
    char *dir = tu_tmpdir();
    test_synthetic();
    test_threads();
    test_replaced();
    test_damaged();
    test_big_directory();
    test_faults();
    test_fetch(dir);
    test_shard(dir);
    test_cancel(dir);
    test_chunks(dir);
    test_chunked_shard(dir);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("remote");
}
