/* onnxzip_view_model() and onnxzip view's library side (spec 16): views of
 * archives holding tensors of every kind (initializers, attribute tensors,
 * sparse values and indices, subgraph, function and training-graph tensors),
 * packed plain, with --dedup and with --align 4096. Each view, written beside
 * its archive and opened with onnxzip_open(), is a classic external-data
 * model (layout EXTERNAL) whose every tensor has the archive's bytes at the
 * archive's offsets; its record names the archive; verify reports it stale
 * after set-model. Also: classic models, buffers, bad locations. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "pbwrite.h"
#include "testutil.h"

#define LOC "m.onnxzip"

/* A UINT8 tensor of n bytes, each (seed + i) * 31; name, dims {n}. */
static void put_tensor(oz_buf *b, uint32_t num, const char *name, size_t n, unsigned seed)
{
    oz_buf t = { 0 };
    uint8_t *raw = malloc(n + 1);
    for (size_t i = 0; i < n; i++) raw[i] = (uint8_t)((seed + i) * 31);
    pb_vint(&t, 1, n);
    pb_vint(&t, 2, 2); /* UINT8 */
    pb_str(&t, 8, name);
    pb_len(&t, 9, raw, n);
    free(raw);
    pb_msg(b, num, &t);
}

/* A Constant node whose attribute `value` holds tensor `name`. */
static void put_constant(oz_buf *b, uint32_t num, const char *name, size_t n, unsigned seed)
{
    oz_buf node = { 0 }, attr = { 0 };
    pb_str(&node, 2, name);
    pb_str(&node, 4, "Constant");
    pb_str(&attr, 1, "value");
    pb_vint(&attr, 20, 4); /* TENSOR */
    put_tensor(&attr, 5, name, n, seed);
    pb_msg(&node, 5, &attr);
    pb_msg(b, num, &node);
}

/* Every kind of tensor the walker visits; w1 and w2 hold the same bytes
 * (one entry under --dedup); "empty" has none. */
static uint8_t *rich_model(size_t *len)
{
    oz_buf model = { 0 }, graph = { 0 }, opset = { 0 }, node = { 0 }, attr = { 0 }, sub = { 0 }, sparse = { 0 },
           fn = { 0 }, train = { 0 }, init = { 0 };
    pb_vint(&model, 1, 8);
    pb_str(&opset, 1, "");
    pb_vint(&opset, 2, 17);
    pb_msg(&model, 8, &opset);
    put_constant(&graph, 1, "attr_t", 300, 1);
    pb_str(&node, 4, "If"); /* a subgraph with an initializer */
    pb_str(&attr, 1, "then_branch");
    pb_vint(&attr, 20, 5); /* GRAPH */
    put_tensor(&sub, 5, "sub_w", 500, 2);
    pb_msg(&attr, 6, &sub);
    pb_msg(&node, 5, &attr);
    pb_msg(&graph, 1, &node);
    pb_str(&graph, 2, "g");
    put_tensor(&graph, 5, "w1", 1000, 3);
    put_tensor(&graph, 5, "w2", 1000, 3);
    put_tensor(&graph, 5, "empty", 0, 4);
    put_tensor(&sparse, 1, "sp_values", 200, 5);
    put_tensor(&sparse, 2, "sp_indices", 200, 6);
    pb_vint(&sparse, 3, 4096);
    pb_msg(&graph, 15, &sparse);
    pb_msg(&model, 7, &graph);
    pb_str(&fn, 1, "f");
    put_constant(&fn, 7, "fn_t", 400, 7);
    pb_str(&fn, 10, "local");
    pb_msg(&model, 25, &fn);
    put_tensor(&init, 5, "train_w", 600, 8);
    pb_msg(&train, 1, &init);
    pb_msg(&model, 20, &train);
    *len = model.len;
    return model.p;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f) fclose(f);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    *len = fread(p, 1, (size_t)n, f);
    fclose(f);
    return p;
}

