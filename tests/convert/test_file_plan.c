/* onnxzip_file_plan_*() through the C API: the arguments it refuses, a
 * package's files in manifest order (a plain file one archive range of its
 * entry, a model the bytes unpack writes), a path of no file, a host
 * handle with reads planning what the mapped handle plans, a host handle
 * without reads refusing a model whose tensors unpack writes inline (it
 * cannot read them) rather than planning other bytes, and a single-model
 * archive as the one file ".". Unpack's own output is the oracle of the
 * bytes (tests/packages/test_file_plan.py compares SHA-256 with hashlib). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char config[] = "{\"model_type\": \"t5\"}\n";
static uint8_t w_bytes[4096];

static int write_package(const char *path)
{
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.flags = ONNXZIP_WRITE_PACKAGE | ONNXZIP_WRITE_NO_SYNC;
    onnxzip_writer *w = NULL;
    size_t la, lb;
    tu_tensor ta[] = { { "w", 2, { 4096 }, 1, "w", 0 } }, tb[] = { { "w_tied", 2, { 4096 }, 1, "w", 0 } };
    uint8_t *a = tu_model(ta, 1, &la), *b = tu_model(tb, 1, &lb);
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_memory(w, "config.json", config, sizeof config - 1), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "onnx/w", w_bytes, sizeof w_bytes), 0);
    CHECK_RC(onnxzip_writer_add_model(w, "onnx/a.onnx", a, la), 0);
    CHECK_RC(onnxzip_writer_add_model(w, "onnx/b.onnx", b, lb), 0);
    int rc = onnxzip_writer_finish(&w);
    free(a);
    free(b);
    return rc;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    CHECK(f && !fseek(f, 0, SEEK_END));
    *n = f ? (size_t)ftell(f) : 0;
    uint8_t *p = malloc(*n ? *n : 1);
    CHECK(f && !fseek(f, 0, SEEK_SET) && fread(p, 1, *n, f) == *n);
    if (f) fclose(f);
    return p;
}

static const onnxzip_planned_file *find(const onnxzip_file_plan *p, const char *path)
{
    for (size_t i = 0; i < onnxzip_file_plan_count(p); i++)
        if (!strcmp(onnxzip_file_plan_at(p, i)->path, path)) return onnxzip_file_plan_at(p, i);
    return NULL;
}

/* Plans of two handles of one package are the same files and bytes. */
static void check_same(const onnxzip_file_plan *x, const onnxzip_file_plan *y)
{
    CHECK(onnxzip_file_plan_count(x) == onnxzip_file_plan_count(y));
    for (size_t i = 0; i < onnxzip_file_plan_count(x) && i < onnxzip_file_plan_count(y); i++) {
        const onnxzip_planned_file *a = onnxzip_file_plan_at(x, i), *b = onnxzip_file_plan_at(y, i);
        CHECK(!strcmp(a->path, b->path) && a->size == b->size && a->n_segments == b->n_segments);
        for (size_t k = 0; k < a->n_segments && k < b->n_segments; k++) {
            const onnxzip_segment *s = &a->segments[k], *t = &b->segments[k];
            CHECK(s->kind == t->kind && s->length == t->length && s->offset == t->offset && s->entry == t->entry);
            if (s->kind == ONNXZIP_SEGMENT_BYTES) CHECK(!memcmp(s->bytes, t->bytes, (size_t)s->length));
        }
    }
}

