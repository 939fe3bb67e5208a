/* onnxzip_unpack(): the three layouts re-read by parsing the written classic
 * files (model walk + data files), reference keys, Windows device names,
 * argument errors, atomicity (no temporary directory left, targets not
 * followed), the inline 2 GiB limit; and SHA-1 against the FIPS vectors. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx_walk.h"
#include "onnx/pbwire.h"
#include "common/sha1.h"
#include "testutil.h"

#ifndef O_BINARY
#define O_BINARY 0 /* Windows: no newline translation */
#endif

/* ------------------------------------------------------------------------
 * SHA-1
 * ---------------------------------------------------------------------- */

static void test_sha1(void)
{
    char hex[41];
    oz_sha1_hex("abc", 3, hex);
    CHECK(!strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d"));
    oz_sha1_hex("", 0, hex);
    CHECK(!strcmp(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709"));
    oz_sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
    CHECK(!strcmp(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    oz_sha1_hex(a, 1000000, hex);
    CHECK(!strcmp(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"));
    /* the same, streamed in awkward pieces */
    static const size_t steps[] = { 1, 63, 64, 65, 1000, 55, 56, 57 };
    oz_sha1 s;
    uint8_t d[20];
    oz_sha1_init(&s);
    for (size_t done = 0, k = 0; done < 1000000; k++) {
        size_t n = steps[k % 8] < 1000000 - done ? steps[k % 8] : 1000000 - done;
        oz_sha1_update(&s, a + done, n);
        done += n;
    }
    oz_sha1_final(&s, d);
    CHECK(d[0] == 0x34 && d[1] == 0xaa && d[18] == 0x01 && d[19] == 0x6f);
    free(a);
}

/* ------------------------------------------------------------------------
 * The fixture archive
 * ---------------------------------------------------------------------- */

typedef struct fx_entry {
    const char *name;
    uint64_t size;
    const char *per_tensor_file; /* the file PER_TENSOR must write */
} fx_entry;

static const fx_entry entries[] = {
    { "w", 1000, "w" },        { "CON", 100, "CON__2" }, /* "CON_" is taken by con_ */
    { "con_", 7, "con_" },     { "Aux", 50, "Aux_" },
    { "shared", 5000, "shared" }, { "z", 0, "z" },
    { "nul", 3, "nul_" },      { "LPT1", 9, "LPT1_" },
    { "COM10", 4, "COM10" },   /* not a device name */
};
#define NENT (sizeof entries / sizeof entries[0])

typedef struct fx_tensor {
    const char *name;
    int entry;             /* index in entries, -1: inline */
    uint64_t off, len;     /* the part of the entry */
    int partial;
} fx_tensor;

static const fx_tensor tensors[] = {
    { "w", 0, 0, 1000, 0 },      { "dev", 1, 0, 100, 0 },   { "dev2", 2, 0, 7, 0 },
    { "aux", 3, 0, 50, 0 },      { "s_full", 4, 0, 5000, 0 }, { "s_part", 4, 64, 128, 1 },
    { "inl", -1, 0, 16, 0 },     { "empty", 5, 0, 0, 0 },   { "s_dup", 4, 0, 5000, 0 },
    { "n", 6, 0, 3, 0 },         { "l", 7, 0, 9, 0 },       { "c10", 8, 0, 4, 0 },
};
#define NTEN (sizeof tensors / sizeof tensors[0])

static uint8_t *payload[NENT];

static uint8_t pattern(size_t e, uint64_t i) { return (uint8_t)((i + 1) * 2654435761u >> 13 ^ e * 37); }

static const uint8_t *expected_bytes(const fx_tensor *t)
{
    static const uint8_t zeros[16];
    return t->entry < 0 ? zeros : payload[t->entry] + t->off;
}

/* Gives "s_part" an offset/length reference, which tu_model cannot write. */
static int add_part(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    (void)ctx;
    if (t->name.len == 6 && !memcmp(t->name.p, "s_part", 6))
        *rw = (oz_rewrite){ .action = OZ_EXTERNAL, .location = "shared", .has_offset = 1, .offset = 64,
                            .has_length = 1, .length = 128 };
    return 0;
}

static void make_archive(const char *path)
{
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    for (size_t e = 0; e < NENT; e++) {
        payload[e] = malloc(entries[e].size + 1);
        for (uint64_t i = 0; i < entries[e].size; i++) payload[e][i] = pattern(e, i);
        CHECK_RC(onnxzip_writer_add_memory(w, entries[e].name, payload[e], entries[e].size), 0);
    }
    tu_tensor tt[NTEN];
    for (size_t i = 0; i < NTEN; i++) {
        const fx_tensor *t = &tensors[i];
        tt[i] = (tu_tensor){ t->name, t->entry < 0 ? 1 : 2, { t->entry < 0 ? 4 : (int64_t)t->len }, 1,
                             t->entry < 0 ? NULL : entries[t->entry].name, t->len };
    }
    size_t len;
    uint8_t *model = tu_model(tt, NTEN, &len);
    oz_buf out = { 0 };
    oz_walk walk = { .visit = add_part, .out = &out, .path = "fixture" };
    CHECK_RC(oz_walk_model(&walk, model, len), 0);
    CHECK_RC(onnxzip_writer_set_model(w, out.p, out.len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    oz_buf_free(&out);
    free(model);
}

/* ------------------------------------------------------------------------
 * Reading the classic output back, by hand
 * ---------------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_BINARY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    uint8_t *p = malloc((size_t)st.st_size + 1);
    ssize_t k = read(fd, p, (size_t)st.st_size);
    close(fd);
    if (k != st.st_size) {
        free(p);
        return NULL;
    }
    *len = (size_t)st.st_size;
    return p;
}

typedef struct seen {
    char name[32];
    int external, has_raw, has_offset, has_length;
    char location[300], checksum[64];
    uint64_t offset, length;
    oz_span raw;
} seen;

typedef struct reader {
    seen s[64];
    size_t n;
} reader;

static void span_str(oz_span sp, char *out, size_t cap)
{
    size_t n = sp.len < cap - 1 ? sp.len : cap - 1;
    memcpy(out, sp.p, n);
    out[n] = '\0';
}

/* The value of the external_data key "checksum", parsed from the message. */
static void find_checksum(const oz_tensor_info *t, char *out, size_t cap)
{
    pb_reader r = { t->msg.p, t->msg.p + t->msg.len };
    pb_field f, g;
    out[0] = '\0';
    while (r.p < r.end && !pb_next(&r, &f)) {
        if (f.num != 13 || f.wt != PB_LEN) continue;
        pb_reader kv = { f.data, f.data + f.len };
        oz_span key = { NULL, 0 }, value = { NULL, 0 };
        while (kv.p < kv.end && !pb_next(&kv, &g)) {
            if (g.num == 1) key = (oz_span){ g.data, g.len };
            if (g.num == 2) value = (oz_span){ g.data, g.len };
        }
        if (key.len == 8 && !memcmp(key.p, "checksum", 8)) span_str(value, out, cap);
    }
}

static int record(void *ctx, const oz_tensor_info *t, oz_rewrite *rw)
{
    reader *r = ctx;
    (void)rw;
    if (r->n == 64) return -1;
    seen *s = &r->s[r->n++];
    memset(s, 0, sizeof *s);
    span_str(t->name, s->name, sizeof s->name);
    s->external = t->data_location == 1;
    s->has_raw = t->has_raw;
    s->raw = t->raw;
    if (t->has_location) span_str(t->location, s->location, sizeof s->location);
    s->has_offset = t->has_offset && !oz_parse_decimal(t->offset, &s->offset);
    s->has_length = t->has_length && !oz_parse_decimal(t->length, &s->length);
    find_checksum(t, s->checksum, sizeof s->checksum);
    return 0;
}

/* Reads the model at dir/name; returns its bytes (the spans point into them). */
static uint8_t *read_model(const char *dir, const char *name, reader *r)
{
    size_t len;
    uint8_t *m = slurp(tu_path(dir, name), &len);
    r->n = 0;
    CHECK(m != NULL);
    if (!m) return NULL;
    oz_walk w = { .visit = record, .ctx = r, .path = name };
    CHECK_RC(oz_walk_model(&w, m, len), 0);
    CHECK(r->n == NTEN);
    return m;
}

/* The bytes ONNX would load for an external reference. */
static int external_matches(const char *dir, const seen *s, const fx_tensor *t)
{
    size_t len;
    uint8_t *f = slurp(tu_path(dir, s->location), &len);
    if (!f) return 0;
    uint64_t off = s->has_offset ? s->offset : 0;
    uint64_t n = s->has_length ? s->length : len - off;
    int ok = off <= len && n <= len - off && n == t->len && !memcmp(f + off, expected_bytes(t), t->len);
    free(f);
    return ok;
}

static void check_checksum(const seen *s, const fx_tensor *t, int want)
{
    char hex[41];
    oz_sha1_hex(expected_bytes(t), t->len, hex);
    CHECK(want ? !strcmp(s->checksum, hex) : s->checksum[0] == '\0');
}

static void check_single(const char *dir, const char *location, uint32_t align, int checksum)
{
    reader r;
    uint8_t *m = read_model(dir, "model.onnx", &r);
    for (size_t i = 0; m && i < NTEN; i++) {
        const seen *s = &r.s[i];
        const fx_tensor *t = &tensors[i];
        CHECK(!strcmp(s->name, t->name));
        if (t->entry < 0) {
            CHECK(!s->external && s->has_raw && s->raw.len == 16);
            continue;
        }
        CHECK(s->external && !s->has_raw && !strcmp(s->location, location));
        CHECK(s->has_offset && s->has_length);
        CHECK((s->offset - t->off) % align == 0);
        CHECK(external_matches(dir, s, t));
        check_checksum(s, t, checksum);
    }
    /* "shared" is written once: the three tensors using it share its copy */
    CHECK(m && r.s[4].offset == r.s[8].offset && r.s[5].offset == r.s[4].offset + 64);
    /* the empty tensor sits at the end of the file: onnx 1.12 reads length 0 as "the rest" */
    struct stat st;
    CHECK(m && !stat(tu_path(dir, location), &st) && r.s[7].length == 0 && r.s[7].offset == (uint64_t)st.st_size);
    free(m);
    CHECK(tu_count_files(dir, ".unpack-") == 0);
    CHECK(tu_count_files(dir, "") == 4); /* ., .., model, data */
}

static void check_per_tensor(const char *dir)
{
    reader r;
    uint8_t *m = read_model(dir, "model.onnx", &r);
    for (size_t i = 0; m && i < NTEN; i++) {
        const seen *s = &r.s[i];
        const fx_tensor *t = &tensors[i];
        if (t->entry < 0) {
            CHECK(!s->external && s->has_raw);
            continue;
        }
        CHECK(s->external && !strcmp(s->location, entries[t->entry].per_tensor_file));
        CHECK(s->has_offset == t->partial && s->has_length == t->partial);
        CHECK(!t->partial || (s->offset == 64 && s->length == 128));
        CHECK(external_matches(dir, s, t));
    }
    for (size_t e = 0; e < NENT; e++) {
        struct stat st;
        CHECK(!stat(tu_path(dir, entries[e].per_tensor_file), &st) && (uint64_t)st.st_size == entries[e].size);
    }
    free(m);
    CHECK(tu_count_files(dir, "") == 2 + 1 + (int)NENT);
}

static void check_inline(const char *dir)
{
    reader r;
    uint8_t *m = read_model(dir, "model.onnx", &r);
    for (size_t i = 0; m && i < NTEN; i++) {
        const seen *s = &r.s[i];
        const fx_tensor *t = &tensors[i];
        CHECK(!s->external && s->has_raw && s->location[0] == '\0');
        CHECK(s->raw.len == t->len && !memcmp(s->raw.p, expected_bytes(t), t->len));
    }
    free(m);
    CHECK(tu_count_files(dir, "") == 3);
}

/* ------------------------------------------------------------------------
 * Tests
 * ---------------------------------------------------------------------- */

typedef struct progress_log {
    unsigned calls;
    uint64_t done, total;
} progress_log;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    progress_log *p = user;
    p->calls++;
    p->done = done;
    p->total = total;
}

static char *subdir(const char *root, const char *name)
{
    const char *p = tu_path(root, name);
    tu_mkdir(p);
    return strdup(p);
}

/* Options that move every tensor, however small: the layout cases check
 * the files they write. */
static const onnxzip_unpack_options *move_all(void)
{
    static onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    return &o;
}

/* With the default threshold (1024 bytes), only tensors at least that large
 * go to the data file; the others come back inline, as onnx writes them. */
static void test_default_threshold(const char *root, const char *arc)
{
    char *d = subdir(root, "default_threshold");
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), NULL), 0);
    reader r;
    uint8_t *m = read_model(d, "model.onnx", &r);
    size_t moved = 0, inlined = 0;
    for (size_t i = 0; m && i < NTEN; i++) {
        const seen *s = &r.s[i];
        const fx_tensor *t = &tensors[i];
        if (t->entry < 0) continue;
        if (t->len >= 1024) {
            moved++;
            CHECK(s->external && external_matches(d, s, t));
        } else {
            inlined++;
            CHECK(!s->external && s->has_raw && s->raw.len == t->len && !memcmp(s->raw.p, expected_bytes(t), t->len));
        }
    }
    CHECK(moved > 0 && inlined > 0);
    free(m);
    free(d);
}

static void test_layouts(const char *root, const char *arc)
{
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    CHECK(o.layout == ONNXZIP_UNPACK_SINGLE && o.alignment == 4096 && !o.location && !o.flags && !o.progress);
    CHECK(o.size_threshold == 1024);
    test_default_threshold(root, arc);
    o.size_threshold = 0; /* the layout cases below move every tensor, however small */

    char *d = subdir(root, "single");
    progress_log pl = { 0 };
    o.progress = on_progress;
    o.progress_user = &pl;
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), 0);
    check_single(d, "model.onnx.data", 4096, 0);
    CHECK(pl.calls == 1 && pl.done == pl.total && pl.total == 1000 + 100 + 7 + 50 + 5000 + 3 + 9 + 4);
    free(d);

    d = subdir(root, "single_a1_sum");
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.alignment = 1;
    o.location = "weights.bin";
    o.flags = ONNXZIP_UNPACK_CHECKSUM;
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), 0);
    check_single(d, "weights.bin", 1, 1);
    free(d);

    d = subdir(root, "single_64k");
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.alignment = 65536;
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), 0);
    check_single(d, "model.onnx.data", 65536, 0);
    free(d);

    d = subdir(root, "per_tensor");
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.layout = ONNXZIP_UNPACK_PER_TENSOR;
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), 0);
    check_per_tensor(d);
    free(d);

    /* the model named like an entry: the entry's file moves aside */
    d = subdir(root, "model_named_w");
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "W"), &o), 0);
    reader r;
    uint8_t *m = read_model(d, "W", &r);
    CHECK(m && !strcmp(r.s[0].location, "w_2") && external_matches(d, &r.s[0], &tensors[0]));
    free(m);
    free(d);

    d = subdir(root, "inline");
    o.layout = ONNXZIP_UNPACK_INLINE;
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), 0);
    check_inline(d);
    free(d);
}

