/* onnxzip_repack(): foreign zips (deflated by libzip, with fillers, bad CRCs,
 * no model, odd names) back into aligned archives; onnxzip_extract_tensor();
 * the writer's stream source. Every refusal leaves no output and no temp file. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "write/zip_writer.h"
#include "testutil.h"

/* P() recycles four buffers: these paths live until the end. */
static const char *P(const char *dir, const char *name)
{
    static char arena[96][4096];
    static int k;
    if (k == 96 || snprintf(arena[k], sizeof arena[k], "%s/%s", dir, name) >= (int)sizeof arena[k]) abort();
    return arena[k++];
}

static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13) | 1; }

typedef struct spec {
    const char *name;
    uint64_t size;
} spec;

static const spec SPECS[] = {
    { "w0", 0 }, { "w1", 1 }, { "w4097", 4097 }, { "Big", 196570 } /* then mid_7 needs a filler at 65536 */, { "mid_7", 300 },
};
#define NSPECS (sizeof SPECS / sizeof SPECS[0])

static uint8_t *g_payload; /* pattern bytes, the largest size */

/* An archive of SPECS at alignment A, the model referencing every entry plus
 * one inline tensor "inl" of 16 zero bytes. */
static void build_original(const char *path, uint32_t A)
{
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.alignment = A;
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    tu_tensor t[NSPECS + 1];
    for (size_t i = 0; i < NSPECS; i++) {
        /* each entry starts at a different point of the pattern */
        CHECK_RC(onnxzip_writer_add_memory(w, SPECS[i].name, g_payload + i * 7, SPECS[i].size), 0);
        t[i] = (tu_tensor){ SPECS[i].name, 2 /* UINT8 */, { (int64_t)SPECS[i].size }, 1, SPECS[i].name, 0 };
    }
    t[NSPECS] = (tu_tensor){ "inl", 2, { 16 }, 1, NULL, 16 };
    size_t mlen;
    uint8_t *model = tu_model(t, NSPECS + 1, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        if (fd >= 0) close(fd);
        *len = 0;
        return NULL;
    }
    uint8_t *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    *len = got;
    return b;
}

static void spit(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, p, n) == (ssize_t)n);
    if (fd >= 0) close(fd);
}

/* Every entry of the archive at `src` (fillers included, in order) re-zipped
 * by libzip into `dst` with `method`, as another zip tool would. */
static void rezip(const char *src, const char *dst, int32_t method)
{
    size_t len;
    uint8_t *file = slurp(src, &len);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(src, 0, &a), 0);
    int err = 0;
    zip_t *z = zip_open(dst, ZIP_CREATE | ZIP_TRUNCATE, &err);
    CHECK(z != NULL);
    for (size_t i = 0; a && z && i < onnxzip_entry_count(a); i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        zip_source_t *s = zip_source_buffer(z, file + e->data_offset, e->size, 0);
        zip_int64_t idx = s ? zip_file_add(z, e->name, s, ZIP_FL_ENC_RAW) : -1;
        CHECK(idx == (zip_int64_t)i);
        CHECK(idx >= 0 && zip_set_file_compression(z, (zip_uint64_t)idx, method, 9) == 0);
    }
    CHECK(z && zip_close(z) == 0); /* reads the buffers: `file` lives until here */
    onnxzip_close(&a);
    free(file);
}

/* A zip written by libzip from (name, bytes, size, method) tuples. */
typedef struct zent {
    const char *name;
    const void *data;
    size_t size;
    int32_t method;
} zent;

