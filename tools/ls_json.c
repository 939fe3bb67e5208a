/*
 * ls_json.c — `onnxzip ls --json`'s entries and tensors (ls_json.h).
 */
#include "cli.h"
#include "ls_json.h"

#include <inttypes.h>

uint32_t ls_alignment_of(uint64_t off)
{
    uint64_t a = off & (~off + 1);

    return (off == 0 || a > 65536) ? 65536 : (uint32_t)a;
}

const char *ls_storage_name(onnxzip_storage s)
{
    switch (s) {
    case ONNXZIP_STORAGE_ENTRY:  return "entry";
    case ONNXZIP_STORAGE_INLINE: return "inline";
    case ONNXZIP_STORAGE_TYPED:  return "typed";
    case ONNXZIP_STORAGE_FILE:   return "file";
    }
    return "unknown";
}

static const char *kind_name(onnxzip_tensor_kind k)
{
    switch (k) {
    case ONNXZIP_KIND_INITIALIZER:    return "initializer";
    case ONNXZIP_KIND_ATTRIBUTE:      return "attribute";
    case ONNXZIP_KIND_SPARSE_VALUES:  return "sparse_values";
    case ONNXZIP_KIND_SPARSE_INDICES: return "sparse_indices";
    }
    return "unknown";
}

static void json_entry(FILE *f, const onnxzip_entry *e)
{
    fputs("{\"name\": ", f);
    cli_json_string(f, e->name);
    fprintf(f, ", \"header_offset\": %" PRIu64 ", \"data_offset\": %" PRIu64
               ", \"size\": %" PRIu64 ", \"crc32\": %" PRIu32 ", \"xxh3\": ",
               e->header_offset, e->data_offset, e->size, e->crc32);
    if (e->has_xxh3)
        fprintf(f, "\"%016" PRIx64 "\"", e->xxh3);
    else
        fputs("null", f);
    fprintf(f, ", \"alignment\": %" PRIu32 "}", ls_alignment_of(e->data_offset));
}

static void json_tensor(FILE *f, const onnxzip_tensor *t)
{
    fputs("{\"name\": ", f);
    cli_json_string(f, t->name);
    fputs(", \"key\": ", f);
    cli_json_string(f, t->key);
    fprintf(f, ", \"data_type\": %" PRId32 ", \"dtype\": ", t->data_type);
    cli_json_string(f, onnxzip_dtype_name(t->data_type));
    fputs(", \"dims\": [", f);
    for (uint32_t d = 0; d < t->ndims; d++)
        fprintf(f, "%s%" PRId64, d ? ", " : "", t->dims[d]);
    fprintf(f, "], \"storage\": \"%s\", \"kind\": \"%s\", \"entry\": ", ls_storage_name(t->storage),
               kind_name(t->kind));
    cli_json_string(f, t->storage == ONNXZIP_STORAGE_ENTRY ? t->entry : NULL);
    fprintf(f, ", \"offset\": %" PRIu64 ", \"nbytes\": %" PRIu64 ", \"alignment\": %" PRIu32
               ", \"graph_depth\": %" PRIu32 "}",
               t->file_offset, t->nbytes, t->alignment, t->graph_depth);
}

void ls_json_lists(FILE *f, const onnxzip_archive *a)
{
    size_t ne = onnxzip_entry_count(a), nt = onnxzip_tensor_count(a);

    fputs("\"entries\": [", f);
    for (size_t i = 0; i < ne; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        json_entry(f, onnxzip_entry_at(a, i));
    }
    fputs(ne ? "\n ],\n \"tensors\": [" : "],\n \"tensors\": [", f);
    for (size_t i = 0; i < nt; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        json_tensor(f, onnxzip_tensor_at(a, i));
    }
    fputs(nt ? "\n ]" : "]", f);
}
