/* A local file (mapped) or a caller's buffer as a byte source (source.h). */
#ifndef ONNXZIP_SOURCE_FILE_H
#define ONNXZIP_SOURCE_FILE_H

#include "common/source.h"
#include "common/sys.h"

/* Makes *s the source of the `size` bytes mapped at `map`: the file `fd`
 * (borrowed, >= 0; `st` its stat at open, what check() compares with;
 * `by_path`: `name` is its path, stat'ed again by check()), or a caller's
 * buffer (fd -1, st NULL). `name` is borrowed. 0 or ONNXZIP_ENOMEM. */
int oz_source_mapped(oz_source *s, const uint8_t *map, uint64_t size, int fd, const oz_stat *st, int by_path,
                     const char *name);

#endif