static size_t count_in(const void *hay, size_t n, const char *needle)
{
    size_t k = 0, m = strlen(needle);
    for (const char *p = hay, *end = p + n; (p = tu_memmem(p, (size_t)(end - p), needle, m)); p += m) k++;
    return k;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* The record the view must carry for the archive at `path`. */
static void expect_record(const void *view, size_t n, const onnxzip_archive *a, const char *path)
{
    const onnxzip_entry *m = onnxzip_entry_at(a, onnxzip_entry_count(a) - 1);
    char want[256];
    snprintf(want, sizeof want, "format=1;archive=" LOC ";size=%llu;model_crc32=%08x;model_xxh3=%016llx",
             (unsigned long long)file_size(path), m->crc32, (unsigned long long)m->xxh3);
    CHECK(m->has_xxh3);
    CHECK(count_in(view, n, want) == 1);
    CHECK(count_in(view, n, "onnxzip.view") == 1);
}

/* Opens the view written beside the archive: every tensor is the archive's. */
static void check_view(const char *dir, const onnxzip_archive *a, uint32_t align, int dedup)
{
    onnxzip_archive *v = NULL;
    CHECK_RC(onnxzip_open(tu_path(dir, "m.view.onnx"), 0, &v), 0);
    if (!v) return;
    CHECK(onnxzip_archive_layout(v) == ONNXZIP_LAYOUT_EXTERNAL);
    CHECK(onnxzip_tensor_count(v) == onnxzip_tensor_count(a));
    size_t entries = 0, kinds = 0;
    for (size_t i = 0; i < onnxzip_tensor_count(a) && i < onnxzip_tensor_count(v); i++) {
        const onnxzip_tensor *x = onnxzip_tensor_at(a, i), *y = onnxzip_tensor_at(v, i);
        CHECK(!strcmp(x->name, y->name) && x->nbytes == y->nbytes && x->kind == y->kind);
        CHECK(x->nbytes == y->nbytes && (!x->nbytes || !memcmp(x->data, y->data, x->nbytes)));
        if (x->storage != ONNXZIP_STORAGE_ENTRY || !x->nbytes) {
            CHECK(y->storage == (x->storage == ONNXZIP_STORAGE_ENTRY ? ONNXZIP_STORAGE_INLINE : x->storage));
            continue;
        }
        entries++;
        kinds |= 1u << x->kind | (x->graph_depth ? 16u : 0);
        CHECK(y->storage == ONNXZIP_STORAGE_FILE && !strcmp(y->entry, LOC));
        CHECK(y->file_offset == x->file_offset);
        CHECK(y->file_offset % align == 0);
    }
    CHECK(entries == 8); /* every tensor but the empty one is an entry */
    CHECK(kinds == 31);  /* initializer, attribute, sparse values, indices, subgraph */
    const onnxzip_tensor *w1 = onnxzip_find_tensor(v, "w1"), *w2 = onnxzip_find_tensor(v, "w2");
    CHECK(w1 && w2 && (w1->file_offset == w2->file_offset) == dedup);
    CHECK(onnxzip_find_tensor(v, "fn_t") && onnxzip_find_tensor(v, "train_w"));
    const onnxzip_tensor *ea = onnxzip_find_tensor(a, "empty"), *ev = onnxzip_find_tensor(v, "empty");
    CHECK(ea && ea->storage == ONNXZIP_STORAGE_ENTRY && !ea->nbytes); /* an empty entry ... */
    CHECK(ev && ev->storage == ONNXZIP_STORAGE_INLINE && !ev->nbytes); /* ... is inline in the view */
    CHECK_RC(onnxzip_verify(v), 0);
    onnxzip_close(&v);
}

/* Packs the rich model, writes its view beside the archive, checks it. */
static void test_pack(const char *root, uint32_t align, uint32_t flags)
{
    char *dir = strdup(tu_path(root, align == 4096 ? "a4096" : flags ? "dedup" : "plain"));
    tu_mkdir(dir);
    size_t len, vlen;
    uint8_t *m = rich_model(&len);
    char in[4096], arc[4096];
    snprintf(in, sizeof in, "%s", tu_path(dir, "m.onnx"));
    snprintf(arc, sizeof arc, "%s", tu_path(dir, LOC));
    write_file(in, m, len);
    onnxzip_pack_options o;
    onnxzip_pack_options_init(&o);
    o.alignment = align;
    o.flags = flags | ONNXZIP_PACK_NO_SYNC;
    o.size_threshold = 0;
    CHECK_RC(onnxzip_pack(in, arc, &o), 0);
    onnxzip_archive *a = NULL;
    void *view = NULL;
    CHECK_RC(onnxzip_open(arc, 0, &a), 0);
    onnxzip_view_options pure; /* every entry-backed tensor external */
    onnxzip_view_options_init(&pure);
    pure.size_threshold = 0;
    CHECK_RC(onnxzip_view_model(a, &pure, &view, &vlen), 0);
    if (view) {
        write_file(tu_path(dir, "m.view.onnx"), view, vlen);
        expect_record(view, vlen, a, arc);
        check_view(dir, a, align, flags != 0);
    }
    onnxzip_free(view);
    onnxzip_close(&a);
    free(m);
    free(dir);
}

/* A classic model is its own view; the view of an archive packed from a view
 * carries one record, the new one. */
static void test_classic_and_reviews(const char *root)
{
    char *dir = strdup(tu_path(root, "plain"));
    size_t len, vlen, n2;
    uint8_t *m = slurp(tu_path(dir, "m.onnx"), &len);
    onnxzip_archive *c = NULL;
    void *view = NULL;
    CHECK_RC(onnxzip_open(tu_path(dir, "m.onnx"), 0, &c), 0);
    CHECK_RC(onnxzip_view_model(c, NULL, &view, &vlen), 0);
    CHECK(m && view && vlen == len && !memcmp(view, m, len));
    onnxzip_free(view);
    onnxzip_close(&c);
    char arc2[4096];
    snprintf(arc2, sizeof arc2, "%s", tu_path(dir, "m2.onnxzip"));
    CHECK_RC(onnxzip_pack(tu_path(dir, "m.view.onnx"), arc2, NULL), 0);
    CHECK_RC(onnxzip_open(arc2, 0, &c), 0);
    CHECK_RC(onnxzip_view_model(c, NULL, &view, &vlen), 0);
    uint8_t *v1 = slurp(tu_path(dir, "m.view.onnx"), &n2);
    CHECK(view && count_in(view, vlen, "onnxzip.view") == 1 && count_in(view, vlen, "archive=m2.onnxzip;") == 1);
    CHECK(v1 && count_in(v1, n2, "onnxzip.view") == 1);
    onnxzip_free(view);
    onnxzip_close(&c);
    free(v1);
    free(m);
    free(dir);
}

/* No path: a location is required; bad locations are refused. */
static void test_arguments(const char *root)
{
    size_t len, vlen = 7, plen;
    char arc[4096];
    snprintf(arc, sizeof arc, "%s", tu_path(root, "plain/" LOC));
    uint8_t *bytes = slurp(arc, &len);
    onnxzip_archive *b = NULL, *a = NULL;
    void *view = (void *)1, *by_path = NULL;
    CHECK_RC(onnxzip_open_buffer(bytes, len, 0, &b), 0);
    CHECK_RC(onnxzip_view_model(b, NULL, &view, &vlen), ONNXZIP_EINVAL);
    CHECK(!view && !vlen && strstr(onnxzip_last_error()->message, "pass a location"));
    static const char *const bad[] = { "", "a/b", "/m.onnxzip", "..", ".", "..\\m.onnxzip" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_RC(onnxzip_view_model(b, &(onnxzip_view_options){ .location = bad[i] }, &view, &vlen),
                 ONNXZIP_EINVAL);
        CHECK(!view);
    }
    CHECK_RC(onnxzip_view_model(b, &(onnxzip_view_options){ .location = LOC, .size_threshold = 1024 }, &view,
                                &vlen), 0);
    CHECK_RC(onnxzip_open(arc, 0, &a), 0);
    CHECK_RC(onnxzip_view_model(a, NULL, &by_path, &plen), 0);
    CHECK(view && by_path && vlen == plen && !memcmp(view, by_path, vlen));
    void *none = (void *)1;
    size_t nlen = 7;
    CHECK_RC(onnxzip_view_model(NULL, NULL, &none, &nlen), ONNXZIP_EINVAL);
    CHECK(!none && !nlen); /* failure clears the out parameters */
    onnxzip_free(view);
    onnxzip_free(by_path);
    onnxzip_free(NULL);
    onnxzip_close(&a);
    onnxzip_close(&b);
    free(bytes);
}

/* size_threshold: smaller entry-backed tensors are copied inline (their
 * bytes, from the archive), larger ones stay references into it. */
static void test_threshold(const char *root)
{
    char arc[4096];
    snprintf(arc, sizeof arc, "%s", tu_path(root, "plain/" LOC));
    onnxzip_archive *a = NULL, *v = NULL;
    void *view = NULL;
    size_t vlen = 0, small = 0, large = 0;
    CHECK_RC(onnxzip_open(arc, 0, &a), 0);
    onnxzip_view_options o;
    onnxzip_view_options_init(&o);
    CHECK(o.size_threshold == 1024 && !o.location);
    o.size_threshold = 450;
    CHECK_RC(onnxzip_view_model(a, &o, &view, &vlen), 0);
    if (view) write_file(tu_path(root, "plain/t.view.onnx"), view, vlen);
    CHECK_RC(onnxzip_open(tu_path(root, "plain/t.view.onnx"), 0, &v), 0);
    for (size_t i = 0; v && i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *x = onnxzip_tensor_at(a, i), *y = onnxzip_tensor_at(v, i);
        CHECK(y && x->nbytes == y->nbytes && (!x->nbytes || !memcmp(x->data, y->data, x->nbytes)));
        if (!y || x->storage != ONNXZIP_STORAGE_ENTRY || !x->nbytes) continue;
        if (x->nbytes < 450) {
            small++;
            CHECK(y->storage == ONNXZIP_STORAGE_INLINE);
        } else {
            large++;
            CHECK(y->storage == ONNXZIP_STORAGE_FILE && y->file_offset == x->file_offset);
        }
    }
    CHECK(small == 4 && large == 4); /* 300, 200, 200, 400 bytes inline; 500, 1000, 1000, 600 not */
    onnxzip_free(view);
    onnxzip_close(&v);
    onnxzip_close(&a);
}

/* onnxzip_view_write(): beside the archive, atomically, by the path rules. */
static void test_write(const char *root)
{
    char arc[4096], other[4096], link[4096], vpath[4096];
    snprintf(arc, sizeof arc, "%s", tu_path(root, "plain/" LOC));
    snprintf(vpath, sizeof vpath, "%s", tu_path(root, "plain/w.view.onnx"));
    snprintf(other, sizeof other, "%s", tu_path(root, "a4096/w.view.onnx"));
    snprintf(link, sizeof link, "%s", tu_path(root, "a4096/link.onnxzip"));
    onnxzip_archive *a = NULL, *l = NULL, *b = NULL, *v = NULL;
    CHECK_RC(onnxzip_open(arc, 0, &a), 0);
    CHECK_RC(onnxzip_view_write(a, vpath, &(onnxzip_view_options){ .location = LOC }), ONNXZIP_EINVAL);
    onnxzip_view_options pure = { .location = NULL, .size_threshold = 0 }; /* the rich model's tensors are small */
    CHECK_RC(onnxzip_view_write(a, vpath, &pure), 0);
    size_t n = 0, m = 0;
    void *mem = NULL;
    uint8_t *file = slurp(vpath, &n);
    CHECK_RC(onnxzip_view_model(a, &pure, &mem, &m), 0);
    CHECK(file && mem && n == m && !memcmp(file, mem, n)); /* the same bytes, location the file's name */
    CHECK_RC(onnxzip_open(vpath, ONNXZIP_OPEN_VERIFY, &v), 0);
    CHECK(v && onnxzip_archive_layout(v) == ONNXZIP_LAYOUT_EXTERNAL);
    CHECK(tu_count_files(tu_path(root, "plain"), ".tmp-") == 0);
    /* not in the archive's directory, nor over the archive, nor a FIFO */
    CHECK_RC(onnxzip_view_write(a, other, NULL), ONNXZIP_EPATH);
    CHECK(access(other, F_OK) != 0);
    CHECK_RC(onnxzip_view_write(a, arc, NULL), ONNXZIP_ESAMEFILE);
#ifndef _WIN32 /* FIFOs and symbolic links */
    char fifo[4096];
    snprintf(fifo, sizeof fifo, "%s", tu_path(root, "plain/fifo.onnx"));
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_RC(onnxzip_view_write(a, fifo, NULL), ONNXZIP_ENOTREG);
    /* an archive reached through a link from another directory: the view
     * lies beside the real file, not beside the link */
    CHECK(symlink(arc, link) == 0);
    CHECK_RC(onnxzip_open(link, 0, &l), 0);
    CHECK_RC(onnxzip_view_write(l, other, NULL), ONNXZIP_EPATH);
    CHECK(strstr(onnxzip_last_error()->message, "symbolic link") != NULL);
    CHECK(strstr(onnxzip_last_error()->message, "plain/w.view.onnx") != NULL); /* where to write it */
    CHECK(access(other, F_OK) != 0);
#else
    (void)link;
#endif
    /* a buffer has no file name; a classic model is its own view */
    size_t blen;
    uint8_t *bytes = slurp(arc, &blen);
    CHECK_RC(onnxzip_open_buffer(bytes, blen, 0, &b), 0);
    CHECK_RC(onnxzip_view_write(b, vpath, NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_view_write(v, tu_path(root, "plain/again.onnx"), NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_view_write(NULL, vpath, NULL), ONNXZIP_EINVAL);
    onnxzip_free(mem);
    free(file);
    free(bytes);
    onnxzip_close(&v);
    onnxzip_close(&b);
    onnxzip_close(&l);
    onnxzip_close(&a);
}

#ifndef _WIN32 /* symbolic links */
/* A Hugging Face cache (huggingface_hub's layout): blobs/SHA holds the
 * archive, snapshots/REV/model.onnxzip is a relative link to it, and other
 * links lead there: a chain from another directory, an absolute link. Each
 * gives the view of the real file (its name as location, the same bytes),
 * written beside the blob only. */
static void test_links(const char *root)
{
    static const char *const dirs[] = { "hf", "hf/blobs", "hf/snapshots", "hf/snapshots/rev1", "elsewhere" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) CHECK(mkdir(tu_path(root, dirs[i]), 0755) == 0);
    size_t n = 0;
    uint8_t *bytes = slurp(tu_path(root, "plain/" LOC), &n);
    char blob[4096], snap[4096], chain[4096], abs_link[4096];
    snprintf(blob, sizeof blob, "%s", tu_path(root, "hf/blobs/5eed5eed"));
    snprintf(snap, sizeof snap, "%s", tu_path(root, "hf/snapshots/rev1/model.onnxzip"));
    snprintf(chain, sizeof chain, "%s", tu_path(root, "elsewhere/chain.onnxzip"));
    snprintf(abs_link, sizeof abs_link, "%s", tu_path(root, "elsewhere/abs.onnxzip"));
    write_file(blob, bytes, n);
    CHECK(symlink("../../blobs/5eed5eed", snap) == 0);
    CHECK(symlink("../hf/snapshots/rev1/model.onnxzip", chain) == 0);
    CHECK(symlink(blob, abs_link) == 0);
    onnxzip_archive *b = NULL;
    void *want = NULL;
    size_t want_n = 0;
    CHECK_RC(onnxzip_open(blob, 0, &b), 0);
    CHECK_RC(onnxzip_view_model(b, NULL, &want, &want_n), 0); /* location "5eed5eed" */
    const char *const paths[] = { snap, chain, abs_link };
    for (size_t i = 0; i < 3; i++) {
        onnxzip_archive *l = NULL;
        void *got = NULL;
        size_t got_n = 0;
        CHECK_RC(onnxzip_open(paths[i], 0, &l), 0);
        CHECK_RC(onnxzip_view_model(l, NULL, &got, &got_n), 0);
        CHECK(want && got && got_n == want_n && !memcmp(got, want, want_n));
        CHECK_RC(onnxzip_view_write(l, tu_path(root, "hf/snapshots/rev1/model.view.onnx"), NULL), ONNXZIP_EPATH);
        CHECK(strstr(onnxzip_last_error()->message, "hf/blobs/model.view.onnx") != NULL);
        CHECK_RC(onnxzip_view_write(l, tu_path(root, "hf/blobs/model.view.onnx"), NULL), 0);
        size_t file_n = 0;
        uint8_t *file = slurp(tu_path(root, "hf/blobs/model.view.onnx"), &file_n);
        CHECK(file && file_n == want_n && !memcmp(file, want, want_n));
        free(file);
        onnxzip_free(got);
        onnxzip_close(&l);
    }
    CHECK(access(tu_path(root, "hf/snapshots/rev1/model.view.onnx"), F_OK) != 0);
    onnxzip_archive *v = NULL; /* the view verifies against the blob beside it */
    CHECK_RC(onnxzip_open(tu_path(root, "hf/blobs/model.view.onnx"), ONNXZIP_OPEN_VERIFY, &v), 0);
    onnxzip_close(&v);
    onnxzip_free(want);
    onnxzip_close(&b);
    free(bytes);
}
#endif

/* set-model replaces the graph: the view's verify says ESTALE until it is
 * written again. */
static void test_stale(const char *root)
{
    char arc[4096], vpath[4096];
    snprintf(arc, sizeof arc, "%s", tu_path(root, "plain/" LOC));
    snprintf(vpath, sizeof vpath, "%s", tu_path(root, "plain/m.view.onnx"));
    onnxzip_archive *a = NULL, *v = NULL;
    const void *model;
    size_t len, vlen;
    CHECK_RC(onnxzip_open(arc, 0, &a), 0);
    if (!a) return;
    CHECK_RC(onnxzip_model_bytes(a, &model, &len), 0);
    oz_buf next = { 0 };
    oz_buf_append(&next, model, len);
    pb_str(&next, 6, "a new doc_string"); /* ModelProto.doc_string */
    onnxzip_close(&a);
    CHECK_RC(onnxzip_update_model(arc, next.p, next.len), 0);
    oz_buf_free(&next);
    CHECK_RC(onnxzip_open(vpath, 0, &v), 0);
    CHECK_RC(onnxzip_verify(v), ONNXZIP_ESTALE);
    CHECK(strstr(onnxzip_last_error()->message, "set-model") != NULL);
    onnxzip_close(&v);
    void *view = NULL;
    CHECK_RC(onnxzip_open(arc, 0, &a), 0);
    CHECK_RC(onnxzip_view_model(a, NULL, &view, &vlen), 0);
    if (view) write_file(vpath, view, vlen);
    CHECK_RC(onnxzip_open(vpath, 0, &v), 0);
    CHECK_RC(onnxzip_verify(v), 0);
    onnxzip_free(view);
    onnxzip_close(&v);
    onnxzip_close(&a);
}

int main(void)
{
    char *root = tu_tmpdir();
    test_pack(root, 64, 0);
    test_pack(root, 64, ONNXZIP_PACK_DEDUP);
    test_pack(root, 4096, 0);
    test_classic_and_reviews(root);
    test_arguments(root);
    test_threshold(root);
    test_write(root);
#ifndef _WIN32 /* symbolic links */
    test_links(root);
#endif
    test_stale(root);
    tu_rmtree(root);
    free(root);
    return tu_finish("view");
}
