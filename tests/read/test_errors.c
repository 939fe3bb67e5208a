/* Precise errors: zips of other tools (built with libzip, never with onnxzip)
 * say what they are; a cut archive is ETRUNC with the size its headers
 * imply; a missing external data file says it does not exist; sys_errno and
 * path of system-call failures; set-model refuses a model verify refuses
 * and leaves the archive byte-identical. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "testutil.h"

static const char *msg(void)
{
    return onnxzip_last_error()->message;
}

static void has(const char *needle)
{
    if (!strstr(msg(), needle)) fprintf(stderr, "  message lacks \"%s\": %s\n", needle, msg());
    CHECK(strstr(msg(), needle) != NULL);
}

/* A zip of `n` entries written by libzip: names[i] holding the size[i] bytes
 * at data[i], deflated or stored. */
static void libzip_write_n(const char *path, int n, const char *const *names, const void *const *data,
                           const size_t *size, int deflate)
{
    int err = 0;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
    CHECK(z != NULL);
    for (int i = 0; z && i < n; i++) {
        zip_source_t *s = zip_source_buffer(z, data[i], size[i], 0);
        zip_int64_t k = zip_file_add(z, names[i], s, ZIP_FL_ENC_UTF_8);
        CHECK(k >= 0);
        CHECK(zip_set_file_compression(z, (zip_uint64_t)k, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0);
    }
    CHECK(z && zip_close(z) == 0);
}

/* The same of strings. */
/* What onnxzip_repack() returns where it would return `rc`: builds without
 * libzip (-Dlibzip=disabled) have no repack. */
static int repack_rc(int rc)
{
    return onnxzip_has_feature(ONNXZIP_FEATURE_REPACK) ? rc : ONNXZIP_EUNSUPPORTED;
}

static void libzip_write(const char *path, int n, const char *const *names, const char *const *data, int deflate)
{
    const void *d[4];
    size_t size[4];
    for (int i = 0; i < n && i < 4; i++) d[i] = data[i], size[i] = strlen(data[i]);
    CHECK(n <= 4);
    libzip_write_n(path, n, names, d, size, deflate);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && !fseek(f, 0, SEEK_END)) n = ftell(f);
    if (f) fclose(f);
    return n;
}

static char *slurp(const char *path, long *n)
{
    *n = file_size(path);
    FILE *f = fopen(path, "rb");
    char *b = malloc(*n > 0 ? (size_t)*n : 1);
    CHECK(f && b && fread(b, 1, (size_t)*n, f) == (size_t)*n);
    if (f) fclose(f);
    return b;
}

static void spit(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
}

static void refused(const char *path, int want)
{
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(path, 0, &a), want);
    CHECK(a == NULL);
}

static void plain_zip(const char *dir)
{
    const char *names[] = { "a.txt", "b.txt" }, *data[] = { "hello\n", "world\n" };
    const char *p = tu_path(dir, "plain.zip");
    libzip_write(p, 2, names, data, 1);
    refused(p, ONNXZIP_ENOTONNXZIP); /* not EMETHOD (deflated) nor ENAME ('a.txt') */
    has("a zip archive, but not an onnxzip archive: it has no __MODEL_PROTO entry (2 entries, e.g. 'a.txt')");
    libzip_write(p, 1, names, data, 0);
    refused(p, ONNXZIP_ENOTONNXZIP);
    has("(1 entry, e.g. 'a.txt')");
}

