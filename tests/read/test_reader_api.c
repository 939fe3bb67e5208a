/* The reader API: open from path, fd and borrowed buffer; lookups; model
 * bytes and parsed proto; NULL handling; verify-on-open; error details. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TEST_NO_PROTOBUF_C /* the Windows build has no protobuf-c headers */
#include "onnx.pb-c.h"
#endif
#include "testutil.h"

#ifndef O_BINARY
#define O_BINARY 0
#endif

static const char *make_archive(const char *dir)
{
    const char *path = tu_path(dir, "r.onnxzip");
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    float f[256];
    for (int i = 0; i < 256; i++) f[i] = (float)i * 0.5f;
    CHECK_RC(onnxzip_writer_add_memory(w, "weight", f, sizeof f), 0);
    tu_tensor t[] = { { "layer.weight", 1, { 16, 16 }, 2, "weight", 0 },
                      { "small", 1, { 4 }, 1, NULL, 16 },
                      { "layer.weight", 1, { 256 }, 1, "weight", 0 } };
    size_t mlen;
    uint8_t *model = tu_model(t, 3, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
    return path;
}

static void check_views(onnxzip_archive *a, const uint8_t *lo, size_t size)
{
    CHECK(onnxzip_tensor_count(a) == 3);
    CHECK(onnxzip_entry_count(a) == 2);
    const onnxzip_tensor *w = onnxzip_find_tensor(a, "layer.weight");
    CHECK(w == onnxzip_tensor_at(a, 0)); /* the first of a repeated name */
    CHECK(w && w->ndims == 2 && w->dims[0] == 16 && w->data_type == 1 && w->nbytes == 1024);
    CHECK(w && w->storage == ONNXZIP_STORAGE_ENTRY && !strcmp(w->entry, "weight") && w->alignment >= 64);
    CHECK(w && (uintptr_t)w->data % w->alignment == 0);
    CHECK(w && ((const float *)w->data)[3] == 1.5f);
    if (lo) CHECK(w && (const uint8_t *)w->data >= lo && (const uint8_t *)w->data + w->nbytes <= lo + size);
    const onnxzip_tensor *s = onnxzip_find_tensor(a, "small");
    CHECK(s && s->storage == ONNXZIP_STORAGE_INLINE && s->entry == NULL && s->nbytes == 16);
    CHECK(onnxzip_tensor_at(a, 2)->data == w->data); /* one entry, two tensors */
    CHECK(onnxzip_find_tensor(a, "nope") == NULL && onnxzip_tensor_at(a, 3) == NULL);
    const void *mb;
    size_t ml;
    CHECK_RC(onnxzip_model_bytes(a, &mb, &ml), 0);
    const onnxzip_entry *last = onnxzip_entry_at(a, 1);
    CHECK(!strcmp(last->name, "__MODEL_PROTO") && last->size == ml);
    const struct Onnx__ModelProto *m, *m2;
    if (!onnxzip_has_feature(ONNXZIP_FEATURE_MODEL_PROTO)) { /* -Dprotobuf_c=disabled */
        CHECK_RC(onnxzip_model_proto(a, &m), ONNXZIP_EUNSUPPORTED);
        CHECK(m == NULL && strstr(onnxzip_last_error()->message, "protobuf-c"));
        return;
    }
#ifdef TEST_NO_PROTOBUF_C
    (void)m2;
    CHECK(!"the library has protobuf-c but the test was built without its headers");
#else
    CHECK_RC(onnxzip_model_proto(a, &m), 0);
    CHECK(m && m->graph && m->graph->n_initializer == 3 && m->ir_version == 8);
    CHECK(m && m->graph->initializer[0]->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
    CHECK_RC(onnxzip_model_proto(a, &m2), 0);
    CHECK(m == m2); /* parsed once */
#endif
}

/* Open reads all central records before the local headers: the error is
 * still the first a one-pass check would meet, entry by entry (central
 * record, local header, name). */
static void many_entries(const char *dir)
{
    enum { N = 600 };
    const char *path = tu_path(dir, "many.onnxzip");
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    uint8_t data[100] = { 1 };
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        CHECK_RC(onnxzip_writer_add_memory(w, name, data, sizeof data), 0);
    }
    size_t mlen;
    uint8_t *model = tu_model_entries(N, sizeof data, 0, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
    FILE *f = fopen(path, "rb");
    uint8_t *buf = tu_aligned_alloc(65536, 1 << 20);
    size_t n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open_buffer(buf, n, 0, &a), 0);
    uint64_t lho[N], cdir[N];
    for (int i = 0; a && i < N; i++) lho[i] = onnxzip_entry_at(a, (size_t)i)->header_offset;
    onnxzip_close(&a);
    /* central records, found by their signatures after the last entry's data */
    size_t k = 0;
    for (size_t p = (size_t)lho[N - 1]; p + 4 <= n && k < N; p++)
        if (buf[p] == 'P' && buf[p + 1] == 'K' && buf[p + 2] == 1 && buf[p + 3] == 2) cdir[k++] = p;
    CHECK(k == N);
    struct { int local_a, local_b, central; int want; const char *named; } cases[] = {
        { 450, -1, -1, ONNXZIP_ELOCAL, "'w450'" },
        { 20, 450, -1, ONNXZIP_ELOCAL, "'w20'" },    /* two: the first */
        { 310, 299, -1, ONNXZIP_ELOCAL, "'w299'" },
        { 500, -1, 400, ONNXZIP_ECDIR, "'w400'" },   /* a central record before it */
        { 100, -1, 400, ONNXZIP_ELOCAL, "'w100'" },  /* a local header before that */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *copy = tu_aligned_alloc(65536, 1 << 20);
        memcpy(copy, buf, n);
        for (int j = 0; j < 2; j++) {
            int e = j ? cases[c].local_b : cases[c].local_a;
            if (e >= 0) copy[lho[e]] ^= 0xFF; /* the local header's signature */
        }
        if (cases[c].central >= 0) copy[cdir[cases[c].central] + 34] = 1; /* the disk number */
        CHECK_RC(onnxzip_open_buffer(copy, n, 0, &a), cases[c].want);
        CHECK(strstr(onnxzip_last_error()->message, cases[c].named) != NULL);
        tu_aligned_free(copy);
    }
    tu_aligned_free(buf);
}

static void nulls(void)
{
    onnxzip_archive *a = NULL;
    onnxzip_close(NULL);
    onnxzip_close(&a);
    CHECK(onnxzip_tensor_count(NULL) == 0 && onnxzip_entry_count(NULL) == 0);
    CHECK(onnxzip_tensor_at(NULL, 0) == NULL && onnxzip_find_tensor(NULL, "x") == NULL);
    CHECK_RC(onnxzip_open(NULL, 0, &a), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open("/nonexistent/x", 0, &a), ONNXZIP_EIO);
    CHECK(a == NULL && strstr(onnxzip_last_error()->message, "/nonexistent/x"));
    CHECK_RC(onnxzip_open_fd(-1, 0, &a), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open_buffer(NULL, 0, 0, &a), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open_buffer("", 0, 0, &a), ONNXZIP_ENOTZIP);
    CHECK_RC(onnxzip_open("/", 0, &a), ONNXZIP_ENOTREG); /* as an output that is a directory */
    CHECK(onnxzip_last_error()->sys_errno == EISDIR && !strcmp(onnxzip_last_error()->path, "/"));
    CHECK_RC(onnxzip_verify(NULL), ONNXZIP_EINVAL);
}

static void names(void)
{
#define CHECK_NAME_(name, value, desc)                                     \
    CHECK(!strcmp(onnxzip_strerror(value), desc));                       \
    CHECK(!strcmp(onnxzip_status_name(value), "ONNXZIP_" #name));
    ONNXZIP_STATUS_MAP(CHECK_NAME_)
#undef CHECK_NAME_
    CHECK(!strcmp(onnxzip_strerror(-9999), "unknown error"));
    CHECK(!strcmp(onnxzip_dtype_name(16), "BFLOAT16") && !strcmp(onnxzip_dtype_name(99), "UNKNOWN"));
    CHECK(onnxzip_version_number() == ONNXZIP_VERSION_NUMBER && onnxzip_version()[0] == '0' + ONNXZIP_VERSION_MAJOR);
}

/* onnxzip_open_url() without a server: its refusals, or in a build without
 * libcurl its status (tests/remote/run.py tests it against servers). */
static void check_url_refusals(void)
{
    onnxzip_archive *a = (onnxzip_archive *)&a;
    onnxzip_remote_options o;
    onnxzip_remote_options_init(&o);
    CHECK(o.allow_http == 0 && o.retries > 0 && o.parallel > 0 && o.tail_bytes >= 4096);
    onnxzip_remote_stats st;
    CHECK_RC(onnxzip_remote_get_stats(NULL, &st), ONNXZIP_EINVAL);
    if (!onnxzip_has_feature(ONNXZIP_FEATURE_REMOTE)) {
        CHECK_RC(onnxzip_open_url("https://127.0.0.1:1/m.onnxzip", NULL, &a), ONNXZIP_EUNSUPPORTED);
        CHECK(a == NULL);
        return;
    }
    CHECK_RC(onnxzip_open_url(NULL, NULL, &a), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_open_url("http://127.0.0.1:1/m.onnxzip", NULL, &a), ONNXZIP_EINVAL); /* http: not allowed */
    CHECK(strstr(onnxzip_last_error()->message, "http://127.0.0.1:1/m.onnxzip"));
    CHECK_RC(onnxzip_open_url("file:///etc/passwd", NULL, &a), ONNXZIP_EINVAL);
    o.retries = 0;
    CHECK_RC(onnxzip_open_url("https://127.0.0.1:1/m.onnxzip?sig=secret", &o, &a), ONNXZIP_ENETWORK);
    CHECK(a == NULL && !strstr(onnxzip_last_error()->message, "secret"));
}

int main(void)
{
    check_url_refusals();
    char *dir = tu_tmpdir();
    const char *path = make_archive(dir);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    if (a) check_views(a, NULL, 0);
    CHECK(a && !strcmp(onnxzip_archive_path(a), path));
    onnxzip_close(&a);
    CHECK(a == NULL);

    /* Access hints change nothing a caller can see; unknown flags are refused. */
    const unsigned hints[] = { ONNXZIP_OPEN_SEQUENTIAL, ONNXZIP_OPEN_WILLNEED, ONNXZIP_OPEN_POPULATE,
                               ONNXZIP_OPEN_HUGEPAGE, ONNXZIP_OPEN_SEQUENTIAL | ONNXZIP_OPEN_WILLNEED |
                               ONNXZIP_OPEN_VERIFY };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        CHECK_RC(onnxzip_open(path, hints[i], &a), 0);
        if (a) check_views(a, NULL, 0);
        onnxzip_close(&a);
    }
    CHECK_RC(onnxzip_open(path, 1u << 20, &a), ONNXZIP_EINVAL);
    CHECK(a == NULL && strstr(onnxzip_last_error()->message, "flags") != NULL);
    CHECK_RC(onnxzip_open_buffer("x", 1, 1u << 20, &a), ONNXZIP_EINVAL);

    int fd = open(path, O_RDONLY | O_BINARY);
    CHECK_RC(onnxzip_open_fd(fd, 0, &a), 0);
    close(fd); /* the views outlive the descriptor */
    if (a) check_views(a, NULL, 0);
    onnxzip_close(&a);

    FILE *f = fopen(path, "rb");
    uint8_t *buf = tu_aligned_alloc(65536, 1 << 20), *odd = malloc((1 << 20) + 1);
    size_t n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    CHECK_RC(onnxzip_open_buffer(buf, n, ONNXZIP_OPEN_VERIFY, &a), 0);
    if (a) check_views(a, buf, n);
    onnxzip_close(&a);
    /* Views report the alignment of their address: a buffer one byte off
     * 64 KiB alignment makes every payload odd, and says so. */
    memcpy(odd + 1, buf, n);
    CHECK_RC(onnxzip_open_buffer(odd + 1, n, 0, &a), 0);
    CHECK(a && onnxzip_find_tensor(a, "layer.weight")->alignment == 1);
    CHECK(a && ((uintptr_t)onnxzip_find_tensor(a, "layer.weight")->data & 1) == 1);
    onnxzip_close(&a);
    free(odd);
    const onnxzip_entry *e;
    CHECK_RC(onnxzip_open_buffer(buf, n, 0, &a), 0);
    e = onnxzip_entry_at(a, 0);
    buf[e->data_offset + 7] ^= 1; /* a flipped weight bit: open is fine, verify is not */
    CHECK_RC(onnxzip_verify(a), ONNXZIP_ECRC);
    CHECK(onnxzip_last_error()->offset == (int64_t)e->data_offset);
    CHECK(strstr(onnxzip_last_error()->message, "'weight'") != NULL);
    onnxzip_close(&a);
    CHECK_RC(onnxzip_open_buffer(buf, n, ONNXZIP_OPEN_VERIFY, &a), ONNXZIP_ECRC);
    CHECK(a == NULL);
    tu_aligned_free(buf);
    nulls();
    names();
    many_entries(dir);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("reader_api");
}
