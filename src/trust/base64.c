/* Base64 by hand (the issue allows it): OpenSSL's EVP_DecodeBlock neither
 * reports padding nor refuses stray characters the way a verifier must. */
#include "common/internal.h"
#include "trust/base64.h"

static const char oz_b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The 6-bit value of c, or -1. */
static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

static int b64_bad(const char *what, const char *why, size_t at)
{
    return oz_err(ONNXZIP_EBUNDLE, -1, "%s: malformed base64: %s at character %zu", what, why, at);
}

int oz_b64_decode(const char *s, size_t n, const char *what, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    size_t pad = 0;
    while (pad < 2 && n > pad && s[n - 1 - pad] == '=') pad++;
    if (pad && n % 4) return b64_bad(what, "'=' padding on a length that is not a multiple of 4", n - pad);
    size_t body = n - pad;
    if (body % 4 == 1) return b64_bad(what, "a length no encoding has", body);
    uint8_t *p = malloc(body / 4 * 3 + 3);
    if (!p) return oz_err(ONNXZIP_ENOMEM, -1, "out of memory");
    uint32_t acc = 0;
    size_t len = 0;
    for (size_t i = 0; i < body; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) {
            free(p);
            return b64_bad(what, s[i] == '=' ? "'=' before the end" : "a character outside the alphabet", i);
        }
        acc = acc << 6 | (uint32_t)v;
        if (i % 4 == 3) {
            p[len++] = (uint8_t)(acc >> 16);
            p[len++] = (uint8_t)(acc >> 8);
            p[len++] = (uint8_t)acc;
            acc = 0;
        }
    }
    size_t rest = body % 4; /* 2 or 3 characters: 1 or 2 bytes, the low bits unused */
    uint32_t unused = rest == 2 ? (acc & 0xf) : (acc & 0x3);
    if (rest && unused) {
        free(p);
        return b64_bad(what, "leftover bits that are not zero", body - 1);
    }
    if (rest == 2) p[len++] = (uint8_t)(acc >> 4);
    if (rest == 3) {
        p[len++] = (uint8_t)(acc >> 10);
        p[len++] = (uint8_t)(acc >> 2);
    }
    p[len] = 0;
    *out = p;
    *out_len = len;
    return 0;
}

char *oz_b64_encode(const uint8_t *p, size_t n)
{
    char *s = malloc((n + 2) / 3 * 4 + 1), *o = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *o++ = oz_b64_alphabet[v >> 18];
        *o++ = oz_b64_alphabet[(v >> 12) & 63];
        *o++ = i + 1 < n ? oz_b64_alphabet[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? oz_b64_alphabet[v & 63] : '=';
    }
    *o = 0;
    return s;
}