static void make_zip(const char *path, const zent *e, size_t n)
{
    int err = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
    CHECK(z != NULL);
    for (size_t i = 0; z && i < n; i++) {
        zip_source_t *s = zip_source_buffer(z, e[i].data, e[i].size, 0);
        zip_int64_t idx = s ? zip_file_add(z, e[i].name, s, ZIP_FL_ENC_RAW) : -1;
        CHECK(idx >= 0 && zip_set_file_compression(z, (zip_uint64_t)idx, e[i].method, 9) == 0);
    }
    CHECK(z && zip_close(z) == 0);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* Same payload for every tensor of `orig` in `got`. */
static void same_tensors(onnxzip_archive *orig, onnxzip_archive *got)
{
    CHECK(onnxzip_tensor_count(orig) == onnxzip_tensor_count(got));
    for (size_t i = 0; orig && got && i < onnxzip_tensor_count(orig); i++) {
        const onnxzip_tensor *o = onnxzip_tensor_at(orig, i), *g = onnxzip_find_tensor(got, o->name);
        CHECK(g && g->storage == o->storage && g->nbytes == o->nbytes);
        CHECK(g && g->nbytes == o->nbytes && (!o->nbytes || !memcmp(g->data, o->data, o->nbytes)));
    }
}

/* The non-filler entries of `a`, in order, are NAMES (+ the model); all A-aligned. */
static void check_layout(onnxzip_archive *a, uint32_t A)
{
    size_t k = 0;
    for (size_t i = 0; a && i < onnxzip_entry_count(a); i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        if (!strncmp(e->name, "__PAD_", 6)) continue;
        CHECK(e->data_offset % A == 0);
        if (k < NSPECS) CHECK(!strcmp(e->name, SPECS[k].name));
        else CHECK(!strcmp(e->name, "__MODEL_PROTO"));
        k++;
    }
    CHECK(k == NSPECS + 1);
}

static int count_fillers(onnxzip_archive *a)
{
    int n = 0;
    for (size_t i = 0; a && i < onnxzip_entry_count(a); i++) n += !strncmp(onnxzip_entry_at(a, i)->name, "__PAD_", 6);
    return n;
}

/* (a) + (b): deflated by libzip, refused by the reader, repacked at 4096 and 64. */
static void deflated(const char *dir)
{
    const char *orig = P(dir, "orig.onnxzip"), *defl = P(dir, "deflated.zip");
    build_original(orig, 64);
    rezip(orig, defl, ZIP_CM_DEFLATE);

    int err = 0;
    zip_t *z = zip_open(defl, ZIP_RDONLY, &err);
    CHECK(z != NULL);
    for (zip_int64_t i = 0; z && i < zip_get_num_entries(z, 0); i++) {
        zip_stat_t st;
        CHECK(zip_stat_index(z, (zip_uint64_t)i, 0, &st) == 0 && st.comp_method == ZIP_CM_DEFLATE);
    }
    if (z) zip_discard(z);

    onnxzip_archive *a = NULL, *o = NULL;
    CHECK_RC(onnxzip_open(defl, 0, &a), ONNXZIP_EMETHOD);
    CHECK_RC(onnxzip_open(orig, ONNXZIP_OPEN_VERIFY, &o), 0);

    static const uint32_t aligns[] = { 4096, 64, 65536 };
    for (size_t k = 0; k < 3; k++) {
        const char *out = P(dir, "repacked.onnxzip");
        onnxzip_write_options opts;
        onnxzip_write_options_init(&opts);
        opts.alignment = aligns[k];
        CHECK_RC(onnxzip_repack(defl, out, &opts), 0);
        CHECK_RC(onnxzip_open(out, ONNXZIP_OPEN_VERIFY, &a), 0);
        CHECK_RC(a ? onnxzip_verify(a) : -1, 0);
        check_layout(a, aligns[k]);
        for (size_t i = 0; a && i < NSPECS; i++) {
            const onnxzip_tensor *t = onnxzip_find_tensor(a, SPECS[i].name);
            CHECK(t && t->storage == ONNXZIP_STORAGE_ENTRY && t->nbytes == SPECS[i].size);
            CHECK(t && (!t->nbytes || !memcmp(t->data, g_payload + i * 7, t->nbytes)));
            /* the mapping is page-aligned: the address is aligned as the offset, up to 4096 */
            CHECK(t && t->file_offset % aligns[k] == 0 && t->alignment >= (aligns[k] < 4096 ? aligns[k] : 4096));
        }
        if (o && a) same_tensors(o, a);
        onnxzip_close(&a);
        CHECK(unlink(out) == 0);
    }
    /* NULL options: the default alignment, 64. */
    CHECK_RC(onnxzip_repack(defl, P(dir, "d.onnxzip"), NULL), 0);
    CHECK_RC(onnxzip_open(P(dir, "d.onnxzip"), ONNXZIP_OPEN_VERIFY, &a), 0);
    check_layout(a, 64);
    onnxzip_close(&a);
    /* An onnxzip archive is a zip too: repack it as is. */
    CHECK_RC(onnxzip_repack(orig, P(dir, "same.onnxzip"), NULL), 0);
    CHECK_RC(onnxzip_open(P(dir, "same.onnxzip"), ONNXZIP_OPEN_VERIFY, &a), 0);
    if (o && a) same_tensors(o, a);
    onnxzip_close(&a);
    onnxzip_close(&o);
    CHECK(tu_count_files(dir, ".tmp-") == 0);
}

/* Fillers of the input (alignment 65536) are dropped; the writer adds its own when needed. */
static void fillers(const char *dir)
{
    const char *orig = P(dir, "orig64k.onnxzip"), *defl = P(dir, "defl64k.zip");
    const char *out = P(dir, "out4k.onnxzip");
    build_original(orig, 65536);
    onnxzip_archive *o = NULL, *a = NULL;
    CHECK_RC(onnxzip_open(orig, 0, &o), 0);
    CHECK(count_fillers(o) > 0);
    rezip(orig, defl, ZIP_CM_DEFLATE);
    onnxzip_write_options opts;
    onnxzip_write_options_init(&opts);
    opts.alignment = 4096;
    CHECK_RC(onnxzip_repack(defl, out, &opts), 0);
    CHECK_RC(onnxzip_open(out, ONNXZIP_OPEN_VERIFY, &a), 0);
    CHECK(count_fillers(a) == 0);
    check_layout(a, 4096);
    if (o && a) same_tensors(o, a);
    onnxzip_close(&a);
    onnxzip_close(&o);
}

/* A failed repack leaves neither the output nor a temporary file. */
static void refused(const char *dir, const char *in, int want, const char *needle)
{
    const char *out = P(dir, "refused.onnxzip");
    CHECK_RC(onnxzip_repack(in, out, NULL), want);
    if (needle && !strstr(onnxzip_last_error()->message, needle)) {
        fprintf(stderr, "  message lacks \"%s\": %s\n", needle, onnxzip_last_error()->message);
        CHECK(0);
    }
    CHECK(!exists(out));
    CHECK(tu_count_files(dir, ".tmp-") == 0);
}

/* Offset of `needle` in the file, or -1. */
static long find_bytes(const uint8_t *p, size_t n, const void *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(p + i, needle, k)) return (long)i;
    return -1;
}

