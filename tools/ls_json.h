/*
 * ls_json.h — what `onnxzip ls` says of an archive's entries and tensors,
 * and its JSON form, shared by the CLI (cmd_ls.c) and the WebAssembly
 * binding (src/js/wasm/onnxzip_wasm.c), so that both print the same fields.
 */
#ifndef ONNXZIP_LS_JSON_H
#define ONNXZIP_LS_JSON_H

#include <stdint.h>
#include <stdio.h>

#include <onnxzip/onnxzip.h>

/* Largest power of two dividing `off`, capped like onnxzip_tensor.alignment. */
uint32_t ls_alignment_of(uint64_t off);

/* "entry", "inline", "typed", "file". */
const char *ls_storage_name(onnxzip_storage s);

/* The JSON members "entries": [...] and "tensors": [...] (without the
 * enclosing braces), one entry or tensor a line. */
void ls_json_lists(FILE *f, const onnxzip_archive *a);

#endif