/* PyTorch's old ZIP_ARCHIVE export: __MODEL_PROTO first, then the weights. */
static void legacy_zip(const char *dir)
{
    /* ir_version 7, graph { name "g" }, opset_import { version 13 }: a model verify accepts */
    const char *names[] = { "__MODEL_PROTO", "w0" },
               *data[] = { "\x08\x07\x3a\x03\x12\x01g\x42\x02\x10\x0d", "0123456789abcdef" };
    const char *p = tu_path(dir, "legacy.zip");
    libzip_write(p, 2, names, data, 1);
    refused(p, ONNXZIP_EMETHOD);
    has("an ONNX model zip written by another tool (or re-zipped), not an onnxzip archive as is");
    has("entry '__MODEL_PROTO' is deflated");
    has("convert it with: onnxzip repack");
    libzip_write(p, 2, names, data, 0); /* stored: the model is not last */
    refused(p, ONNXZIP_EMODELPOS);
    has("__MODEL_PROTO is entry 1 of 2, not the last; convert it with: onnxzip repack");
    const char *dotted[] = { "__MODEL_PROTO", "fc.weight" };
    libzip_write(p, 2, dotted, data, 0); /* PyTorch's names: repack maps them (fc.weight -> fc_weight) */
    refused(p, ONNXZIP_EMODELPOS);
    has("a PyTorch ZIP_ARCHIVE export (model entry '__MODEL_PROTO', entry 1 of 2)");
    has("convert it with: onnxzip repack");
    CHECK_RC(onnxzip_repack(p, tu_path(dir, "dotted.onnxzip"), NULL), repack_rc(0));
    const char *tf[] = { "__MODEL_PROTO.onnx" };
    libzip_write(p, 1, tf, data, 0);
    refused(p, ONNXZIP_ENOTONNXZIP);
    has("its model entry is named '__MODEL_PROTO.onnx'");
    CHECK_RC(onnxzip_repack(p, tu_path(dir, "tf.onnxzip"), NULL), repack_rc(0)); /* and repack takes it */
}

static void truncated(const char *dir)
{
    const char *names[] = { "w0", "w1", "__MODEL_PROTO" };
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *data[] = { big, big, "\x08\x07" };
    const char *p = tu_path(dir, "whole.zip"), *cut = tu_path(dir, "cut.zip");
    libzip_write(p, 3, names, data, 0);
    long n;
    char *b = slurp(p, &n);
    long at[] = { 10, 29, 100, n / 2, n - 60, n - 22, n - 1 };
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        spit(cut, b, (size_t)at[i]);
        refused(cut, ONNXZIP_ETRUNC);
        char want[160];
        snprintf(want, sizeof want, "truncated: %ld bytes, but its local headers describe at least ", at[i]);
        has(want);
        has("the download or copy was cut short");
        unsigned long long least = strtoull(strstr(msg(), "at least ") + 9, NULL, 10);
        CHECK(least > (unsigned long long)at[i] && least <= (unsigned long long)n); /* a true lower bound */
    }
    spit(cut, "not a zip at all, nor a model", 29); /* no local header: stays ENOTZIP */
    refused(cut, ONNXZIP_ENOTZIP);
    free(b);
}

static void system_errors(const char *dir)
{
    refused(tu_path(dir, "missing.onnxzip"), ONNXZIP_EIO);
    CHECK(onnxzip_last_error()->sys_errno == ENOENT);
    CHECK(onnxzip_last_error()->path && !strcmp(onnxzip_last_error()->path, tu_path(dir, "missing.onnxzip")));
    refused(dir, ONNXZIP_ENOTREG);
    CHECK(onnxzip_last_error()->sys_errno == EISDIR);
    onnxzip_writer *w = NULL; /* written: the same status and errno */
    CHECK_RC(onnxzip_writer_create(dir, NULL, &w), ONNXZIP_ENOTREG);
    CHECK(onnxzip_last_error()->sys_errno == EISDIR);
    refused(tu_path(dir, "plain.zip"), ONNXZIP_ENOTONNXZIP); /* not a system call's failure */
    CHECK(onnxzip_last_error()->sys_errno == 0 && onnxzip_last_error()->path == NULL);
}