static void refusals(const char *dir)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/refusals", dir);
    CHECK(mkdir(sub, 0755) == 0);
    dir = sub;
    const char *p = P(dir, "text.txt");
    const char *text = "this is plain text, not a zip archive; long enough to hold an end record\n";
    spit(p, text, strlen(text));
    refused(dir, p, ONNXZIP_ENOTZIP, "text.txt");
    spit(p, "", 0);
    refused(dir, p, ONNXZIP_ENOTZIP, "text.txt");
    refused(dir, P(dir, "missing.zip"), ONNXZIP_EIO, "missing.zip");
    refused(dir, dir, ONNXZIP_ENOTREG, NULL); /* a directory */
    CHECK(onnxzip_last_error()->sys_errno == EISDIR);

    tu_tensor ta = { "a", 2, { 64 }, 1, "a", 0 };
    size_t mlen;
    uint8_t *model = tu_model(&ta, 1, &mlen);
    uint8_t data[64];
    for (int i = 0; i < 64; i++) data[i] = (uint8_t)("MARKER-0123456789"[i % 17]);

    p = P(dir, "nomodel.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_DEFLATE } }, 1);
    refused(dir, p, ONNXZIP_ENOTONNXZIP, "__MODEL_PROTO");

    p = P(dir, "reserved.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_STORE }, { "__FUTURE", data, 3, ZIP_CM_STORE },
                          { "__MODEL_PROTO", model, mlen, ZIP_CM_DEFLATE } }, 3);
    refused(dir, p, ONNXZIP_ENAME, "__FUTURE");

    /* an entry name that is no onnxzip name is mapped (w/a -> w_a, spec 18),
     * so a model naming "a" refers to no entry of the zip */
    p = P(dir, "dirname.zip");
    make_zip(p, (zent[]){ { "w/a", data, 64, ZIP_CM_STORE }, { "__MODEL_PROTO", model, mlen, ZIP_CM_STORE } }, 2);
    refused(dir, p, ONNXZIP_EREF, "'a'");

    p = P(dir, "dupcase.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_STORE }, { "A", data, 64, ZIP_CM_STORE },
                          { "__MODEL_PROTO", model, mlen, ZIP_CM_STORE } }, 3);
    refused(dir, p, ONNXZIP_EDUPNAME, "'A'");

    /* references are checked by the writer: the model names a missing entry */
    p = P(dir, "noref.zip");
    make_zip(p, (zent[]){ { "b", data, 64, ZIP_CM_DEFLATE }, { "__MODEL_PROTO", model, mlen, ZIP_CM_DEFLATE } }, 2);
    refused(dir, p, ONNXZIP_EREF, NULL);

    /* a bad alignment is refused before anything is opened */
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.alignment = 100;
    CHECK_RC(onnxzip_repack(p, P(dir, "x.onnxzip"), &o), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_repack(NULL, "x", NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_repack("x", "", NULL), ONNXZIP_EINVAL);

    /* out == in, by name, through "./", and through a hard link: the input stays intact */
    p = P(dir, "good.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_DEFLATE }, { "__MODEL_PROTO", model, mlen, ZIP_CM_DEFLATE } }, 2);
    size_t before_len, after_len;
    uint8_t *before = slurp(p, &before_len);
    CHECK_RC(onnxzip_repack(p, p, NULL), ONNXZIP_ESAMEFILE);
    char dotted[8192];
    snprintf(dotted, sizeof dotted, "%s/./good.zip", dir);
    CHECK_RC(onnxzip_repack(p, dotted, NULL), ONNXZIP_ESAMEFILE);
    const char *alias = P(dir, "alias.zip");
    CHECK(link(p, alias) == 0);
    CHECK_RC(onnxzip_repack(p, alias, NULL), ONNXZIP_ESAMEFILE);
    CHECK(unlink(alias) == 0);
    uint8_t *after = slurp(p, &after_len);
    CHECK(before && after && before_len == after_len && !memcmp(before, after, before_len));
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    free(before);
    free(after);
    /* ... and the same input repacks fine elsewhere */
    CHECK_RC(onnxzip_repack(p, P(dir, "good.onnxzip"), NULL), 0);
    CHECK(unlink(P(dir, "good.onnxzip")) == 0);

    /* A stored entry with one data byte flipped: libzip's CRC check at its end. */
    p = P(dir, "badcrc.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_STORE }, { "__MODEL_PROTO", model, mlen, ZIP_CM_STORE } }, 2);
    uint8_t *z = slurp(p, &before_len);
    long at = z ? find_bytes(z, before_len, "MARKER-0123", 11) : -1;
    CHECK(at >= 0);
    if (at >= 0) {
        z[at + 3] ^= 0x20;
        spit(p, z, before_len);
    }
    free(z);
    refused(dir, p, ONNXZIP_ECRC, "'a'");

    /* A deflated entry whose recorded CRC (local and central, kept consistent) is wrong. */
    p = P(dir, "badcrc2.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_DEFLATE }, { "__MODEL_PROTO", model, mlen, ZIP_CM_DEFLATE } }, 2);
    z = slurp(p, &before_len);
    long cd = z ? find_bytes(z, before_len, "PK\x01\x02", 4) : -1;
    CHECK(z && cd > 0 && !memcmp(z, "PK\x03\x04", 4));
    if (cd > 0) {
        z[14] ^= 0x55;     /* local header CRC-32 of the first entry */
        z[cd + 16] ^= 0x55; /* central header CRC-32 of the first entry */
        spit(p, z, before_len);
    }
    free(z);
    refused(dir, p, ONNXZIP_ECRC, "'a'");

    /* The model itself with a bad CRC. */
    p = P(dir, "badcrc3.zip");
    make_zip(p, (zent[]){ { "a", data, 64, ZIP_CM_STORE }, { "__MODEL_PROTO", model, mlen, ZIP_CM_STORE } }, 2);
    z = slurp(p, &before_len);
    at = z ? find_bytes(z, before_len, model, mlen) : -1;
    CHECK(at >= 0);
    if (at >= 0) {
        z[at + mlen - 1] ^= 0x01;
        spit(p, z, before_len);
    }
    free(z);
    refused(dir, p, ONNXZIP_ECRC, "__MODEL_PROTO");
    free(model);
}

/* Minimal protobuf building for a model with a typed tensor. */
typedef struct pb {
    uint8_t b[512];
    size_t n;
} pb;

static void pb_varint(pb *p, uint64_t v)
{
    while (v >= 0x80) p->b[p->n++] = (uint8_t)(v | 0x80), v >>= 7;
    p->b[p->n++] = (uint8_t)v;
}

static void pb_bytes(pb *p, unsigned field, const void *d, size_t n)
{
    pb_varint(p, field << 3 | 2);
    pb_varint(p, n);
    memcpy(p->b + p->n, d, n);
    p->n += n;
}

/* ModelProto { ir_version 8, graph { initializer "ext" (UINT8[64], entry "ext"),
 * initializer "typed" (FLOAT[2] in float_data) } } */
static void typed_model(pb *m)
{
    pb ext = { .n = 0 }, kv = { .n = 0 }, typed = { .n = 0 }, graph = { .n = 0 };
    pb_varint(&ext, 1 << 3), pb_varint(&ext, 64);
    pb_varint(&ext, 2 << 3), pb_varint(&ext, 2);
    pb_bytes(&ext, 8, "ext", 3);
    pb_bytes(&kv, 1, "location", 8);
    pb_bytes(&kv, 2, "ext", 3);
    pb_bytes(&ext, 13, kv.b, kv.n);
    pb_varint(&ext, 14 << 3), pb_varint(&ext, 1);
    float f[2] = { 1.5f, -2.0f };
    pb_varint(&typed, 1 << 3), pb_varint(&typed, 2);
    pb_varint(&typed, 2 << 3), pb_varint(&typed, 1);
    pb_bytes(&typed, 4, f, sizeof f); /* packed float_data (little-endian host) */
    pb_bytes(&typed, 8, "typed", 5);
    pb_bytes(&graph, 5, ext.b, ext.n);
    pb_bytes(&graph, 5, typed.b, typed.n);
    *m = (pb){ .n = 0 };
    pb_varint(m, 1 << 3), pb_varint(m, 8);
    pb_bytes(m, 7, graph.b, graph.n);
    pb_bytes(m, 8, "\x10\x0d", 2); /* opset_import { version: 13 }: a model verify accepts */
}

/* (d) onnxzip_extract_tensor */
static void extract(const char *dir)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/extract", dir);
    CHECK(mkdir(sub, 0755) == 0);
    dir = sub;
    const char *arch = P(dir, "x.onnxzip");
    build_original(arch, 64);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(arch, 0, &a), 0);
    for (size_t i = 0; a && i < NSPECS; i++) {
        const char *out = P(dir, "t.bin");
        CHECK_RC(onnxzip_extract_tensor(a, SPECS[i].name, out), 0);
        size_t len;
        uint8_t *got = slurp(out, &len);
        CHECK(got && len == SPECS[i].size && (!len || !memcmp(got, g_payload + i * 7, len)));
        free(got);
        struct stat st;
        mode_t mask = umask(0);
        umask(mask);
        CHECK(stat(out, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
    }
    /* inline raw_data, over an existing file */
    const char *inl = P(dir, "inl.bin");
    spit(inl, "old content that is longer than sixteen bytes", 45);
    CHECK_RC(onnxzip_extract_tensor(a, "inl", inl), 0);
    size_t len;
    uint8_t *got = slurp(inl, &len);
    static const uint8_t zeros[16];
    CHECK(got && len == 16 && !memcmp(got, zeros, 16));
    free(got);

    const char *out = P(dir, "no.bin");
    CHECK_RC(onnxzip_extract_tensor(a, "nope", out), ONNXZIP_ENOTFOUND);
    CHECK(strstr(onnxzip_last_error()->message, "nope") != NULL);
    /* a missing directory is created (test_output_dirs.c); a file as one is refused */
    CHECK_RC(onnxzip_extract_tensor(a, "w0", P(dir, "x.onnxzip/dir/x.bin")), ONNXZIP_EIO);
    CHECK_RC(onnxzip_extract_tensor(a, "w1", dir), ONNXZIP_ENOTREG); /* a directory cannot be replaced by a file */
    CHECK_RC(onnxzip_extract_tensor(NULL, "w1", out), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_extract_tensor(a, NULL, out), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_extract_tensor(a, "w1", ""), ONNXZIP_EINVAL);
    /* out == archive, by name and by hard link */
    CHECK_RC(onnxzip_extract_tensor(a, "Big", arch), ONNXZIP_ESAMEFILE);
    const char *alias = P(dir, "alias.onnxzip");
    CHECK(link(arch, alias) == 0);
    CHECK_RC(onnxzip_extract_tensor(a, "Big", alias), ONNXZIP_ESAMEFILE);
    CHECK(unlink(alias) == 0);
    onnxzip_close(&a);
    CHECK_RC(onnxzip_open(arch, ONNXZIP_OPEN_VERIFY, &a), 0); /* still intact */
    onnxzip_close(&a);
    CHECK(!exists(out));

    /* typed fields: nothing to extract as raw bytes */
    const char *tarch = P(dir, "typed.onnxzip");
    pb m;
    typed_model(&m);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(tarch, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "ext", g_payload, 64), 0);
    CHECK_RC(onnxzip_writer_set_model(w, m.b, m.n), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK_RC(onnxzip_open(tarch, 0, &a), 0);
    const onnxzip_tensor *t = onnxzip_find_tensor(a, "typed");
    CHECK(t && t->storage == ONNXZIP_STORAGE_TYPED);
    CHECK_RC(onnxzip_extract_tensor(a, "typed", out), ONNXZIP_EUNSUPPORTED);
    CHECK(strstr(onnxzip_last_error()->message, "typed fields") != NULL);
    CHECK(!exists(out));
    CHECK_RC(onnxzip_extract_tensor(a, "ext", out), 0);
    got = slurp(out, &len);
    CHECK(got && len == 64 && !memcmp(got, g_payload, 64));
    free(got);
    onnxzip_close(&a);
    CHECK(tu_count_files(dir, ".tmp-") == 0);
}

/* The writer's stream source. */
typedef struct stream {
    const uint8_t *p;
    size_t left;
    int fail_at_end; /* status returned once the bytes are out */
    int overfill;    /* claim more than asked */
    size_t step;     /* bytes per read, to exercise short reads */
} stream;

static int stream_read(void *user, void *buf, size_t n, size_t *got)
{
    stream *s = user;
    if (s->overfill) {
        *got = n + 1;
        return 0;
    }
    if (!s->left && s->fail_at_end) return s->fail_at_end;
    size_t k = n < s->left ? n : s->left;
    if (s->step && k > s->step) k = s->step;
    memcpy(buf, s->p, k);
    s->p += k;
    s->left -= k;
    *got = k;
    return 0;
}

static void streams(const char *dir)
{
    const char *path = P(dir, "s.onnxzip");
    onnxzip_writer *w;
    uint64_t size = (3u << 20) + 5; /* several chunks of the writer */
    uint8_t *big = malloc(size);
    for (uint64_t i = 0; i < size; i++) big[i] = pattern(i);
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    stream s1 = { big, size, 0, 0, 0 }, s2 = { big, 10, 0, 0, 3 }, s0 = { big, 0, 0, 0, 0 };
    CHECK_RC(oz_writer_add_stream(w, "s1", size, stream_read, &s1), 0);
    CHECK_RC(oz_writer_add_stream(w, "s2", 10, stream_read, &s2), 0);
    CHECK_RC(oz_writer_add_stream(w, "s0", 0, stream_read, &s0), 0);
    CHECK_RC(oz_writer_add_stream(w, "nocb", 0, NULL, NULL), ONNXZIP_EINVAL);
    CHECK_RC(oz_writer_add_stream(w, "__x", 0, stream_read, &s0), ONNXZIP_ENAME);
    tu_tensor t[3] = { { "s1", 2, { (int64_t)size }, 1, "s1", 0 }, { "s2", 2, { 10 }, 1, "s2", 0 },
                       { "s0", 2, { 0 }, 1, "s0", 0 } };
    size_t mlen;
    uint8_t *model = tu_model(t, 3, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(path, ONNXZIP_OPEN_VERIFY, &a), 0);
    const onnxzip_tensor *v1 = onnxzip_find_tensor(a, "s1"), *v2 = onnxzip_find_tensor(a, "s2");
    CHECK(v1 && v1->nbytes == size && !memcmp(v1->data, big, size));
    CHECK(v2 && v2->nbytes == 10 && !memcmp(v2->data, big, 10));
    onnxzip_close(&a);

    /* short, long, failing and lying streams fail the entry, naming it */
    struct {
        stream s;
        uint64_t size;
        int want;
    } bad[] = {
        { { big, 100, 0, 0, 0 }, 101, ONNXZIP_ETRUNC },
        { { big, 100, 0, 0, 0 }, 99, ONNXZIP_ESIZE },
        { { big, 100, ONNXZIP_ECRC, 0, 0 }, 100, ONNXZIP_ECRC },
        { { big, 100, 0, 1, 0 }, 100, ONNXZIP_EINVAL },
        { { big, 100, 7, 0, 0 }, 100, ONNXZIP_EIO },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
        CHECK_RC(oz_writer_add_stream(w, "victim", bad[i].size, stream_read, &bad[i].s), bad[i].want);
        if (bad[i].want != ONNXZIP_ECRC) CHECK(strstr(onnxzip_last_error()->message, "'victim'") != NULL);
        CHECK_RC(onnxzip_writer_add_memory(w, "after", "x", 1), bad[i].want); /* the writer failed */
        onnxzip_writer_abort(&w);
    }
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    free(model);
    free(big);
}

/* A build without libzip (-Dlibzip=disabled): onnxzip_repack() says so,
 * naming the input, and writes nothing. */
static void unavailable(const char *dir)
{
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/in.zip", dir);
    snprintf(out, sizeof out, "%s/out.onnxzip", dir);
    CHECK_RC(onnxzip_repack(in, out, NULL), ONNXZIP_EUNSUPPORTED);
    const char *msg = onnxzip_last_error()->message;
    CHECK(strstr(msg, "in.zip") && strstr(msg, "libzip"));
    CHECK(access(out, F_OK) != 0);
    printf("repack: this build has no libzip: onnxzip_repack() reports ONNXZIP_EUNSUPPORTED\n");
}

int main(void)
{
    char *dir = tu_tmpdir();
    if (!onnxzip_has_feature(ONNXZIP_FEATURE_REPACK)) {
        unavailable(dir);
        tu_rmtree(dir);
        free(dir);
        return tu_finish("repack");
    }
    g_payload = malloc(300000);
    for (uint64_t i = 0; i < 300000; i++) g_payload[i] = pattern(i);
    deflated(dir);
    fillers(dir);
    refusals(dir);
    extract(dir);
    streams(dir);
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    free(g_payload);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("repack");
}
