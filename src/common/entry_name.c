#include <stdio.h>

#include "common/entry_name.h"
#include "common/internal.h"

#define BASE_MAX 240

/* [A-Za-z0-9_] as a table: names are checked for every entry at every open. */
#define R4(c) [c] = 1, [c + 1] = 1, [c + 2] = 1, [c + 3] = 1
#define R8(c) R4(c), R4(c + 4)
static const unsigned char ident_table[256] = {
    R8('0'), ['8'] = 1, ['9'] = 1, ['_'] = 1,
    R8('A'), R8('A' + 8), R8('A' + 16), ['Y'] = 1, ['Z'] = 1,
    R8('a'), R8('a' + 8), R8('a' + 16), ['y'] = 1, ['z'] = 1,
};

static int ident_char(unsigned char c) { return ident_table[c]; }

oz_name_class oz_classify_name(const char *name, size_t len)
{
    if (len == 0) return OZ_NAME_INVALID;
    for (size_t i = 0; i < len; i++)
        if (!ident_char((unsigned char)name[i])) return OZ_NAME_INVALID;
    if (name[0] >= '0' && name[0] <= '9') return OZ_NAME_INVALID;
    if (len > OZ_MAX_NAME) return OZ_NAME_TOO_LONG;
    if (len < 2 || name[0] != '_' || name[1] != '_') return OZ_NAME_TENSOR;
    if (len == sizeof OZ_MODEL_NAME - 1 && !memcmp(name, OZ_MODEL_NAME, len)) return OZ_NAME_MODEL;
    if (len > 6 && len <= 6 + 10 && !memcmp(name, "__PAD_", 6) && (name[6] != '0' || len == 7)) {
        size_t i = 6;
        while (i < len && name[i] >= '0' && name[i] <= '9') i++;
        if (i == len) return OZ_NAME_FILLER;
    }
    return OZ_NAME_RESERVED;
}

int oz_foreign_model_name(const char *name, size_t len, size_t *dir)
{
    static const char *const spelling[] = { OZ_MODEL_NAME, OZ_MODEL_NAME ".onnx" };
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(spelling[k]);
        if (len < n || memcmp(name + len - n, spelling[k], n)) continue;
        if (len > n && name[len - n - 1] != '/') continue;
        *dir = len - n;
        return k + 1;
    }
    return 0;
}

/* The spec's mapping (§"Entry names"): bytes outside [A-Za-z0-9_] become
 * '_'; "t_" before an empty or digit-led result, "t" before a "__" one; cut
 * to 240 bytes; the index-th collision gets the suffix "_<index+1>". */
int onnxzip_entry_name_for(const char *tensor_name, unsigned index, char *buf, size_t cap)
{
    if (!tensor_name || !buf) return oz_err(ONNXZIP_EINVAL, -1, "entry_name_for: NULL argument");
    char mapped[BASE_MAX + 1], base[BASE_MAX + 1];
    size_t n = 0;
    for (const char *p = tensor_name; *p && n < BASE_MAX; p++)
        mapped[n++] = ident_char((unsigned char)*p) ? *p : '_';
    mapped[n] = '\0';
    const char *prefix = "";
    if (n == 0 || (mapped[0] >= '0' && mapped[0] <= '9'))
        prefix = "t_";
    else if (mapped[0] == '_' && (n == 1 || mapped[1] == '_'))
        prefix = "t"; /* "__x" -> "t__x"; "_" -> "t_", whose "_2" suffix cannot make "__2" */
    snprintf(base, sizeof base, "%s%s", prefix, mapped); /* cuts at 240 bytes */
    int w = index ? snprintf(buf, cap, "%s_%u", base, index + 1) : snprintf(buf, cap, "%s", base);
    if (w < 0 || (size_t)w >= cap)
        return oz_err(ONNXZIP_ELIMIT, -1, "entry name buffer too small (%zu bytes)", cap);
    return w;
}