/* Nothing in entries: the model alone, no empty data file. */
static void test_no_entries(const char *root)
{
    char *d = subdir(root, "no_entries");
    char *arc = strdup(tu_path(root, "inline_only.onnxzip"));
    onnxzip_writer *w;
    tu_tensor t = { "x", 1, { 2 }, 1, NULL, 8 };
    size_t len;
    uint8_t *model = tu_model(&t, 1, &len);
    CHECK_RC(onnxzip_writer_create(arc, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "m.onnx"), move_all()), 0);
    size_t n = 0;
    uint8_t *got = slurp(tu_path(d, "m.onnx"), &n);
    CHECK(got && n == len && !memcmp(got, model, len)); /* byte for byte */
    CHECK(tu_count_files(d, "") == 3);
    /* a classic model is no archive: nothing to unpack */
    FILE *f = fopen(tu_path(root, "classic.onnx"), "wb");
    fwrite(model, 1, len, f);
    fclose(f);
    CHECK_RC(onnxzip_unpack(tu_path(root, "classic.onnx"), tu_path(d, "c.onnx"), NULL), ONNXZIP_EUNSUPPORTED);
    CHECK(tu_count_files(d, "") == 3);
    free(got);
    free(model);
    free(arc);
    free(d);
}

/* A failed unpack leaves DIR as it was: `files` entries (with . and ..). */
static void check_untouched(const char *dir, int files)
{
    CHECK(tu_count_files(dir, ".unpack-") == 0);
    CHECK(tu_count_files(dir, "") == files);
}

