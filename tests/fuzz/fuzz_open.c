/* fuzz_open: onnxzip_open_buffer() on arbitrary bytes (an archive or a
 * classic .onnx). On success every tensor view must lie inside the input
 * (its first and last byte are read, so ASan sees any escape), and the
 * entries, the lazily parsed model and verify must not misbehave. */
#include "fuzz_util.h"

#include <onnxzip/onnxzip.h>
#include "onnx.pb-c.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A package's members: each an entry inside the input, found by its path,
 * its bytes in place where the entry's data is. */
static void check_members(const onnxzip_archive *a, const uint8_t *data, size_t size)
{
    size_t n = onnxzip_member_count(a), models = 0;
    for (size_t i = 0; i < n; i++) {
        const onnxzip_member *m = onnxzip_member_at(a, i);
        const onnxzip_entry *e = m ? onnxzip_entry_at(a, m->entry) : NULL;
        if (!e || strcmp(e->name, m->path) || e->size != m->size) fuzz_fail("a member is not its entry");
        if (onnxzip_find_member(a, m->path) != m) fuzz_fail("find_member cannot find a listed member");
        const void *p;
        uint64_t len;
        if (onnxzip_member_bytes(a, m, &p, &len) || p != data + e->data_offset || len != e->size ||
            e->data_offset > size)
            fuzz_fail("a member's bytes are not its entry's data in place");
        models += m->kind == ONNXZIP_MEMBER_MODEL;
    }
    if (n && !models) fuzz_fail("a package opened without a model");
    if (onnxzip_member_at(a, n)) fuzz_fail("member_at(count) is not NULL");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

/* `model`/`model_size`: the model bytes (for an archive a private copy of
 * __MODEL_PROTO, which starts at `model_offset` in the input): INLINE views
 * of an archive point into that copy. */
static void check_tensor(const onnxzip_tensor *t, const uint8_t *data, size_t size, const uint8_t *model,
                         size_t model_size, uint64_t model_offset)
{
    if (!t->name) fuzz_fail("tensor without a name pointer");
    if (!t->key || (*t->name ? t->key != t->name : !*t->key))
        fuzz_fail("a named tensor's key is not its name, or an unnamed one's is empty");
    sink ^= (uint8_t)strlen(t->name);
    for (uint32_t d = 0; d < t->ndims; d++) {
        if (!t->dims) fuzz_fail("tensor with ndims > 0 and no dims");
        if (t->dims[d] < 0) fuzz_fail("negative dim in a view");
    }
    if (t->storage == ONNXZIP_STORAGE_TYPED) {
        if (t->data) fuzz_fail("TYPED tensor with a data pointer");
        return;
    }
    if (!t->data) {
        if (t->nbytes) fuzz_fail("NULL data with nbytes > 0");
        return;
    }
    const uint8_t *p = t->data;
    if (t->storage == ONNXZIP_STORAGE_INLINE && model != data && p >= model && (size_t)(p - model) <= model_size) {
        if (t->nbytes > model_size - (size_t)(p - model)) {
            fprintf(stderr, "fuzz_open: inline tensor '%s' runs past the model copy\n", t->name);
            abort();
        }
        if (t->file_offset != model_offset + (uint64_t)(p - model))
            fuzz_fail("file_offset of an inline tensor disagrees with its place in the model");
    } else if (t->storage != ONNXZIP_STORAGE_FILE) {
        /* Other views of a buffer point into the buffer. */
        if (p < data || (uint64_t)(p - data) > size || t->nbytes > size - (size_t)(p - data)) {
            fprintf(stderr, "fuzz_open: tensor '%s' [%p, +%llu) outside the input [%p, +%zu)\n", t->name,
                    (const void *)p, (unsigned long long)t->nbytes, (const void *)data, size);
            abort();
        }
        if (t->file_offset != (uint64_t)(p - data)) fuzz_fail("file_offset disagrees with the data pointer");
    }
    if (t->nbytes) {
        sink ^= p[0];
        sink ^= p[t->nbytes - 1];
    }
    if (t->storage == ONNXZIP_STORAGE_ENTRY && !t->entry) fuzz_fail("ENTRY tensor without an entry name");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    onnxzip_archive *a = NULL;
    if (onnxzip_open_buffer(data, size, 0, &a) != 0) {
        if (a) fuzz_fail("open failed but set *out");
        return 0;
    }
    if (!a) fuzz_fail("open succeeded without a handle");

    const void *mb = NULL;
    size_t ms = 0;
    if (onnxzip_model_bytes(a, &mb, &ms) != 0) fuzz_fail("model_bytes failed on an open handle");
    if (ms) sink ^= ((const uint8_t *)mb)[ms - 1];
    size_t ne = onnxzip_entry_count(a);
    uint64_t model_offset = 0;
    if (onnxzip_archive_layout(a) == ONNXZIP_LAYOUT_ARCHIVE) {
        const onnxzip_entry *last = ne ? onnxzip_entry_at(a, ne - 1) : NULL;
        const char *mp = onnxzip_model_path(a);
        const onnxzip_member *mm = mp ? onnxzip_find_member(a, mp) : NULL;
        const onnxzip_entry *model = onnxzip_member_count(a) ? (mm ? onnxzip_entry_at(a, mm->entry) : NULL) : last;
        if (onnxzip_member_count(a) && (!last || strcmp(last->name, "__PACKAGE") != 0))
            fuzz_fail("the last entry of a package is not its manifest");
        if (!onnxzip_member_count(a) && (!last || strcmp(last->name, "__MODEL_PROTO") != 0))
            fuzz_fail("the last entry of an archive is not its model");
        if (!model || model->size != ms) fuzz_fail("the model's entry is not the model the handle holds");
        model_offset = model->data_offset;
        check_members(a, data, size);
    } else if (mb != data || ms != size) {
        fuzz_fail("a classic model's bytes are not the input");
    }

    size_t nt = onnxzip_tensor_count(a);
    for (size_t i = 0; i < nt; i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        if (!t) fuzz_fail("tensor_at(i < count) returned NULL");
        check_tensor(t, data, size, mb, ms, model_offset);
        const onnxzip_tensor *f = onnxzip_find_tensor(a, t->key);
        if (!f || strcmp(f->key, t->key)) fuzz_fail("find_tensor cannot find a listed tensor by its key");
        if (!*t->name && f != t) fuzz_fail("an unnamed tensor's key is an earlier tensor's");
    }
    if (onnxzip_tensor_at(a, nt)) fuzz_fail("tensor_at(count) is not NULL");

    for (size_t i = 0; i < ne; i++) {
        const onnxzip_entry *e = onnxzip_entry_at(a, i);
        if (!e || !e->name) fuzz_fail("entry_at(i < count) returned NULL");
        if (e->data_offset > size || e->size > size - e->data_offset) {
            fprintf(stderr, "fuzz_open: entry '%s' [%llu, +%llu) outside the input (%zu bytes)\n", e->name,
                    (unsigned long long)e->data_offset, (unsigned long long)e->size, size);
            abort();
        }
        if (e->size) {
            sink ^= data[e->data_offset];
            sink ^= data[e->data_offset + e->size - 1];
        }
    }

    const Onnx__ModelProto *m = NULL;
    if (onnxzip_model_proto(a, &m) == 0 && m) sink ^= (uint8_t)m->ir_version;

    (void)onnxzip_verify(a);
    (void)onnxzip_archive_layout(a);
    if (!onnxzip_archive_path(a)) fuzz_fail("archive_path is NULL");
    onnxzip_close(&a);
    if (a) fuzz_fail("close did not clear the handle");
    return 0;
}
