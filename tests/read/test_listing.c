/* onnxzip_listing(): one archive (entries, and inline tensors of 1..9 bytes,
 * so at offsets of many alignments) opened by path and from buffers placed
 * at addresses of different alignments, so that the views' addresses, and
 * onnxzip_tensor.alignment with them, differ, lists the same text and JSON,
 * the archive's name aside. Every tensor's alignment in it is its file
 * offset's, computed here from the offsets the API reports. Bad arguments
 * are refused, with *text NULL. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define N_INLINE 9

/* The largest power of two (<= 65536; 65536 for 0) dividing `off`. */
static uint32_t file_alignment(uint64_t off)
{
    uint32_t a = 1;
    while (a < 65536 && off % (2u * a) == 0) a *= 2;
    return a;
}

static void write_archive(const char *path)
{
    static uint8_t e0[100], e1[5000];
    tu_tensor t[2 + N_INLINE] = { { "e0", 2, { 100 }, 1, "e0", 0 }, { "e1", 2, { 5000 }, 1, "e1", 0 } };
    static char names[N_INLINE][8];
    for (int k = 0; k < N_INLINE; k++) {
        snprintf(names[k], sizeof names[k], "i%d", k + 1);
        t[2 + k] = (tu_tensor){ names[k], 2, { k + 1 }, 1, NULL, (uint64_t)k + 1 };
    }
    size_t len;
    uint8_t *model = tu_model(t, 2 + N_INLINE, &len);
    onnxzip_writer *w = NULL;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "e0", e0, sizeof e0), 0);
    CHECK_RC(onnxzip_writer_add_memory(w, "e1", e1, sizeof e1), 0);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    free(model);
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)n)) && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    if (f) fclose(f);
    *size = p ? (size_t)n : 0;
    return p;
}

static char *listing(const onnxzip_archive *a, unsigned flags)
{
    char *text = NULL;
    CHECK_RC(onnxzip_listing(a, flags, &text), 0);
    CHECK(text && *text && text[strlen(text) - 1] == '\n');
    return text;
}

/* The text after the archive's name: from the first line's ": onnxzip
 * archive" (tables) or from the second line (JSON), "" when absent. */
static const char *after_name(const char *text, int json)
{
    const char *s = text ? (json ? strchr(text, '\n') : strstr(text, ": onnxzip archive, ")) : NULL;
    return s ? s : "";
}

/* Each tensor's JSON line holds its file offset, size and their alignment. */
static void check_alignments(const onnxzip_archive *a, const char *json)
{
    for (size_t i = 0; i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        char want[128];
        snprintf(want, sizeof want, "\"offset\": %" PRIu64 ", \"nbytes\": %" PRIu64 ", \"alignment\": %" PRIu32 ",",
                 t->file_offset, t->nbytes, file_alignment(t->file_offset));
        CHECK(strstr(json, want) != NULL);
        if (!strstr(json, want)) printf("  tensor %s: no %s\n", t->key, want);
    }
}

/* The archive from a buffer whose first byte is `shift` bytes past a
 * 65536-aligned address: tensor views land at addresses of other alignments. */
static void check_buffer(const uint8_t *file, size_t size, size_t shift, const char *text, const char *json,
                         int *address_differs)
{
    uint8_t *mem = tu_aligned_alloc(65536, (size / 65536 + 2) * 65536); /* a multiple of the alignment (C11) */
    onnxzip_archive *b = NULL;
    if (!mem) return;
    memcpy(mem + shift, file, size);
    CHECK_RC(onnxzip_open_buffer(mem + shift, size, 0, &b), 0);
    if (b) {
        char *bt = listing(b, 0), *bj = listing(b, ONNXZIP_LISTING_JSON);
        CHECK(bt && strncmp(bt, "<buffer>: onnxzip archive, ", 27) == 0);
        CHECK(bj && strncmp(bj, "{\"archive\": \"<buffer>\",\n", 24) == 0);
        CHECK(strcmp(after_name(bt, 0), after_name(text, 0)) == 0);
        CHECK(strcmp(after_name(bj, 1), after_name(json, 1)) == 0);
        for (size_t i = 0; i < onnxzip_tensor_count(b); i++) {
            const onnxzip_tensor *t = onnxzip_tensor_at(b, i);
            *address_differs |= t->alignment != file_alignment(t->file_offset);
        }
        onnxzip_free(bt);
        onnxzip_free(bj);
        onnxzip_close(&b);
    }
    tu_aligned_free(mem);
}

static void refusals(const onnxzip_archive *a)
{
    char *text = (char *)"unchanged";
    CHECK_RC(onnxzip_listing(NULL, 0, &text), ONNXZIP_EINVAL);
    CHECK(text == NULL);
    text = (char *)"unchanged";
    CHECK_RC(onnxzip_listing(a, 2, &text), ONNXZIP_EINVAL);
    CHECK(text == NULL);
    CHECK(strstr(onnxzip_last_error()->message, "unknown listing flags 0x2") != NULL);
    CHECK_RC(onnxzip_listing(a, 0, NULL), ONNXZIP_EINVAL);
}

int main(void)
{
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "l.onnxzip");
    onnxzip_archive *a = NULL;
    write_archive(path);
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    size_t size;
    uint8_t *file = read_file(path, &size);
    CHECK(file != NULL);
    if (a && file) {
        char *text = listing(a, 0), *json = listing(a, ONNXZIP_LISTING_JSON);
        CHECK(text && strncmp(text, path, strlen(path)) == 0 && strcmp(after_name(text, 0), "") != 0);
        CHECK(json && strncmp(json, "{\"archive\": \"", 13) == 0 && strcmp(after_name(json, 1), "") != 0);
        CHECK(onnxzip_tensor_count(a) == 2 + N_INLINE);
        if (json) check_alignments(a, json);
        int address_differs = 0;
        for (size_t shift = 0; shift <= 4096; shift = shift ? shift * 2 : 1)
            check_buffer(file, size, shift, text, json, &address_differs);
        CHECK(address_differs); /* the case the listing must not show */
        refusals(a);
        onnxzip_free(text);
        onnxzip_free(json);
    }
    free(file);
    onnxzip_close(&a);
    tu_rmtree(dir);
    free(dir);
    return tu_finish("listing");
}