static void check_package(const char *pkg)
{
    onnxzip_archive *a = NULL, *h = NULL;
    onnxzip_file_plan *p = (onnxzip_file_plan *)&p, *q = NULL;
    CHECK_RC(onnxzip_file_plan_create(NULL, NULL, &p), ONNXZIP_EINVAL);
    CHECK(p == NULL);
    CHECK_RC(onnxzip_open(pkg, 0, &a), 0);
    CHECK_RC(onnxzip_file_plan_create(a, NULL, NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_file_plan_create(a, NULL, &p), 0);
    CHECK(onnxzip_file_plan_count(p) == 3 && onnxzip_file_plan_at(p, 3) == NULL);
    for (size_t i = 0; i < onnxzip_member_count(a) && i < onnxzip_file_plan_count(p); i++) /* manifest order */
        CHECK(!strcmp(onnxzip_file_plan_at(p, i)->path, onnxzip_member_at(a, i)->path));
    const onnxzip_planned_file *c = find(p, "config.json"), *m = find(p, "onnx/a.onnx");
    const onnxzip_member *cm = onnxzip_find_member(a, "config.json");
    CHECK(c && cm && !strcmp(c->path, "config.json") && c->model == NULL && c->n_segments == 1);
    if (c && cm && c->n_segments == 1) {
        const onnxzip_segment *s = &c->segments[0];
        CHECK(s->kind == ONNXZIP_SEGMENT_ARCHIVE && s->entry == cm->entry && s->entry_offset == 0);
        CHECK(s->offset == onnxzip_entry_at(a, cm->entry)->data_offset && s->length == sizeof config - 1);
    }
    /* the model file: its bytes (the tensor written inline, as unpack does) */
    CHECK(m && !strcmp(m->path, "onnx/a.onnx") && !strcmp(m->model, "onnx/a.onnx") && m->n_segments == 1);
    if (m && m->n_segments == 1) {
        CHECK(m->segments[0].kind == ONNXZIP_SEGMENT_BYTES && m->size > sizeof w_bytes);
        CHECK(tu_memmem(m->segments[0].bytes, (size_t)m->size, w_bytes, sizeof w_bytes) != NULL);
    }
    CHECK_RC(onnxzip_file_plan_names(a, &q), 0); /* the same names, no bytes planned */
    CHECK(onnxzip_file_plan_count(q) == onnxzip_file_plan_count(p));
    for (size_t i = 0; i < onnxzip_file_plan_count(q) && i < onnxzip_file_plan_count(p); i++)
        CHECK(!strcmp(onnxzip_file_plan_at(q, i)->path, onnxzip_file_plan_at(p, i)->path) &&
              onnxzip_file_plan_at(q, i)->n_segments == 0);
    onnxzip_file_plan_free(&q);
    CHECK_RC(onnxzip_file_plan_names(NULL, &q), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_file_plan_create(a, "onnx/nope.bin", &q), ONNXZIP_ENOTFOUND);
    CHECK(q == NULL && strstr(onnxzip_last_error()->message, "onnx/nope.bin"));
    CHECK_RC(onnxzip_file_plan_create(a, "onnx/b.onnx", &q), 0);
    CHECK(onnxzip_file_plan_count(q) == 1 && !strcmp(onnxzip_file_plan_at(q, 0)->path, "onnx/b.onnx"));
    onnxzip_file_plan_free(&q);
    CHECK(q == NULL);

    size_t n;
    uint8_t *bytes = slurp(pkg, &n);
    tu_bytes f = { bytes, n };
    onnxzip_host_source src = { .name = "host.onnxzip", .size = n, .window = bytes, .window_len = n,
                                .read = tu_bytes_read, .ctx = &f };
    uint64_t need = 0;
    CHECK_RC(onnxzip_open_host(&src, &h, &need), 0); /* with reads: the same plan */
    CHECK_RC(onnxzip_file_plan_create(h, NULL, &q), 0);
    check_same(p, q);
    onnxzip_file_plan_free(&q);
    onnxzip_close(&h);
    src.read = NULL; /* without: a model whose tensor unpack writes inline cannot be planned */
    CHECK_RC(onnxzip_open_host(&src, &h, &need), 0);
    CHECK_RC(onnxzip_file_plan_create(h, "onnx/a.onnx", &q), ONNXZIP_EUNSUPPORTED);
    CHECK(q == NULL);
    CHECK_RC(onnxzip_file_plan_names(h, &q), 0); /* names: nothing read */
    CHECK(onnxzip_file_plan_count(q) == 3);
    onnxzip_file_plan_free(&q);
    CHECK_RC(onnxzip_file_plan_create(h, "config.json", &q), 0); /* a plain file needs no read */
    CHECK(onnxzip_file_plan_count(q) == 1);
    onnxzip_file_plan_free(&q);
    onnxzip_close(&h);
    free(bytes);
    onnxzip_file_plan_free(&p);
    onnxzip_file_plan_free(&p); /* *p NULL: nothing */
    onnxzip_file_plan_free(NULL);
    CHECK(onnxzip_file_plan_count(NULL) == 0 && onnxzip_file_plan_at(NULL, 0) == NULL);
    onnxzip_close(&a);
}

/* A single-model archive: the one file ".", the archive file whole. */
static void check_single(const char *path)
{
    onnxzip_writer *w = NULL;
    size_t len;
    tu_tensor t[] = { { "w", 2, { 4096 }, 1, "w", 0 } };
    uint8_t *m = tu_model(t, 1, &len);
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w", w_bytes, sizeof w_bytes), 0);
    CHECK_RC(onnxzip_writer_set_model(w, m, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(m);
    onnxzip_archive *a = NULL;
    onnxzip_file_plan *p = NULL;
    size_t n;
    free(slurp(path, &n));
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    CHECK_RC(onnxzip_file_plan_create(a, "w", &p), ONNXZIP_ENOTFOUND);
    CHECK_RC(onnxzip_file_plan_create(a, ".", &p), 0);
    const onnxzip_planned_file *f = onnxzip_file_plan_at(p, 0);
    CHECK(onnxzip_file_plan_count(p) == 1 && f && !strcmp(f->path, ".") && f->size == n && f->n_segments == 1);
    if (f && f->n_segments == 1)
        CHECK(f->segments[0].kind == ONNXZIP_SEGMENT_ARCHIVE && f->segments[0].offset == 0 &&
              f->segments[0].entry == SIZE_MAX);
    onnxzip_file_plan_free(&p);
    onnxzip_close(&a);
}

int main(void)
{
    char *dir = tu_tmpdir();
    for (size_t i = 0; i < sizeof w_bytes; i++) w_bytes[i] = (uint8_t)(i * 13 + 1);
    char pkg[4096];
    snprintf(pkg, sizeof pkg, "%s", tu_path(dir, "p.onnxzip"));
    CHECK_RC(write_package(pkg), 0);
    check_package(pkg);
    check_single(tu_path(dir, "single.onnxzip"));
    tu_rmtree(dir);
    free(dir);
    return tu_finish("file_plan");
}
