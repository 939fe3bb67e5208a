/* Packages (spec 19) through the C API: written entry by entry with
 * ONNXZIP_WRITE_PACKAGE, then read back — members, each model opened by
 * path with its references resolved in its directory, a file's bytes in
 * place, the members-only open, every central record's digest field
 * recording generation 2 (read from the raw bytes here, not through the
 * library), a model replaced, and what writers and readers refuse. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static const char config[] = "{\"model_type\": \"t5\"}\n";
static uint8_t w_bytes[4096], v_bytes[256], top_bytes[128];

/* onnx/a.onnx: w, v; onnx/b.onnx: w (shared); m.onnx: top. */
static uint8_t *model_a(size_t *len)
{
    tu_tensor t[] = { { "w", 2, { 4096 }, 1, "w", 0 }, { "v", 2, { 256 }, 1, "v", 0 } };
    return tu_model(t, 2, len);
}

static uint8_t *model_b(size_t *len)
{
    tu_tensor t[] = { { "w_tied", 2, { 4096 }, 1, "w", 0 } };
    return tu_model(t, 1, len);
}

static int write_package(const char *path, const char *vocab_path)
{
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.flags = ONNXZIP_WRITE_PACKAGE | ONNXZIP_WRITE_NO_SYNC;
    onnxzip_writer *w = NULL;
    size_t la, lb, lm;
    uint8_t *a = model_a(&la), *b = model_b(&lb);
    tu_tensor tt[] = { { "top", 2, { 128 }, 1, "top", 0 } };
    uint8_t *m = tu_model(tt, 1, &lm);
    int fd = open(vocab_path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "config.json", config, sizeof config - 1), 0);
    CHECK_RC(onnxzip_writer_add_file(w, "tokenizer/vocab.txt", fd, 0, 11), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "onnx/w", w_bytes, sizeof w_bytes), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "onnx/v", v_bytes, sizeof v_bytes), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "top", top_bytes, sizeof top_bytes), 0);
    CHECK_RC(onnxzip_writer_add_model(w, "onnx/a.onnx", a, la), 0);
    CHECK_RC(onnxzip_writer_add_model(w, "onnx/b.onnx", b, lb), 0);
    CHECK_RC(onnxzip_writer_add_model(w, "m.onnx", m, lm), 0);
    CHECK_RC(onnxzip_writer_set_default_model(w, "onnx/b.onnx"), 0);
    /* refused names leave the writer usable */
    CHECK_RC(onnxzip_writer_add_file_memory(w, "Config.json", "x", 1), ONNXZIP_EDUPNAME);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "../x", "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "a//b", "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "a\\b", "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "bad\xff", "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "__x", "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_memory(w, "onnx/not.an.identifier", "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_model(w, "onnx/A.onnx", a, la), ONNXZIP_EDUPNAME);
    CHECK_RC(onnxzip_writer_set_model(w, a, la), ONNXZIP_EINVAL);
    int rc = onnxzip_writer_finish(&w);
    close(fd);
    free(a);
    free(b);
    free(m);
    return rc;
}

/* Every central record's digest field (0x5A4F), found by walking the raw
 * directory from the EOCD: its Format_Major byte must be `gen`. */
