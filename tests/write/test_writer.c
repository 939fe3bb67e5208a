/* The writer: alignment at every legal A (with filler entries at 65536),
 * streaming from files (buffered, and copied by the kernel while a second
 * thread hashes), argument validation, atomic output, no temp files. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/sys.h"
#include "testutil.h"

#ifndef O_BINARY
#define O_BINARY 0 /* Windows: no newline translation */
#endif

static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13) | 1; }

/* Gives w the model of tensors t[0..n), finishes it and opens `path` with
 * verification: the archive (NULL after a failed check). */
static onnxzip_archive *finish_open(onnxzip_writer *w, const tu_tensor *t, size_t n, const char *path)
{
    size_t mlen;
    uint8_t *model = tu_model(t, n, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK(w == NULL);
    free(model);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open(path, ONNXZIP_OPEN_VERIFY, &a), 0);
    return a;
}

/* Writes entries of awkward sizes at alignment A, reopens, checks offsets and
 * bytes. `first_size` lets the caller force the 65536 filler case. */
static void roundtrip(const char *dir, uint32_t A, uint64_t first_size, int expect_filler)
{
    const char *path = tu_path(dir, "a.onnxzip");
    static const uint64_t sizes[] = { 1000, 0, 1, 63, 64, 65, 4097 };
    const char *names[] = { "a", "b", "c_1", "D", "e", "f", "g" };
    uint8_t *buf = malloc(1 << 17);
    for (uint64_t i = 0; i < (1 << 17); i++) buf[i] = pattern(i);
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.alignment = A;
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    tu_tensor t[7];
    for (int i = 0; i < 7; i++) {
        uint64_t n = i == 0 && first_size ? first_size : sizes[i];
        CHECK_RC(onnxzip_writer_add_memory(w, names[i], buf, n), 0);
        t[i] = (tu_tensor){ names[i], 2 /* UINT8 */, { (int64_t)n }, 1, names[i], 0 };
    }
    onnxzip_archive *a = finish_open(w, t, 7, path);
    int fillers = 0;
    for (size_t i = 0; a && i < onnxzip_entry_count(a); i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        if (!strncmp(e->name, "__PAD_", 6)) {
            fillers++;
            continue;
        }
        CHECK(e->data_offset % A == 0);
    }
    CHECK(fillers == expect_filler);
    for (int i = 0; a && i < 7; i++) {
        const onnxzip_tensor *v = onnxzip_find_tensor(a, names[i]);
        CHECK(v && v->storage == ONNXZIP_STORAGE_ENTRY && v->alignment >= A);
        CHECK(v && v->nbytes == (uint64_t)t[i].dims[0] && !memcmp(v->data, buf, v->nbytes));
    }
    onnxzip_close(&a);
    free(buf);
}

static void from_file(const char *dir)
{
    const char *src = tu_path(dir, "src.bin"), *path = tu_path(dir, "f.onnxzip");
    int fd = open(src, O_RDWR | O_CREAT | O_TRUNC | O_BINARY, 0644);
    uint8_t head[100];
    for (int i = 0; i < 100; i++) head[i] = (uint8_t)(i + 1);
    CHECK(oz_sys_pwrite(fd, head, 100, 3 << 20) == 100);
    CHECK(oz_sys_truncate(fd, (5 << 20) + 7) == 0); /* zeros around: holes in the output */
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_range(w, "x", fd, 5, (5 << 20) + 2), 0);
    tu_tensor t = { "x", 2, { (5 << 20) + 2 }, 1, "x", 0 };
    size_t mlen;
    uint8_t *model = tu_model(&t, 1, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(path, ONNXZIP_OPEN_VERIFY, &a), 0);
    const onnxzip_tensor *v = onnxzip_find_tensor(a, "x");
    CHECK(v && !memcmp((const uint8_t *)v->data + (3 << 20) - 5, head, 100));
    CHECK(v && ((const uint8_t *)v->data)[0] == 0 && ((const uint8_t *)v->data)[v->nbytes - 1] == 0);
#ifndef _WIN32 /* NTFS files are sparse only when asked (FSCTL_SET_SPARSE) */
    struct stat st;
    /* Two 1 MiB chunks hold the 100 bytes; the other 3 MiB of zeros are holes. */
    CHECK(stat(path, &st) == 0 && (uint64_t)st.st_blocks * 512 < (3u << 20));
#endif
    /* A range past the end of the source is an error, not a short entry. */
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_range(w, "y", fd, 5 << 20, 100), ONNXZIP_ETRUNC);
    CHECK_RC(onnxzip_writer_finish(&w), ONNXZIP_ETRUNC);
    onnxzip_close(&a);
    close(fd);
    free(model);
}

#define MIB (1u << 20)

