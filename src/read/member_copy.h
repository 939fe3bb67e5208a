/* A package member's bytes into a file, streamed: never the whole member in
 * memory, so that a file of any size (a 5 GB safetensors shard) is
 * extracted or unpacked like a small one. */
#ifndef ONNXZIP_MEMBER_COPY_H
#define ONNXZIP_MEMBER_COPY_H

#include "onnxzip/onnxzip.h"

/* Writes member `m` of `a` whole into `fd`, an empty file open for writing,
 * from offset 0. A mapped archive's bytes are copied by the kernel from the
 * archive's file (its holes stay holes); a URL's or a host's are read in
 * batches of at most 32 MiB (runs of zeros left unwritten, as holes), a
 * remote archive's checked against the entry's CRC-32 and XXH3 as they
 * arrive (a mismatch: ONNXZIP_ECRC / ONNXZIP_EDIGEST, and the caller
 * discards the file). `out` names the
 * output in messages. 0, or the status of the failed read or write. */
int oz_member_copy(onnxzip_archive *a, const onnxzip_member *m, int fd, const char *out);

#endif
