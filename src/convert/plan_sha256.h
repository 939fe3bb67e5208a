/* SHA-256 of the files a package unpacks to (convert/file_plan.h's plans),
 * through OpenSSL's libcrypto (EVP: SHA-NI where the CPU has it). Built only
 * with signing (-Dsigning: ONNXZIP_HAVE_SIGNING); the signing layer (trust/) checks
 * a statement's digests with it. */
#ifndef ONNXZIP_PLAN_SHA256_H
#define ONNXZIP_PLAN_SHA256_H

#include <stdint.h>

#include "convert/file_plan.h"

/* out[i] = the SHA-256 of the bytes onnxzip_unpack_dir() writes for
 * paths[i] (a plain file, a model file or a data file of the folder; "."
 * for a single-model archive: its file), computed without writing them.
 * Each model that owns one of the paths is planned once. A mapped handle's
 * files are hashed on all cores (one file per thread: SHA-256 is sequential
 * within a file, so one big file takes one core), read from the file in
 * pieces (cheaper than the mapping's page faults); a URL's or a
 * host's ranges are read through the source in parallel batches, each
 * entry checked against its CRC-32 and XXH3, and hashed in order. 0, or
 * ONNXZIP_ENOTFOUND naming a path that is no file of the folder, a read's
 * status (ONNXZIP_ECRC, ONNXZIP_EIO, ...), ONNXZIP_ENOMEM; out is then
 * undefined. */
int oz_plan_sha256(onnxzip_archive *a, const char *const *paths, size_t n, uint8_t (*out)[32]);

/* The same for files of plans already built (their archive: `a`). */
int oz_plan_sha256_files(onnxzip_archive *a, const onnxzip_planned_file *const *files, size_t n, uint8_t (*out)[32]);

/* An entry a handle without a mapping read whole while its files were
 * hashed, and the entry's own SHA-256 (what a pin records: read/pins.h). */
typedef struct oz_entry_digest {
    size_t entry;
    uint8_t sha[32];
} oz_entry_digest;

typedef struct oz_entry_digests {
    oz_entry_digest *v;
    size_t n, cap;
} oz_entry_digests;

/* oz_plan_sha256_files() that also notes, in *seen (appended to; NULL:
 * not), each entry a segment holds whole, as it hashed it through the
 * source: a mapped handle notes none. */
int oz_plan_sha256_seen(onnxzip_archive *a, const onnxzip_planned_file *const *files, size_t n, uint8_t (*out)[32],
                        oz_entry_digests *seen);
void oz_entry_digests_free(oz_entry_digests *seen);

#endif