/* A classic model whose tensor 'w' lives in 'x.bin', which is not there. */
static void missing_external(const char *dir)
{
    static const char loc[] = "x.bin";
    /* TensorProto: dims 4, data_type UINT8, name "w", external_data {location x.bin}, data_location EXTERNAL */
    uint8_t t[64], m[96];
    size_t k = 0;
    t[k++] = 0x08, t[k++] = 4, t[k++] = 0x10, t[k++] = 2, t[k++] = 0x42, t[k++] = 1, t[k++] = 'w';
    t[k++] = 0x6a, t[k++] = (uint8_t)(2 + 8 + 2 + sizeof loc - 1);
    t[k++] = 0x0a, t[k++] = 8, memcpy(t + k, "location", 8), k += 8;
    t[k++] = 0x12, t[k++] = sizeof loc - 1, memcpy(t + k, loc, sizeof loc - 1), k += sizeof loc - 1;
    t[k++] = 0x70, t[k++] = 1;
    size_t n = 0; /* ModelProto: ir_version 8, graph { initializer t } */
    m[n++] = 0x08, m[n++] = 8, m[n++] = 0x3a, m[n++] = (uint8_t)(k + 2), m[n++] = 0x2a, m[n++] = (uint8_t)k;
    memcpy(m + n, t, k), n += k;
    const char *p = tu_path(dir, "ext.onnx");
    spit(p, m, n);
    refused(p, ONNXZIP_ENOTFOUND);
    has("tensor 'w': external data file 'x.bin' does not exist (resolved in ");
    CHECK(!strstr(msg(), "refused"));
    CHECK(onnxzip_last_error()->sys_errno == ENOENT);
    const char *path = onnxzip_last_error()->path;
    CHECK(path && strlen(path) > 5 && !strcmp(path + strlen(path) - 5, "x.bin"));
}

/* set-model with a model verify refuses: refused with verify's message, the
 * archive byte-identical. */
static void set_model_checked(const char *dir)
{
    const char *p = tu_path(dir, "a.onnxzip");
    size_t len;
    uint8_t *model = tu_model_entries(1, 100, 0, &len);
    onnxzip_writer *w = NULL;
    uint8_t payload[100] = { 0 };
    CHECK_RC(onnxzip_writer_create(p, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "w0", payload, sizeof payload), 0);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    long n0, n1;
    char *before = slurp(p, &n0);
    CHECK_RC(onnxzip_update_model(p, "", 0), ONNXZIP_EPROTO); /* an empty ModelProto */
    char said[1024];
    snprintf(said, sizeof said, "%s", msg());
    has("entry '__MODEL_PROTO': no ir_version, no graph");
    static const uint8_t ir_only[] = { 0x08, 0x08 }; /* ir_version 8, no opset_import, no graph */
    CHECK_RC(onnxzip_update_model(p, ir_only, sizeof ir_only), ONNXZIP_EPROTO);
    has("no opset_import");
    char *after = slurp(p, &n1);
    CHECK(n0 == n1 && !memcmp(before, after, (size_t)n0));
    onnxzip_archive *a = NULL; /* verify of such an archive says the same */
    CHECK_RC(onnxzip_open_buffer(before, (size_t)n0, 0, &a), 0);
    free(model);
    free(after);
    onnxzip_close(&a);
    free(before);
    CHECK(strstr(said, p) == said);
}

/* A new empty directory dir/name: what a refused output leaves is counted there. */
static const char *subdir(const char *dir, const char *name)
{
    const char *d = tu_path(dir, name);
    CHECK(tu_mkdir(d) == 0);
    return d;
}

/* The last error is verify's message for the archive `out` whose model lacks
 * `fields`, and `dir` (unless NULL) holds `files` files: no output, no
 * temporary file. */
static void refused_as_verify(const char *out, const char *fields, const char *dir, int files)
{
    char want[4200];
    snprintf(want, sizeof want, "%s: entry '__MODEL_PROTO': %s (onnx.checker requires ", out, fields);
    if (strstr(msg(), want) != msg()) fprintf(stderr, "  want \"%s...\", got: %s\n", want, msg());
    CHECK(strstr(msg(), want) == msg());
    CHECK(!dir || tu_count_files(dir, "") == 2 + files); /* with "." and ".." */
}

/* Every writer refuses a model verify would refuse, with verify's message:
 * the writer itself (save() in Python), pack, repack. */