/* A 12 MiB source in `sdir`: 4 MiB of data, a 4 MiB hole, 4 MiB of data. */
static int dense_source(const char *sdir, uint8_t **copy)
{
    const char *src = tu_path(sdir, "dense.bin");
    int fd = open(src, O_RDWR | O_CREAT | O_TRUNC | O_BINARY, 0644);
    CHECK(fd >= 0);
    uint8_t *b = calloc(12, MIB);
    for (uint64_t i = 0; i < 12 * MIB; i++) b[i] = (i / MIB) % 8 >= 4 ? 0 : pattern(i * 7 + 1);
    CHECK(oz_sys_pwrite(fd, b, 4 * MIB, 0) == 4 * MIB && oz_sys_pwrite(fd, b + 8 * MIB, 4 * MIB, 8 * MIB) == 4 * MIB);
    *copy = b;
    return fd;
}

/* Large ranges go through copy_file_range (or its pread/pwrite fallback when
 * the source is on another file system) while a background thread hashes what
 * was written: the entries must hold the source's bytes, their CRC-32 (checked
 * here with zlib) and digest (verify), whatever the order of large and small
 * entries, and with or without fsync. */
static void kernel_copy(const char *dir, const char *sdir, uint32_t flags)
{
    const char *path = tu_path(dir, "k.onnxzip");
    uint8_t *want;
    int fd = dense_source(sdir, &want);
    onnxzip_writer *w;
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.flags = flags;
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    struct { const char *name; uint64_t off, len; } r[] = {
        { "whole", 0, 12 * MIB },            /* data, hole, data */
        { "small", 3, 1000 },                /* buffered, between two large ones */
        { "odd", MIB + 3, 5 * MIB + 1 },     /* unaligned, into the hole */
        { "tail", 7 * MIB + 11, 5 * MIB - 11 },
    };
    tu_tensor t[4];
    for (int i = 0; i < 4; i++) {
        CHECK_RC(onnxzip_writer_add_file_range(w, r[i].name, fd, r[i].off, r[i].len), 0);
        t[i] = (tu_tensor){ r[i].name, 2, { (int64_t)r[i].len }, 1, r[i].name, 0 };
    }
    size_t mlen;
    uint8_t *model = tu_model(t, 4, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(path, ONNXZIP_OPEN_VERIFY, &a), 0);
    for (int i = 0; a && i < 4; i++) {
        const onnxzip_tensor *v = onnxzip_find_tensor(a, r[i].name);
        const onnxzip_entry *e = onnxzip_entry_at(a, (size_t)i);
        CHECK(v && v->nbytes == r[i].len && !memcmp(v->data, want + r[i].off, r[i].len));
        CHECK(e && !strcmp(e->name, r[i].name) && e->has_xxh3);
        CHECK(e && e->crc32 == (uint32_t)crc32(0, want + r[i].off, (uInt)r[i].len));
    }
    onnxzip_close(&a);
    /* A large range past the source's end fails, and leaves nothing. */
    unlink(path);
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    CHECK_RC(onnxzip_writer_add_file_range(w, "past", fd, 8 * MIB, 5 * MIB), ONNXZIP_ETRUNC);
    CHECK_RC(onnxzip_writer_finish(&w), ONNXZIP_ETRUNC);
    CHECK(access(path, F_OK) != 0 && tu_count_files(dir, ".tmp-") == 0);
    close(fd);
    unlink(tu_path(sdir, "dense.bin"));
    free(want);
    free(model);
}

/* A source on another file system (tmpfs here), where copy_file_range may
 * refuse, exercises the fallback; skipped with a note when there is none. */
static void kernel_copy_other_fs(const char *dir)
{
#ifdef _WIN32
    (void)dir;
    printf("note: Windows build: no /dev/shm; cross-file-system copy not tested\n");
#else
    struct stat a, b;
    char tmpl[] = "/dev/shm/onnxzip-test-XXXXXX";
    if (stat(dir, &a) || stat("/dev/shm", &b) || a.st_dev == b.st_dev || !mkdtemp(tmpl)) {
        printf("note: no /dev/shm on another file system: cross-file-system copy not tested\n");
        return;
    }
    kernel_copy(dir, tmpl, 0);
    tu_rmtree(tmpl);
#endif
}

