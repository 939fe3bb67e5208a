/* onnxzip_verify() on both of its paths: one thread over a small archive, and
 * two threads with jobs taken largest first (an entry over an eighth of the
 * total split into a CRC job and a digest job) over one of 9 MiB. Whatever the
 * job order, the error names the first bad entry in archive order. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "testutil.h"

#define NSMALL 32
#define SMALL (64u << 10)
#define BIG (7u << 20)

/* Bytes whose XOR into any data leaves its CRC-32 unchanged: x^k times the
 * generator polynomial, in the bit order of zip's reflected CRC. */
static const uint8_t crc_neutral[5] = { 0x41, 0x06, 0x71, 0xdb, 0x01 };

static uint8_t *build(const char *dir, int big, size_t *len)
{
    const char *path = tu_path(dir, big ? "big.onnxzip" : "small.onnxzip");
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    tu_tensor t[NSMALL + 1];
    char names[NSMALL + 1][8];
    uint8_t *data = malloc(BIG);
    for (size_t i = 0; i < BIG; i++) data[i] = (uint8_t)(i * 2654435761u >> 13);
    int n = 0;
    if (big) {
        CHECK_RC(onnxzip_writer_add_memory(w, "big", data, BIG), 0);
        t[n++] = (tu_tensor){ "big", 2, { BIG }, 1, "big", 0 };
    }
    for (int i = 0; i < NSMALL; i++) {
        snprintf(names[i], sizeof names[i], "s%d", i);
        CHECK_RC(onnxzip_writer_add_memory(w, names[i], data + 4096 * i, SMALL), 0);
        t[n++] = (tu_tensor){ names[i], 2, { SMALL }, 1, names[i], 0 };
    }
    size_t mlen;
    uint8_t *model = tu_model(t, (size_t)n, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
    free(data);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *buf = tu_aligned_alloc(65536, (*len + 65535) & ~(size_t)65535);
    CHECK(fread(buf, 1, *len, f) == *len);
    fclose(f);
    return buf;
}

static const onnxzip_entry *entry(onnxzip_archive *a, const char *name)
{
    for (size_t i = 0; i < onnxzip_entry_count(a); i++)
        if (!strcmp(onnxzip_entry_at(a, i)->name, name)) return onnxzip_entry_at(a, i);
    CHECK(!"entry not found");
    return NULL;
}

/* Verifies a copy of `buf` with `edit` applied: the status, and the entry and
 * offset named. `edit` gets the open archive to find the entries. */
typedef void (*edit_fn)(onnxzip_archive *a, uint8_t *buf);

static void expect(const uint8_t *buf, size_t len, edit_fn edit, int want, const char *named)
{
    uint8_t *copy = tu_aligned_alloc(65536, (len + 65535) & ~(size_t)65535);
    memcpy(copy, buf, len);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open_buffer(copy, len, 0, &a), 0);
    if (!a) return;
    if (edit) edit(a, copy);
    CHECK_RC(onnxzip_verify(a), want);
    if (named) {
        char quoted[32];
        snprintf(quoted, sizeof quoted, "'%s'", named);
        CHECK(strstr(onnxzip_last_error()->message, quoted) != NULL);
        CHECK(onnxzip_last_error()->offset == (int64_t)entry(a, named)->data_offset);
    }
    onnxzip_close(&a);
    tu_aligned_free(copy);
}

static void flip(onnxzip_archive *a, uint8_t *buf, const char *name, uint64_t at)
{
    buf[entry(a, name)->data_offset + at] ^= 0x10;
}

/* Changes the data but not its CRC-32: only the digest can tell. */
static void neutral(onnxzip_archive *a, uint8_t *buf, const char *name, uint64_t at)
{
    const onnxzip_entry *e = entry(a, name);
    uint8_t *d = buf + e->data_offset;
    uLong before = crc32(0, d, (uInt)e->size);
    for (int i = 0; i < 5; i++) d[at + (uint64_t)i] ^= crc_neutral[i];
    CHECK(crc32(0, d, (uInt)e->size) == before); /* the edit really is CRC-neutral */
    CHECK(e->has_xxh3);
}

static void e_s5(onnxzip_archive *a, uint8_t *b) { flip(a, b, "s5", 100); }
static void e_s20_s3(onnxzip_archive *a, uint8_t *b) { flip(a, b, "s20", 1); flip(a, b, "s3", SMALL - 1); }
static void e_big_s0(onnxzip_archive *a, uint8_t *b) { flip(a, b, "s0", 7); flip(a, b, "big", BIG - 1); }
static void e_big_digest(onnxzip_archive *a, uint8_t *b) { neutral(a, b, "big", BIG / 2); }
static void e_s7_digest(onnxzip_archive *a, uint8_t *b) { neutral(a, b, "s7", 3); }
static void e_digest_then_crc(onnxzip_archive *a, uint8_t *b)
{
    neutral(a, b, "s2", 0); /* an earlier entry's digest error wins over a later CRC error */
    flip(a, b, "s9", 9);
}

int main(void)
{
    char *dir = tu_tmpdir();
    for (int big = 0; big <= 1; big++) {
        size_t len;
        uint8_t *buf = build(dir, big, &len);
        CHECK(big ? len > (8u << 20) : len < (8u << 20)); /* the two paths of verify */
        expect(buf, len, NULL, 0, NULL);
        expect(buf, len, e_s5, ONNXZIP_ECRC, "s5");
        expect(buf, len, e_s20_s3, ONNXZIP_ECRC, "s3");
        expect(buf, len, e_s7_digest, ONNXZIP_EDIGEST, "s7");
        expect(buf, len, e_digest_then_crc, ONNXZIP_EDIGEST, "s2");
        if (big) {
            expect(buf, len, e_big_s0, ONNXZIP_ECRC, "big");
            expect(buf, len, e_big_digest, ONNXZIP_EDIGEST, "big");
        }
        tu_aligned_free(buf);
    }
    /* By path, through the mapping, on the large archive. */
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(tu_path(dir, "big.onnxzip"), ONNXZIP_OPEN_VERIFY, &a), 0);
    onnxzip_close(&a);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("verify");
}
