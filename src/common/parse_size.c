/* onnxzip_parse_size(): byte sizes as people write them ("5GB", "2GiB",
 * "500MB"), as Hugging Face's tools read max_shard_size. */
#include <stdio.h>
#include <string.h>

#include "common/internal.h"

static int bad_size(const char *text)
{
    char shown[OZ_PRINTABLE_CAP];
    return oz_err(ONNXZIP_EINVAL, -1, "'%s' is not a byte size (digits, optionally a fraction, then optionally "
                  "B, KB, MB, GB, TB or KiB, MiB, GiB, TiB; e.g. 5GB, 500MB, 2GiB)",
                  oz_printable(text, strlen(text), shown, sizeof shown));
}

int onnxzip_parse_size(const char *text, uint64_t *out)
{
    static const struct { const char *unit; uint64_t mul; } units[] = {
        { "", 1 }, { "b", 1 }, { "kb", 1000 }, { "mb", 1000000 }, { "gb", 1000000000 },
        { "tb", 1000000000000ull }, { "kib", 1ull << 10 }, { "mib", 1ull << 20 }, { "gib", 1ull << 30 },
        { "tib", 1ull << 40 },
    };
    if (!text || !out) return oz_err(ONNXZIP_EINVAL, -1, "onnxzip_parse_size: NULL argument");
    const char *p = text;
    uint64_t whole = 0;
    double frac = 0, scale = 1;
    if (*p < '0' || *p > '9') return bad_size(text);
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (UINT64_MAX - 9) / 10) return bad_size(text);
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.' && p[1] >= '0' && p[1] <= '9')
        for (p++; *p >= '0' && *p <= '9'; p++) frac += (*p - '0') * (scale /= 10);
    while (*p == ' ') p++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen(units[i].unit), k = 0;
        while (k < n && p[k] && (p[k] | 0x20) == units[i].unit[k]) k++;
        if (k != n || p[k]) continue;
        uint64_t mul = units[i].mul, part = (uint64_t)(frac * (double)mul); /* HF: int(value * multiplier) */
        if (whole > (UINT64_MAX - part) / mul) return bad_size(text);
        *out = whole * mul + part;
        return 0;
    }
    return bad_size(text);
}
