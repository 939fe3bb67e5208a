#include <errno.h>
#include <stdlib.h>
#ifdef _WIN32
#include <malloc.h>
#endif
#include <string.h>

#include "common/sys.h" /* the library's own system layer: the same code on Windows */
#include "testutil.h"

int tu_passed, tu_failed;

void tu_check(int ok, const char *expr, const char *file, int line)
{
    if (ok) {
        tu_passed++;
        return;
    }
    tu_failed++;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, expr);
}

void tu_check_rc(int got, int want, const char *expr, const char *file, int line)
{
    if (got == want) {
        tu_passed++;
        return;
    }
    tu_failed++;
    fprintf(stderr, "FAIL %s:%d: %s returned %s, expected %s\n  last error: %s\n", file, line, expr,
            onnxzip_status_name(got), onnxzip_status_name(want), onnxzip_last_error()->message);
}

int tu_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
#ifdef _WIN32
    if (!base || !*base) base = getenv("TEMP");
#endif
    char path[4096];
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(path, sizeof path, "%s/onnxzip-test-%08llx", base && *base ? base : "/tmp",
                 (unsigned long long)(oz_sys_nonce() & 0xffffffffu));
        if (!oz_sys_mkdir_at(OZ_AT_CWD, path)) return strdup(path);
        if (errno != EEXIST) break;
    }
    perror("tu_tmpdir");
    exit(1);
}

typedef struct rm_ctx {
    int dirfd;
} rm_ctx;

/* Removes `name` in ctx->dirfd: a file, or a directory with what it holds
 * (symbolic links are removed, never followed). */
static int rm_in(void *user, const char *name)
{
    const rm_ctx *c = user;
    oz_stat st;
    if (!oz_sys_stat_at(c->dirfd, name, 0, &st) && st.kind == OZ_KIND_DIR) {
        rm_ctx sub = { oz_sys_dir_fd_at(c->dirfd, name) };
        if (sub.dirfd >= 0) {
            oz_sys_list_dir(sub.dirfd, rm_in, &sub);
            oz_sys_close(sub.dirfd);
        }
        oz_sys_unlink_at(c->dirfd, name, 1);
    } else {
        oz_sys_unlink_at(c->dirfd, name, 0);
    }
    return 0;
}

void tu_rmtree(const char *dir)
{
    rm_ctx c = { oz_sys_dir_fd(dir) };
    if (c.dirfd < 0) return;
    oz_sys_list_dir(c.dirfd, rm_in, &c);
    oz_sys_close(c.dirfd);
    oz_sys_unlink_at(OZ_AT_CWD, dir, 1);
}

const char *tu_path(const char *dir, const char *name)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

int tu_mkdir(const char *path)
{
    return oz_sys_mkdir_at(OZ_AT_CWD, path);
}

void *tu_aligned_alloc(size_t align, size_t size)
{
#ifdef _WIN32
    return _aligned_malloc(size, align);
#else
    return aligned_alloc(align, size);
#endif
}

void tu_aligned_free(void *p)
{
#ifdef _WIN32
    _aligned_free(p);
#else
    free(p);
#endif
}

const void *tu_memmem(const void *hay, size_t n, const void *needle, size_t k)
{
    const unsigned char *h = hay;
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (!memcmp(h + i, needle, k)) return h + i;
    return NULL;
}

int64_t tu_bytes_read(void *ctx, uint64_t off, size_t n, void *dst)
{
    const tu_bytes *b = ctx;
    if (off > b->n) return 0;
    size_t k = n < b->n - off ? n : (size_t)(b->n - off);
    memcpy(dst, b->p + off, k);
    return (int64_t)k;
}

typedef struct count_ctx {
    const char *needle;
    int n;
} count_ctx;

static int count_in(void *user, const char *name)
{
    count_ctx *c = user;
    if (strstr(name, c->needle)) c->n++;
    return 0;
}

int tu_count_files(const char *dir, const char *needle)
{
    /* "." and ".." too, as readdir() lists them */
    count_ctx c = { needle, (strstr(".", needle) != NULL) + (strstr("..", needle) != NULL) };
    int fd = oz_sys_dir_fd(dir);
    if (fd < 0) return 0;
    oz_sys_list_dir(fd, count_in, &c);
    oz_sys_close(fd);
    return c.n;
}

/* Tiny protobuf writer, enough to build test models by hand. */
typedef struct pbw {
    uint8_t *p;
    size_t len, cap;
} pbw;

static void put(pbw *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void varint(pbw *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) t[n++] = (uint8_t)(v | 0x80), v >>= 7;
    t[n++] = (uint8_t)v;
    put(b, t, n);
}

static void lenfield(pbw *b, unsigned num, const void *d, size_t n)
{
    varint(b, num << 3 | 2);
    varint(b, n);
    put(b, d, n);
}

uint8_t *tu_model(const tu_tensor *t, size_t n, size_t *len)
{
    pbw graph = { 0 }, model = { 0 };
    for (size_t i = 0; i < n; i++) {
        pbw tp = { 0 };
        for (int d = 0; d < t[i].ndims; d++) varint(&tp, 1 << 3), varint(&tp, (uint64_t)t[i].dims[d]);
        varint(&tp, 2 << 3);
        varint(&tp, (uint64_t)t[i].dtype);
        lenfield(&tp, 8, t[i].name, strlen(t[i].name));
        if (t[i].entry) {
            pbw kv = { 0 };
            lenfield(&kv, 1, "location", 8);
            lenfield(&kv, 2, t[i].entry, strlen(t[i].entry));
            lenfield(&tp, 13, kv.p, kv.len);
            varint(&tp, 14 << 3);
            varint(&tp, 1);
            free(kv.p);
        } else {
            uint8_t *z = calloc(1, t[i].raw_len + 1);
            lenfield(&tp, 9, z, t[i].raw_len);
            free(z);
        }
        lenfield(&graph, 5, tp.p, tp.len);
        free(tp.p);
    }
    varint(&model, 1 << 3);
    varint(&model, 8); /* ir_version */
    lenfield(&model, 7, graph.p ? graph.p : (uint8_t *)"", graph.len);
    /* opset_import { version: 13 }: with ir_version and a graph, what
     * onnxzip_verify() (as onnx.checker) requires of every model */
    lenfield(&model, 8, (const uint8_t[]){ 2 << 3, 13 }, 2);
    free(graph.p);
    *len = model.len;
    return model.p;
}

uint8_t *tu_model_entries(int n, uint64_t each, size_t pad, size_t *len)
{
    tu_tensor *t = calloc((size_t)n, sizeof *t);
    char(*names)[16] = calloc((size_t)n, sizeof *names);
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "w%d", i);
        t[i] = (tu_tensor){ names[i], 2, { (int64_t)each }, 1, names[i], 0 };
    }
    size_t m_len;
    uint8_t *m = tu_model(t, (size_t)n, &m_len);
    free(t);
    free(names);
    pbw b = { m, m_len, m_len };
    uint8_t *doc = malloc(pad + 1);
    for (size_t k = 0; k < pad; k++) doc[k] = (uint8_t)('a' + k % 26);
    lenfield(&b, 6, doc, pad); /* ModelProto.doc_string, after the graph */
    free(doc);
    *len = b.len;
    return b.p;
}