static void unpack_fails(const char *arc, const char *dir, onnxzip_unpack_options *o, int want)
{
    CHECK_RC(onnxzip_unpack(arc, tu_path(dir, "model.onnx"), o), want);
    check_untouched(dir, 2);
}

static void test_errors(const char *root, const char *arc)
{
    char *d = subdir(root, "errors");
    onnxzip_unpack_options o;
    static const char *const bad_locations[] = { "../x", "a/b", ".", "..", "", "/abs" };
    for (size_t i = 0; i < sizeof bad_locations / sizeof *bad_locations; i++) {
        onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
        o.location = bad_locations[i];
        unpack_fails(arc, d, &o, ONNXZIP_EINVAL);
    }
    static const uint32_t bad_align[] = { 0, 3, 96, 131072 };
    for (size_t i = 0; i < sizeof bad_align / sizeof *bad_align; i++) {
        onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
        o.alignment = bad_align[i];
        unpack_fails(arc, d, &o, ONNXZIP_EINVAL);
    }
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.location = "model.onnx"; /* the model's own name */
    unpack_fails(arc, d, &o, ONNXZIP_EINVAL);
    o.location = "MODEL.ONNX";
    unpack_fails(arc, d, &o, ONNXZIP_EINVAL);
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.layout = (onnxzip_unpack_layout)7;
    unpack_fails(arc, d, &o, ONNXZIP_EINVAL);
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.flags = 1u << 9;
    unpack_fails(arc, d, &o, ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_unpack(NULL, tu_path(d, "m.onnx"), NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_unpack(arc, NULL, NULL), ONNXZIP_EINVAL);
    char below_file[4096]; /* a missing directory is created (test_output_dirs.c); a file as one is refused */
    snprintf(below_file, sizeof below_file, "%s/m.onnx", arc);
    CHECK_RC(onnxzip_unpack(arc, below_file, NULL), ONNXZIP_EIO);
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, ""), NULL), ONNXZIP_EINVAL); /* "DIR/" */
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, ".."), NULL), ONNXZIP_EINVAL);
    CHECK_RC(onnxzip_unpack(tu_path(d, "no.onnxzip"), tu_path(d, "m.onnx"), NULL), ONNXZIP_EIO);
    check_untouched(d, 2);
    /* a directory at the target */
    tu_mkdir(tu_path(d, "model.onnx"));
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), NULL), ONNXZIP_ENOTREG);
    check_untouched(d, 3);
    rmdir(tu_path(d, "model.onnx"));
    free(d);
}