static void writers_checked(const char *dir)
{
    char out[4096];
    const char *d = subdir(dir, "writer");
    snprintf(out, sizeof out, "%s", tu_path(d, "a.onnxzip"));
    uint8_t payload[100] = { 0 };
    static const uint8_t ir_only[] = { 0x08, 0x08 };
    const void *models[] = { "", ir_only };
    const size_t sizes[] = { 0, sizeof ir_only };
    const char *said[] = { "no ir_version, no graph",
                           "no opset_import (required from ir_version 3 on, the model has 8), no graph" };
    for (int i = 0; i < 2; i++) {
        onnxzip_writer *w = NULL;
        CHECK_RC(onnxzip_writer_create(out, NULL, &w), 0);
        CHECK_RC(onnxzip_writer_add_memory(w, "w0", payload, sizeof payload), 0);
        CHECK_RC(onnxzip_writer_set_model(w, models[i], sizes[i]), 0);
        CHECK_RC(onnxzip_writer_finish(&w), ONNXZIP_EPROTO);
        CHECK(w == NULL);
        refused_as_verify(out, said[i], d, 0);
    }

    /* pack: a classic model without ir_version whose 4096-byte tensor goes
     * into an entry (written before the model is checked) */
    d = subdir(dir, "pack");
    tu_tensor t = { "w", 2, { 4096 }, 1, NULL, 4096 };
    size_t len;
    uint8_t *m = tu_model(&t, 1, &len);
    CHECK(len > 2 && m[0] == 0x08 && m[1] == 8); /* ir_version 8 first: dropped */
    char in[4096];
    snprintf(in, sizeof in, "%s", tu_path(d, "m.onnx"));
    spit(in, m + 2, len - 2);
    free(m);
    snprintf(out, sizeof out, "%s", tu_path(d, "m.onnxzip"));
    CHECK_RC(onnxzip_pack(in, out, NULL), ONNXZIP_EPROTO);
    refused_as_verify(out, "no ir_version", d, 1);

    /* repack of a libzip-made zip (deflated) whose model has no ir_version */
    d = subdir(dir, "repack");
    m = tu_model_entries(1, 100, 0, &len);
    const char *names[] = { "w0", "__MODEL_PROTO" };
    const void *data[] = { payload, m + 2 };
    size_t size[] = { sizeof payload, len - 2 };
    snprintf(in, sizeof in, "%s", tu_path(d, "in.zip"));
    libzip_write_n(in, 2, names, data, size, 1);
    snprintf(out, sizeof out, "%s", tu_path(d, "out.onnxzip"));
    CHECK_RC(onnxzip_repack(in, out, NULL), repack_rc(ONNXZIP_EPROTO));
    if (onnxzip_has_feature(ONNXZIP_FEATURE_REPACK)) refused_as_verify(out, "no ir_version", d, 1);
    data[1] = m, size[1] = len; /* the control: with its ir_version, repack takes it */
    libzip_write_n(in, 2, names, data, size, 1);
    CHECK_RC(onnxzip_repack(in, out, NULL), repack_rc(0));
    free(m);
}

/* verify of an archive (made by libzip) whose model lacks the fields: the
 * same message as the writers', at the model entry's data. */
static void verify_checked(const char *dir)
{
    uint8_t p00[100];
    for (size_t i = 0; i < sizeof p00; i += 2) p00[i] = 'P', p00[i + 1] = 0; /* field 10 = 0, fifty times */
    const char *names[] = { "__MODEL_PROTO" };
    const void *data[] = { p00 };
    const size_t size[] = { sizeof p00 };
    char p[4096];
    snprintf(p, sizeof p, "%s", tu_path(dir, "p00.zip"));
    libzip_write_n(p, 1, names, data, size, 0);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(p, ONNXZIP_OPEN_VERIFY, &a), 0); /* open accepts it */
    if (!a) return;
    CHECK_RC(onnxzip_verify(a), ONNXZIP_EPROTO);
    refused_as_verify(p, "no ir_version, no graph", NULL, 0);
    CHECK(onnxzip_last_error()->offset == (int64_t)onnxzip_entry_at(a, 0)->data_offset);
    onnxzip_close(&a);
}

int main(void)
{
    char *dir = tu_tmpdir();
    plain_zip(dir);
    legacy_zip(dir);
    truncated(dir);
    system_errors(dir);
    missing_external(dir);
    set_model_checked(dir);
    writers_checked(dir);
    verify_checked(dir);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("errors");
}
