/* The host API (onnxzip.h, "Advanced: archives whose bytes the caller
 * reads"), the WebAssembly binding's only way in, checked against the local
 * open of the same file (onnxzip_open_buffer()): the open with and without
 * synchronous reads, windows widened as asked, first-read header checks,
 * views built from the host's bytes, the streaming verifier; a file cut
 * short (the local open's status and words); and its refusals (bad
 * windows, NULL arguments, reads not at hand). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "testutil.h"

typedef struct file {
    uint8_t *p;
    size_t n;
    int misses; /* reads to refuse (-1) before answering */
} file;

static int64_t file_read(void *ctx, uint64_t off, size_t n, void *dst)
{
    file *f = ctx;
    if (f->misses > 0 && f->misses--) return -1;
    if (off >= f->n) return 0;
    size_t k = f->n - off < n ? (size_t)(f->n - off) : n;
    memcpy(dst, f->p + off, k);
    return (int64_t)k;
}

/* An archive of three entry tensors (one large, so that the model and the
 * directory lie before a small tail) and two inline ones. */
static uint8_t *make_archive(const char *dir, size_t *n)
{
    static const tu_tensor t[] = {
        { "big", 2, { 300000 }, 1, "big", 0 },   { "w1", 1, { 64 }, 1, "w1", 0 },
        { "w2", 1, { 3, 5 }, 2, "w2", 0 },        { "in_a", 2, { 100 }, 1, NULL, 100 },
        { "in_b", 1, { 600 }, 1, NULL, 2400 },
    };
    size_t mlen;
    uint8_t *m = tu_model(t, 5, &mlen);
    const char *path = tu_path(dir, "m.onnxzip");
    onnxzip_writer *w = NULL;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    uint8_t *data = malloc(300000);
    for (size_t i = 0; i < 300000; i++) data[i] = (uint8_t)(i * 7 + 3);
    CHECK_RC(onnxzip_writer_add_memory(w, "big", data, 300000), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w1", data + 11, 64 * 4), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w2", data + 999, 15 * 4), 0);
    CHECK_RC(onnxzip_writer_set_model(w, m, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(data);
    free(m);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(*n);
    CHECK(fread(p, 1, *n, f) == *n);
    fclose(f);
    return p;
}

/* onnxzip_open_host() from the last `tail` bytes, widened as asked. */
static int open_host(file *f, size_t tail, int with_read, onnxzip_archive **a, int *rounds)
{
    uint64_t from = f->n > tail ? f->n - tail : 0;
    for (*rounds = 0; *rounds < 4; ++*rounds) {
        onnxzip_host_source src = { .name = "host.onnxzip", .size = f->n, .window = f->p + from,
                                    .window_len = f->n - (size_t)from, .read = with_read ? file_read : NULL,
                                    .ctx = f };
        uint64_t need = 0;
        int rc = onnxzip_open_host(&src, a, &need);
        if (rc || *a) return rc;
        CHECK(need < from);
        from = need;
    }
    return -1;
}

static void same_index(const onnxzip_archive *l, const onnxzip_archive *h)
{
    CHECK(onnxzip_entry_count(l) == onnxzip_entry_count(h));
    for (size_t i = 0; i < onnxzip_entry_count(l) && i < onnxzip_entry_count(h); i++) {
        const onnxzip_entry *x = onnxzip_entry_at(l, i), *y = onnxzip_entry_at(h, i);
        CHECK(!strcmp(x->name, y->name) && x->data_offset == y->data_offset && x->crc32 == y->crc32);
    }
    CHECK(onnxzip_tensor_count(l) == onnxzip_tensor_count(h));
    for (size_t i = 0; i < onnxzip_tensor_count(l) && i < onnxzip_tensor_count(h); i++) {
        const onnxzip_tensor *x = onnxzip_tensor_at(l, i), *y = onnxzip_tensor_at(h, i);
        CHECK(!strcmp(x->name, y->name) && x->file_offset == y->file_offset && x->nbytes == y->nbytes);
    }
    char *a = NULL, *b = NULL;
    CHECK_RC(onnxzip_listing(l, ONNXZIP_LISTING_JSON, &a), 0);
    CHECK_RC(onnxzip_listing(h, ONNXZIP_LISTING_JSON, &b), 0);
    /* the name aside ("<buffer>" and "host.onnxzip"), byte for byte */
    const char *ea = a ? strstr(a, "\"entries\"") : NULL, *eb = b ? strstr(b, "\"entries\"") : NULL;
    CHECK(ea && eb && !strcmp(ea, eb));
    onnxzip_free(a);
    onnxzip_free(b);
}

typedef struct gather {
    const file *f;
    uint8_t *bytes;
    size_t n;
} gather;

static int collect(void *ctx, uint64_t off, uint64_t len)
{
    gather *g = ctx;
    g->bytes = realloc(g->bytes, g->n + (size_t)len);
    memcpy(g->bytes + g->n, g->f->p + off, (size_t)len);
    g->n += (size_t)len;
    return 0;
}

/* The host's view equals onnxzip_view_model() of the mapped file. */
static void views(const onnxzip_archive *l, const onnxzip_archive *h, const file *f, uint64_t threshold)
{
    onnxzip_view_options o;
    onnxzip_view_options_init(&o);
    o.location = "m.onnxzip";
    o.size_threshold = threshold;
    void *want = NULL, *got = NULL;
    size_t wn = 0, gn = 0;
    CHECK_RC(onnxzip_view_model(l, &o, &want, &wn), 0);
    gather g = { f, NULL, 0 };
    CHECK_RC(onnxzip_view_inline_spans(h, threshold, collect, &g), 0);
    CHECK_RC(onnxzip_view_model_inline(h, &o, g.bytes, g.n, &got, &gn), 0);
    CHECK(want && got && wn == gn && !memcmp(want, got, wn));
    void *none = &none;
    size_t nn = 1;
    if (g.n) {
        CHECK_RC(onnxzip_view_model_inline(h, &o, g.bytes, g.n - 1, &none, &nn), ONNXZIP_EINVAL);
        CHECK(none == NULL && nn == 0);
    }
    CHECK(threshold < 1024 || g.n > 0); /* the inline tensors' ranges, at least */
    onnxzip_free(want);
    onnxzip_free(got);
    free(g.bytes);
}

static int verify_fed(const onnxzip_archive *h, const uint8_t *p, size_t n)
{
    onnxzip_verifier *v = NULL;
    int rc = onnxzip_verifier_begin(h, &v);
    for (size_t at = 0, step = 1; !rc && at < n; at += step, step = step * 5 % 7919 + 1)
        rc = onnxzip_verifier_feed(v, p + at, step < n - at ? step : n - at);
    if (rc) {
        onnxzip_verifier_free(&v);
        CHECK(v == NULL);
        return rc;
    }
    rc = onnxzip_verifier_end(&v);
    CHECK(v == NULL);
    return rc;
}

/* The file cut short by 100 bytes: with reads the host's open says what
 * the local open of the same bytes says (ONNXZIP_ETRUNC, the same words
 * after the name), though its window holds no local header; without reads
 * it saw only the window. */
static void cut_short(file *f)
{
    file cut = { f->p, f->n - 100, 0 };
    onnxzip_archive *a = NULL;
    int rounds = 0;
    CHECK_RC(onnxzip_open_buffer(cut.p, cut.n, 0, &a), ONNXZIP_ETRUNC);
    char want[1024];
    const char *m = strchr(onnxzip_last_error()->message, ':');
    snprintf(want, sizeof want, "host.onnxzip%s", m ? m : "");
    CHECK(strstr(want, "the download or copy was cut short") != NULL);
    CHECK_RC(open_host(&cut, 512, 1, &a, &rounds), ONNXZIP_ETRUNC);
    CHECK(a == NULL && !strcmp(onnxzip_last_error()->message, want));
    cut.misses = 1; /* a local header not at hand: EIO (the host reads it, then opens again) */
    CHECK_RC(open_host(&cut, 512, 1, &a, &rounds), ONNXZIP_EIO);
    CHECK(strstr(onnxzip_last_error()->message, "not at hand") != NULL);
    CHECK_RC(open_host(&cut, 512, 1, &a, &rounds), ONNXZIP_ETRUNC);
    CHECK_RC(open_host(&cut, 512, 0, &a, &rounds), ONNXZIP_ENOTZIP);
    CHECK(strstr(onnxzip_last_error()->message, "in its last 512 bytes") != NULL);
    CHECK(a == NULL);
}

static void refusals(file *f)
{
    onnxzip_archive *a = (onnxzip_archive *)f; /* must be set to NULL */
    uint64_t need = 7;
    onnxzip_host_source src = { .name = "x", .size = f->n, .window = f->p, .window_len = f->n + 1 };
    CHECK_RC(onnxzip_open_host(&src, &a, &need), ONNXZIP_EINVAL); /* longer than the file */
    CHECK(a == NULL);
    src.window = NULL;
    src.window_len = 10;
    CHECK_RC(onnxzip_open_host(&src, &a, &need), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open_host(NULL, &a, &need), ONNXZIP_EINVAL);
    src = (onnxzip_host_source){ .name = "junk", .size = 5000, .window = f->p, .window_len = 5000 };
    memset(f->p, 'x', 5000);
    CHECK_RC(onnxzip_open_host(&src, &a, &need), ONNXZIP_ENOTZIP);
    CHECK(strstr(onnxzip_last_error()->message, "junk") != NULL);
}

int main(void)
{
    char *dir = tu_tmpdir();
    file f = { 0 };
    f.p = make_archive(dir, &f.n);
    onnxzip_archive *l = NULL, *h = NULL, *w = NULL;
    int rounds = 0;
    CHECK_RC(onnxzip_open_buffer(f.p, f.n, 0, &l), 0);
    /* with reads: every header at open; a tail of 512 bytes needs the model and directory */
    CHECK_RC(open_host(&f, 512, 1, &h, &rounds), 0);
    CHECK(rounds >= 1);
    if (l && h) same_index(l, h);
    /* reads not at hand: EIO naming the offset, then the open succeeds */
    onnxzip_archive *miss = NULL;
    f.misses = 1;
    CHECK_RC(open_host(&f, f.n, 1, &miss, &rounds), ONNXZIP_EIO);
    CHECK(strstr(onnxzip_last_error()->message, "not at hand") != NULL);
    CHECK_RC(open_host(&f, f.n, 1, &miss, &rounds), 0);
    onnxzip_close(&miss);
    /* without reads: headers on first read; a wrong header refused */
    CHECK_RC(open_host(&f, 65536, 0, &w, &rounds), 0);
    if (l && w) {
        same_index(l, w);
        const onnxzip_entry *e = onnxzip_entry_at(w, 0);
        size_t hl = (size_t)(e->data_offset - e->header_offset);
        uint8_t *hdr = malloc(hl);
        memcpy(hdr, f.p + e->header_offset, hl);
        hdr[30] ^= 0x20; /* the name's first byte */
        CHECK(onnxzip_host_check_header(w, 0, hdr, hl) != 0);
        CHECK_RC(onnxzip_host_check_header(w, 0, hdr, hl - 1), ONNXZIP_EINVAL);
        CHECK_RC(onnxzip_host_check_header(w, onnxzip_entry_count(w), hdr, hl), ONNXZIP_EINVAL);
        hdr[30] ^= 0x20;
        CHECK_RC(onnxzip_host_check_header(w, 0, hdr, hl), 0);
        free(hdr);
        /* an entry's data the host read: its CRC-32 (zlib's, the oracle) decides */
        uint8_t *d = malloc((size_t)e->size + 1);
        memcpy(d, f.p + e->data_offset, (size_t)e->size);
        CHECK(crc32(0, d, (uInt)e->size) == e->crc32);
        CHECK_RC(onnxzip_host_check_data(w, 0, d, (size_t)e->size), 0);
        CHECK_RC(onnxzip_host_check_data(w, 0, d, (size_t)e->size + 1), ONNXZIP_EINVAL);
        CHECK_RC(onnxzip_host_check_data(w, onnxzip_entry_count(w), d, (size_t)e->size), ONNXZIP_EINVAL);
        d[e->size / 2] ^= 1;
        CHECK_RC(onnxzip_host_check_data(w, 0, d, (size_t)e->size), ONNXZIP_ECRC);
        CHECK(strstr(onnxzip_last_error()->message, e->name) != NULL);
        free(d);
        const onnxzip_tensor *t = onnxzip_find_tensor(w, "w1");
        uint8_t buf[16];
        CHECK(t && t->data == NULL);
        if (t) CHECK_RC(onnxzip_tensor_read(w, t, 0, sizeof buf, buf), ONNXZIP_EUNSUPPORTED);
        views(l, w, &f, 1024);
        views(l, w, &f, 0);
        views(l, w, &f, (uint64_t)1 << 30);
        /* the streaming verifier: the file as it is, then one byte changed in a weight */
        CHECK_RC(verify_fed(w, f.p, f.n), 0);
        CHECK_RC(verify_fed(w, f.p, f.n - 1), ONNXZIP_ETRUNC);
        f.p[onnxzip_entry_at(w, 0)->data_offset + 5] ^= 1;
        CHECK_RC(verify_fed(w, f.p, f.n), ONNXZIP_ECRC);
        f.p[onnxzip_entry_at(w, 0)->data_offset + 5] ^= 1;
    }
    if (l) {
        /* one byte of the model changed: refused at open without reads (a host over a network, as a URL),
         * the open with reads (a local host) as onnxzip_open() (verify finds it) */
        const onnxzip_entry *me = onnxzip_entry_at(l, onnxzip_entry_count(l) - 1);
        onnxzip_archive *bad = NULL;
        f.p[me->data_offset + me->size / 2] ^= 0x20;
        CHECK_RC(open_host(&f, 65536, 0, &bad, &rounds), ONNXZIP_ECRC);
        CHECK(strstr(onnxzip_last_error()->message, "__MODEL_PROTO") != NULL);
        CHECK_RC(open_host(&f, 65536, 1, &bad, &rounds), 0);
        onnxzip_close(&bad);
        f.p[me->data_offset + me->size / 2] ^= 0x20;
    }
    if (h) {
        /* tensor reads through the host's read function */
        const onnxzip_tensor *t = onnxzip_find_tensor(h, "big");
        uint8_t buf[32];
        CHECK(t != NULL);
        if (t) {
            CHECK_RC(onnxzip_tensor_read(h, t, 1000, sizeof buf, buf), 0);
            CHECK(!memcmp(buf, f.p + t->file_offset + 1000, sizeof buf));
        }
    }
    onnxzip_close(&h);
    onnxzip_close(&w);
    onnxzip_close(&l);
    cut_short(&f);
    refusals(&f);
    free(f.p);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("host_source");
}