static void refusals(const char *dir)
{
    const char *path = tu_path(dir, "bad.onnxzip");
    onnxzip_writer *w;
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    uint32_t bad_align[] = { 0, 32, 63, 100, 131072 };
    for (int i = 0; i < 5; i++) {
        o.alignment = bad_align[i];
        CHECK_RC(onnxzip_writer_create(path, &o, &w), ONNXZIP_EINVAL);
        CHECK(w == NULL);
    }
    CHECK_RC(onnxzip_writer_create(NULL, NULL, &w), ONNXZIP_EINVAL);
    /* a missing directory is created (test_output_dirs.c); a file as one is refused */
    FILE *notdir = fopen(tu_path(dir, "notdir"), "wb");
    CHECK(notdir != NULL);
    if (notdir) fclose(notdir);
    CHECK_RC(onnxzip_writer_create(tu_path(dir, "notdir/x.onnxzip"), NULL, &w), ONNXZIP_EIO);
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    const char *bad_names[] = { "", "a.b", "../evil", "/abs", "a\\b", "__MODEL_PROTO", "__PAD_1", "__x", "9a" };
    for (int i = 0; i < 9; i++) CHECK_RC(onnxzip_writer_add_memory(w, bad_names[i], "x", 1), ONNXZIP_ENAME);
    CHECK_RC(onnxzip_writer_add_memory(w, "Weight", "x", 1), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "weight", "x", 1), ONNXZIP_EDUPNAME);
    char longname[300];
    memset(longname, 'n', 299);
    longname[299] = '\0';
    CHECK_RC(onnxzip_writer_add_memory(w, longname, "x", 1), ONNXZIP_ELIMIT);
    CHECK_RC(onnxzip_writer_finish(&w), ONNXZIP_ENOMODEL);
    CHECK(access(path, F_OK) != 0);

    /* References are checked at finish: missing entry, wrong size. */
    tu_tensor missing = { "t", 1, { 1 }, 1, "nope", 0 }, wrong = { "t", 1, { 2 }, 1, "w", 0 };
    const tu_tensor *cases[] = { &missing, &wrong };
    int want[] = { ONNXZIP_EREF, ONNXZIP_ESIZE };
    for (int i = 0; i < 2; i++) {
        size_t mlen;
        uint8_t *model = tu_model(cases[i], 1, &mlen);
        CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
        CHECK_RC(onnxzip_writer_add_memory(w, "w", "abcd", 4), 0);
        CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
        CHECK_RC(onnxzip_writer_finish(&w), want[i]);
        CHECK(access(path, F_OK) != 0);
        free(model);
    }
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    onnxzip_writer_abort(&w);
    CHECK(w == NULL);
    onnxzip_writer_abort(&w);
    onnxzip_writer_abort(NULL);
    CHECK(tu_count_files(dir, ".tmp-") == 0);
}

static void replaces_atomically(const char *dir)
{
    const char *path = tu_path(dir, "r.onnxzip");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_BINARY, 0644);
    CHECK(write(fd, "old", 3) == 3);
    close(fd);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 3); /* untouched until finish */
    size_t mlen;
    uint8_t *model = tu_model(NULL, 0, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    CHECK(onnxzip_entry_count(a) == 1 && onnxzip_tensor_count(a) == 0);
    onnxzip_close(&a);
    free(model);
}

/* Spec 4.3's filler names and offsets at A = 65536: "a" (65496 bytes) ends at
 * 131032, where "bbbbb" would need 65535 padding bytes and __PAD_0 65533: the
 * filler is __PAD_10000 (four digits more: N_f = 65529). "bbbbb" (65500
 * bytes, data at 262144) ends where "c" needs a filler again, whose padding
 * fits with one digit: __PAD_0. Every entry's data, fillers' too, lies at a
 * multiple of 65536 (what `zipalign -c 65536` checks). */
static void filler_names(const char *dir)
{
    const char *path = tu_path(dir, "fillers.onnxzip");
    static const char *const want[] = { "a", "__PAD_10000", "bbbbb", "__PAD_0", "c", "__MODEL_PROTO" };
    static const uint64_t want_off[] = { 65536, 196608, 262144, 393216, 458752 };
    uint8_t *buf = calloc(1, 65500);
    onnxzip_write_options o;
    onnxzip_write_options_init(&o);
    o.alignment = 65536;
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, &o, &w), 0);
    tu_tensor t[3] = { { "a", 2, { 65496 }, 1, "a", 0 }, { "bbbbb", 2, { 65500 }, 1, "bbbbb", 0 },
                       { "c", 2, { 1 }, 1, "c", 0 } };
    for (int i = 0; i < 3; i++) CHECK_RC(onnxzip_writer_add_memory(w, t[i].name, buf, (uint64_t)t[i].dims[0]), 0);
    onnxzip_archive *a = finish_open(w, t, 3, path);
    CHECK(a && onnxzip_entry_count(a) == 6);
    for (size_t i = 0; a && i < onnxzip_entry_count(a) && i < 6; i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        CHECK(!strcmp(e->name, want[i]));
        CHECK(e->data_offset % 65536 == 0);
        if (i < 5) CHECK(e->data_offset == want_off[i]);
    }
    onnxzip_close(&a);
    free(buf);
}

int main(void)
{
    char *dir = tu_tmpdir();
    uint32_t aligns[] = { 64, 128, 4096, 32768, 65536 };
    for (int i = 0; i < 5; i++) roundtrip(dir, aligns[i], 0, 0);
    /* First data at 65536; 65536 + 65500 + header(30 + "b" + 6) is 1 past a
     * boundary: 65535 bytes of padding would be needed, more than an extra
     * field holds, so a filler entry must appear. */
    roundtrip(dir, 65536, 65500, 1);
    filler_names(dir);
    from_file(dir);
    kernel_copy(dir, dir, 0);
    kernel_copy(dir, dir, ONNXZIP_WRITE_NO_SYNC);
    kernel_copy_other_fs(dir);
    refusals(dir);
    replaces_atomically(dir);
    CHECK(tu_count_files(dir, ".tmp-") == 0);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("writer");
}
