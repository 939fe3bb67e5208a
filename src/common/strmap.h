/* An open-addressing hash map from byte strings to indices, optionally
 * case-insensitive (ASCII), for tensor-name and entry-name lookups. */
#ifndef ONNXZIP_STRMAP_H
#define ONNXZIP_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct oz_strmap {
    struct oz_slot {
        const char *key; /* borrowed: must outlive the map */
        uint32_t len, value;
        uint64_t hash;
    } *slots;
    size_t cap, count;
    int fold_case;
} oz_strmap;

void oz_strmap_init(oz_strmap *m, int fold_case);
void oz_strmap_free(oz_strmap *m);

/* Makes room for n keys without rehashing; 0 or ONNXZIP_ENOMEM. */
int oz_strmap_reserve(oz_strmap *m, size_t n);

/* Inserts key -> value unless the key is present. Returns 0 when inserted,
 * 1 when present (*existing gets its value), ONNXZIP_ENOMEM. */
int oz_strmap_put(oz_strmap *m, const char *key, size_t len, uint32_t value,
                  uint32_t *existing);

/* 0 and *value when found, -1 when absent. */
int oz_strmap_get(const oz_strmap *m, const char *key, size_t len, uint32_t *value);

#endif