static void check_generation(const char *path, int gen)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    uint8_t *p = malloc((size_t)n);
    fseek(f, 0, SEEK_SET);
    CHECK(fread(p, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    const uint8_t *e = p + n - 22;
    uint32_t cd = (uint32_t)(e[16] | e[17] << 8 | e[18] << 16 | (uint32_t)e[19] << 24);
    unsigned entries = (unsigned)(e[10] | e[11] << 8), seen = 0;
    for (const uint8_t *h = p + cd; seen < entries; seen++) {
        unsigned nl = (unsigned)(h[28] | h[29] << 8), xl = (unsigned)(h[30] | h[31] << 8);
        unsigned cl = (unsigned)(h[32] | h[33] << 8), found = 0;
        for (const uint8_t *x = h + 46 + nl; x + 4 <= h + 46 + nl + xl;) {
            unsigned id = (unsigned)(x[0] | x[1] << 8), sz = (unsigned)(x[2] | x[3] << 8);
            if (id == 0x5A4F) found = x[4];
            x += 4 + sz;
        }
        CHECK((int)found == gen);
        h += 46 + nl + xl + cl;
    }
    CHECK(seen == entries && entries > 0);
    free(p);
}

static void check_members(const char *path)
{
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    if (!a) return;
    CHECK(onnxzip_member_count(a) == 5);
    CHECK(strcmp(onnxzip_model_path(a), "onnx/b.onnx") == 0);
    CHECK(onnxzip_tensor_count(a) == 1 && strcmp(onnxzip_tensor_at(a, 0)->entry, "onnx/w") == 0);
    const onnxzip_member *c = onnxzip_find_member(a, "config.json");
    CHECK(c && c->kind == ONNXZIP_MEMBER_FILE && c->size == sizeof config - 1 && !c->is_default);
    CHECK(onnxzip_find_member(a, "Config.json") == NULL); /* exact paths */
    const onnxzip_member *b = onnxzip_find_member(a, "onnx/b.onnx");
    CHECK(b && b->kind == ONNXZIP_MEMBER_MODEL && b->is_default);
    const void *data = NULL;
    uint64_t size = 0;
    CHECK_RC(onnxzip_member_bytes(a, c, &data, &size), 0);
    /* in place: the entry's data in the mapping, where the tensor views point too */
    const onnxzip_entry *ce = onnxzip_entry_at(a, c->entry);
    const onnxzip_tensor *t = onnxzip_tensor_at(a, 0);
    const onnxzip_entry *te = onnxzip_entry_at(a, 2);
    CHECK(size == sizeof config - 1 && memcmp(data, config, size) == 0);
    CHECK((const uint8_t *)data - (const uint8_t *)t->data == (int64_t)ce->data_offset - (int64_t)te->data_offset);
    char buf[8];
    CHECK_RC(onnxzip_member_read(a, c, 2, 5, buf), 0);
    CHECK(memcmp(buf, config + 2, 5) == 0);
    CHECK_RC(onnxzip_member_read(a, c, 2, size, buf), ONNXZIP_ERANGE);
    CHECK(ce->data_offset % 64 == 0);
    CHECK_RC(onnxzip_verify(a), 0);
    onnxzip_close(&a);

    CHECK_RC(onnxzip_open_model(path, "onnx/a.onnx", 0, &a), 0);
    CHECK(a && onnxzip_tensor_count(a) == 2);
    if (a) {
        const onnxzip_tensor *v = onnxzip_find_tensor(a, "v");
        CHECK(v && strcmp(v->entry, "onnx/v") == 0 && v->nbytes == sizeof v_bytes);
        CHECK(strcmp(onnxzip_model_path(a), "onnx/a.onnx") == 0);
    }
    onnxzip_close(&a);
    CHECK_RC(onnxzip_open_model(path, "m.onnx", 0, &a), 0);
    CHECK(a && onnxzip_tensor_count(a) == 1 && strcmp(onnxzip_tensor_at(a, 0)->entry, "top") == 0);
    onnxzip_close(&a);
    CHECK_RC(onnxzip_open_model(path, "nope.onnx", 0, &a), ONNXZIP_ENOTFOUND);
    CHECK(a == NULL);
    CHECK_RC(onnxzip_open_model(path, "config.json", 0, &a), ONNXZIP_ENOTFOUND);
    CHECK_RC(onnxzip_open_model(path, ONNXZIP_MODEL_NONE, 0, &a), 0);
    CHECK(a && onnxzip_tensor_count(a) == 0 && onnxzip_model_path(a) == NULL && onnxzip_member_count(a) == 5);
    CHECK_RC(onnxzip_verify(a), 0);
    onnxzip_close(&a);
}

static void check_update(const char *path, const char *dir)
{
    size_t la;
    uint8_t *a = model_a(&la);
    CHECK_RC(onnxzip_update_model(path, a, la), ONNXZIP_EINVAL); /* which model? */
    CHECK_RC(onnxzip_update_package_model(path, "onnx/b.onnx", a, la), 0);
    CHECK_RC(onnxzip_update_package_model(path, "onnx/zz.onnx", a, la), ONNXZIP_ENOTFOUND);
    onnxzip_archive *h = NULL;
    CHECK_RC(onnxzip_open(path, 0, &h), 0); /* still the default, now with a's graph */
    const void *m = NULL;
    size_t n = 0;
    if (h) CHECK_RC(onnxzip_model_bytes(h, &m, &n), 0);
    CHECK(h && n == la && memcmp(m, a, la) == 0 && onnxzip_member_count(h) == 5);
    if (h) CHECK_RC(onnxzip_extract_member(h, "config.json", tu_path(dir, "config.out")), 0);
    if (h) CHECK_RC(onnxzip_extract_member(h, "nothing.json", tu_path(dir, "n.out")), ONNXZIP_ENOTFOUND);
    onnxzip_close(&h);
    FILE *f = fopen(tu_path(dir, "config.out"), "rb");
    char buf[64] = { 0 };
    CHECK(f && fread(buf, 1, sizeof buf, f) == sizeof config - 1 && strcmp(buf, config) == 0);
    if (f) fclose(f);
    free(a);
}

/* onnxzip_unpack_dir(): the folder back (files byte for byte, every model
 * at its path, opened here as a classic model whose tensors are those of
 * the package's model); only into a new or empty folder. */
static void check_unpack_dir(const char *pkg, const char *dir)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", tu_path(dir, "unpacked"));
    CHECK_RC(onnxzip_unpack_dir(pkg, out, NULL), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", out);
    FILE *f = fopen(path, "rb");
    char buf[64] = { 0 };
    CHECK(f && fread(buf, 1, sizeof buf, f) == sizeof config - 1 && strcmp(buf, config) == 0);
    if (f) fclose(f);
    static const char *const models[] = { "onnx/a.onnx", "onnx/b.onnx", "m.onnx" };
    for (int i = 0; i < 3; i++) {
        onnxzip_archive *c = NULL, *p = NULL;
        snprintf(path, sizeof path, "%s/%s", out, models[i]);
        CHECK_RC(onnxzip_open(path, 0, &c), 0);
        CHECK_RC(onnxzip_open_model(pkg, models[i], 0, &p), 0);
        CHECK(c && p && onnxzip_tensor_count(c) == onnxzip_tensor_count(p));
        for (size_t k = 0; c && p && k < onnxzip_tensor_count(p); k++) {
            const onnxzip_tensor *x = onnxzip_tensor_at(c, k), *y = onnxzip_tensor_at(p, k);
            CHECK(x->nbytes == y->nbytes && !memcmp(x->data, y->data, (size_t)x->nbytes));
        }
        onnxzip_close(&c);
        onnxzip_close(&p);
    }
    CHECK_RC(onnxzip_unpack_dir(pkg, out, NULL), ONNXZIP_EINVAL); /* not empty */
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    o.model = "m.onnx";
    CHECK_RC(onnxzip_unpack_dir(pkg, tu_path(dir, "other"), &o), ONNXZIP_EINVAL);
    CHECK(access(tu_path(dir, "other"), F_OK) != 0);
}

typedef struct host_file {
    uint8_t *p;
    size_t n;
    int misses, reads;  /* reads to refuse (-1) first; reads answered */
    uint64_t off, len;  /* the last read answered */
} host_file;

static int64_t host_read(void *ctx, uint64_t off, size_t n, void *dst)
{
    host_file *f = ctx;
    if (f->misses > 0 && f->misses--) return -1;
    CHECK(off + n <= f->n);
    memcpy(dst, f->p + off, n);
    f->reads++;
    f->off = off;
    f->len = n;
    return (int64_t)n;
}

/* onnxzip_open_host() with ONNXZIP_HOST_DEFER_HEADERS of a model before the
 * last: the window widened for the directory only, the model's entry
 * (header and bytes) the one read, not at hand first (EIO), then answered;
 * the model's bytes those of onnxzip_open_model(). */
static void check_host_model(const char *pkg)
{
    onnxzip_archive *l = NULL, *h = NULL;
    CHECK_RC(onnxzip_open_model(pkg, "onnx/a.onnx", 0, &l), 0);
    const void *want = NULL, *got = NULL;
    size_t wn = 0, gn = 0;
    host_file f = { .misses = 1 };
    FILE *fp = fopen(pkg, "rb");
    CHECK(fp && !fseek(fp, 0, SEEK_END));
    f.n = fp ? (size_t)ftell(fp) : 0;
    f.p = malloc(f.n);
    CHECK(fp && !fseek(fp, 0, SEEK_SET) && fread(f.p, 1, f.n, fp) == f.n);
    if (fp) fclose(fp);
    uint64_t from = f.n - 64, need = 0;
    int rc = 0;
    for (int round = 0; round < 4 && !h; round++) {
        onnxzip_host_source src = { .name = "host.onnxzip", .size = f.n, .window = f.p + from,
                                    .window_len = f.n - (size_t)from, .read = host_read, .ctx = &f,
                                    .model = "onnx/a.onnx", .flags = ONNXZIP_HOST_DEFER_HEADERS };
        if ((rc = onnxzip_open_host(&src, &h, &need)) == ONNXZIP_EIO) continue; /* the miss: open again */
        CHECK_RC(rc, 0);
        if (!h) from = need;
    }
    const onnxzip_member *a = l ? onnxzip_find_member(l, "onnx/a.onnx") : NULL;
    const onnxzip_member *m = l ? onnxzip_find_member(l, "m.onnx") : NULL;
    CHECK(h && a && m && f.reads == 1);
    if (h && a && m) {
        const onnxzip_entry *e = onnxzip_entry_at(l, a->entry);
        CHECK(f.off == e->header_offset && f.len == e->data_offset + e->size - e->header_offset);
        CHECK(from > onnxzip_entry_at(l, m->entry)->header_offset); /* no other model's bytes */
        CHECK_RC(onnxzip_model_bytes(l, &want, &wn), 0);
        CHECK_RC(onnxzip_model_bytes(h, &got, &gn), 0);
        CHECK(wn == gn && !memcmp(want, got, wn));
    }
    onnxzip_host_source bad = { .name = "x", .size = f.n, .window = f.p, .window_len = f.n, .flags = 2 };
    onnxzip_close(&h);
    CHECK_RC(onnxzip_open_host(&bad, &h, &need), ONNXZIP_EINVAL);
    onnxzip_close(&l);
    free(f.p);
}

/* onnxzip_listing_models(): the package opened for its members and each
 * model opened on its own, in member order; any other set of handles is
 * refused (EINVAL), *text NULL. */
static void check_listing_models(const char *path)
{
    onnxzip_archive *a = NULL, *models[8] = { NULL }, *held = NULL;
    size_t k = 0;
    char *text = (char *)"unset";
    CHECK_RC(onnxzip_open_model(path, ONNXZIP_MODEL_NONE, 0, &a), 0);
    CHECK_RC(onnxzip_open_model(path, NULL, 0, &held), 0);
    for (size_t i = 0; a && i < onnxzip_member_count(a) && k < 8; i++)
        if (onnxzip_member_at(a, i)->kind == ONNXZIP_MEMBER_MODEL)
            CHECK_RC(onnxzip_open_model(path, onnxzip_member_at(a, i)->path, 0, &models[k++]), 0);
    CHECK(k >= 2);
    const onnxzip_archive *const *m = (const onnxzip_archive *const *)models;
    CHECK_RC(onnxzip_listing_models(a, m, k, 0, &text), 0);
    CHECK(text && strstr(text, "tensors  tensor_bytes  path\n") && !strstr(text, "\ntensors:"));
    onnxzip_free(text);
    CHECK_RC(onnxzip_listing_models(a, m, k, ONNXZIP_LISTING_JSON, &text), 0);
    CHECK(text && strstr(text, "\"tensors\": ") && strstr(text, "\"tensor_bytes\": "));
    onnxzip_free(text);
    text = (char *)"unset";
    CHECK_RC(onnxzip_listing_models(a, m, k - 1, 0, &text), ONNXZIP_EINVAL); /* one model short */
    CHECK(text == NULL);
    const onnxzip_archive *swapped[8] = { models[1], models[0] };
    for (size_t i = 2; i < k; i++) swapped[i] = models[i];
    CHECK_RC(onnxzip_listing_models(a, swapped, k, 0, &text), ONNXZIP_EINVAL); /* out of member order */
    CHECK_RC(onnxzip_listing_models(held, m, k, 0, &text), ONNXZIP_EINVAL);  /* a handle holding a model */
    CHECK_RC(onnxzip_listing_models(a, NULL, 0, 0, &text), ONNXZIP_EINVAL);
    CHECK(text == NULL);
    for (size_t i = 0; i < k; i++) onnxzip_close(&models[i]);
    onnxzip_close(&held);
    onnxzip_close(&a);
}

int main(void)
{
    char *dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof w_bytes; i++) w_bytes[i] = (uint8_t)(i * 7);
    FILE *f = fopen(tu_path(dir, "vocab.txt"), "wb");
    CHECK(f && fwrite("hello world", 1, 11, f) == 11);
    if (f) fclose(f);
    char vocab[4096], pkg[4096];
    snprintf(vocab, sizeof vocab, "%s", tu_path(dir, "vocab.txt"));
    snprintf(pkg, sizeof pkg, "%s", tu_path(dir, "p.onnxzip"));
    CHECK_RC(write_package(pkg, vocab), 0);
    check_generation(pkg, 2);
    check_members(pkg);
    check_listing_models(pkg);
    check_update(pkg, dir);
    check_generation(pkg, 2);
    check_unpack_dir(pkg, dir);
    check_host_model(pkg);

    /* a model whose reference leaves its directory's entries: refused at finish, nothing written */
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.flags = ONNXZIP_WRITE_PACKAGE;
    onnxzip_writer *w = NULL;
    size_t lb;
    uint8_t *b = model_b(&lb);
    CHECK_RC(onnxzip_writer_create(tu_path(dir, "bad.onnxzip"), &o, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w", w_bytes, sizeof w_bytes), 0); /* at the top, not in onnx/ */
    CHECK_RC(onnxzip_writer_add_model(w, "onnx/b.onnx", b, lb), 0);
    CHECK_RC(onnxzip_writer_finish(&w), ONNXZIP_EREF);
    CHECK(access(tu_path(dir, "bad.onnxzip"), F_OK) != 0);
    CHECK_RC(onnxzip_writer_create(tu_path(dir, "none.onnxzip"), &o, &w), 0);
    /* "café" composed and decomposed: one file on macOS */
    CHECK_RC(onnxzip_writer_add_file_memory(w, "caf\xc3\xa9.txt", "x", 1),
             onnxzip_has_feature(ONNXZIP_FEATURE_UNICODE_PATHS) ? 0 : ONNXZIP_EUNSUPPORTED);
    if (onnxzip_has_feature(ONNXZIP_FEATURE_UNICODE_PATHS))
        CHECK_RC(onnxzip_writer_add_file_memory(w, "cafe\xcc\x81.txt", "x", 1), ONNXZIP_EDUPNAME);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "STRASSE.txt", "x", 1), 0);
    if (onnxzip_has_feature(ONNXZIP_FEATURE_UNICODE_PATHS)) /* full case folding: ß is ss */
        CHECK_RC(onnxzip_writer_add_file_memory(w, "stra\xc3\x9f" "e.txt", "x", 1), ONNXZIP_EDUPNAME);
    CHECK_RC(onnxzip_writer_finish(&w), ONNXZIP_ENOMODEL);
    CHECK(access(tu_path(dir, "none.onnxzip"), F_OK) != 0);
    /* a single-model writer takes no files; its archive records generation 1 */
    CHECK_RC(onnxzip_writer_create(tu_path(dir, "single.onnxzip"), NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "config.json", "x", 1), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_writer_add_memory(w, "w", w_bytes, sizeof w_bytes), 0);
    CHECK_RC(onnxzip_writer_set_model(w, b, lb), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    check_generation(tu_path(dir, "single.onnxzip"), 1);
    onnxzip_archive *h = NULL;
    CHECK_RC(onnxzip_open_model(tu_path(dir, "single.onnxzip"), "onnx/b.onnx", 0, &h), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open_model(tu_path(dir, "single.onnxzip"), ONNXZIP_MODEL_NONE, 0, &h), 0);
    CHECK(h && onnxzip_member_count(h) == 0 && onnxzip_tensor_count(h) == 1 && !onnxzip_model_path(h));
    onnxzip_close(&h);
    free(b);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("package");
}
