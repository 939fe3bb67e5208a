#include <stdlib.h>
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "common/internal.h"
#include "common/strmap.h"

static char fold(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

static uint64_t key_hash(const oz_strmap *m, const char *key, size_t len)
{
    if (!m->fold_case) return XXH3_64bits(key, len);
    char tmp[256]; /* entry names fit: one-shot hash of the folded copy */
    if (len <= sizeof tmp) {
        for (size_t j = 0; j < len; j++) tmp[j] = fold(key[j]);
        return XXH3_64bits(tmp, len);
    }
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    for (size_t i = 0; i < len; i += sizeof tmp) {
        size_t n = len - i < sizeof tmp ? len - i : sizeof tmp;
        for (size_t j = 0; j < n; j++) tmp[j] = fold(key[i + j]);
        XXH3_64bits_update(&st, tmp, n);
    }
    return XXH3_64bits_digest(&st);
}

static int key_equal(const oz_strmap *m, const struct oz_slot *s, const char *key, size_t len)
{
    if (s->len != len) return 0;
    if (!m->fold_case) return memcmp(s->key, key, len) == 0;
    for (size_t i = 0; i < len; i++)
        if (fold(s->key[i]) != fold(key[i])) return 0;
    return 1;
}

void oz_strmap_init(oz_strmap *m, int fold_case)
{
    memset(m, 0, sizeof *m);
    m->fold_case = fold_case;
}

void oz_strmap_free(oz_strmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

static struct oz_slot *find(const oz_strmap *m, const char *key, size_t len, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        struct oz_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && key_equal(m, s, key, len))) return s;
    }
}

static int resize(oz_strmap *m, size_t cap)
{
    struct oz_slot *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return oz_err(ONNXZIP_ENOMEM, -1, "out of memory (name index)");
    }
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key) *find(m, old[i].key, old[i].len, old[i].hash) = old[i];
    free(old);
    return 0;
}

int oz_strmap_reserve(oz_strmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;
    while (n * 4 > cap * 3) cap *= 2;
    return cap == m->cap ? 0 : resize(m, cap);
}

int oz_strmap_put(oz_strmap *m, const char *key, size_t len, uint32_t value, uint32_t *existing)
{
    if (len > UINT32_MAX) return oz_err(ONNXZIP_ELIMIT, -1, "name too long");
    if ((m->count + 1) * 4 > m->cap * 3) {
        int rc = resize(m, m->cap ? m->cap * 2 : 64);
        if (rc) return rc;
    }
    uint64_t h = key_hash(m, key, len);
    struct oz_slot *s = find(m, key, len, h);
    if (s->key) {
        if (existing) *existing = s->value;
        return 1;
    }
    *s = (struct oz_slot){ key, (uint32_t)len, value, h };
    m->count++;
    return 0;
}

int oz_strmap_get(const oz_strmap *m, const char *key, size_t len, uint32_t *value)
{
    if (!m->cap) return -1;
    const struct oz_slot *s = find(m, key, len, key_hash(m, key, len));
    if (!s->key) return -1;
    *value = s->value;
    return 0;
}