static void test_not_the_archive(const char *root)
{
    char *d = subdir(root, "self");
    char *arc = strdup(tu_path(d, "a.onnxzip"));
    make_archive(arc);
    struct stat before, after;
    stat(arc, &before);
    CHECK_RC(onnxzip_unpack(arc, arc, NULL), ONNXZIP_ESAMEFILE);
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.location = "a.onnxzip"; /* the data file would replace the archive */
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "m.onnx"), &o), ONNXZIP_ESAMEFILE);
#ifndef _WIN32 /* hard links: POSIX's link() */
    link(arc, tu_path(d, "hard.onnx")); /* another name of the same file */
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "hard.onnx"), NULL), ONNXZIP_ESAMEFILE);
    unlink(tu_path(d, "hard.onnx"));
#endif
    CHECK(!stat(arc, &after) && after.st_ino == before.st_ino && after.st_size == before.st_size &&
          after.st_mtime == before.st_mtime);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(arc, ONNXZIP_OPEN_VERIFY, &a), 0);
    onnxzip_close(&a);
    check_untouched(d, 3);
    for (size_t e = 0; e < NENT; e++) free(payload[e]);
    free(arc);
    free(d);
}

#ifndef _WIN32
/* Existing files are replaced, never written through: a symlink at the
 * target is replaced by the new file, its target left alone. */
static void test_replace(const char *root, const char *arc)
{
    char *d = subdir(root, "replace");
    char *victim = strdup(tu_path(d, "victim"));
    FILE *f = fopen(victim, "w");
    fputs("keep", f);
    fclose(f);
    CHECK(!symlink(victim, tu_path(d, "model.onnx")));
    CHECK(!symlink(victim, tu_path(d, "model.onnx.data")));
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), move_all()), 0);
    struct stat st;
    CHECK(!lstat(tu_path(d, "model.onnx"), &st) && S_ISREG(st.st_mode));
    CHECK(!lstat(tu_path(d, "model.onnx.data"), &st) && S_ISREG(st.st_mode));
    CHECK(!stat(victim, &st) && st.st_size == 4);
    unlink(victim);
    check_single(d, "model.onnx.data", 4096, 0);
    /* again over the files just written */
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), move_all()), 0);
    check_single(d, "model.onnx.data", 4096, 0);
    free(victim);
    free(d);
}

#endif

/* 33 tensors share one 64 MiB entry: inline, each needs its own copy, over
 * 2 GiB in all, refused before anything is built; single writes it once. */
static void test_inline_limit(const char *root)
{
    char *d = subdir(root, "limit");
    char *arc = strdup(tu_path(root, "big.onnxzip"));
    const uint64_t size = 64u << 20;
    uint8_t *zeros = calloc(1, size);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(arc, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "big", zeros, size), 0);
    tu_tensor t[33];
    char names[33][8];
    for (int i = 0; i < 33; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        t[i] = (tu_tensor){ names[i], 2, { (int64_t)size }, 1, "big", 0 };
    }
    size_t len;
    uint8_t *model = tu_model(t, 33, &len);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    onnxzip_unpack_options o;
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.layout = ONNXZIP_UNPACK_INLINE;
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), ONNXZIP_ELIMIT);
    CHECK(strstr(onnxzip_last_error()->message, "2 GiB") && strstr(onnxzip_last_error()->message, "single"));
    check_untouched(d, 2);
    onnxzip_unpack_options_init(&o);
    o.size_threshold = 0;
    o.location = "w.bin";
    CHECK_RC(onnxzip_unpack(arc, tu_path(d, "model.onnx"), &o), 0);
    struct stat st;
    CHECK(!stat(tu_path(d, "w.bin"), &st) && (uint64_t)st.st_size == size);
    free(model);
    free(zeros);
    free(arc);
    free(d);
}

int main(void)
{
    test_sha1();
    char *root = tu_tmpdir();
    char *arc = strdup(tu_path(root, "fixture.onnxzip"));
    make_archive(arc);
    test_layouts(root, arc);
    test_errors(root, arc);
#ifndef _WIN32 /* symbolic links at the targets */
    test_replace(root, arc);
#else
    printf("note: Windows build: the symbolic-link targets of test_replace not tested\n");
#endif
    for (size_t e = 0; e < NENT; e++) free(payload[e]);
    test_not_the_archive(root);
    test_no_entries(root);
    test_inline_limit(root);
    tu_rmtree(root);
    free(arc);
    free(root);
    return tu_finish("unpack");
}
