/*
 * text.c — names and other text from archives, written safely for terminals
 * (control characters and bytes that are not UTF-8 escaped), in the tool's
 * own messages. (`onnxzip ls` prints the library's text, onnxzip_listing(),
 * which escapes the same way: src/common/escape.c.)
 */
#include "cli.h"

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 when s does
 * not start one (stray continuation, overlong form, surrogate, > U+10FFFF,
 * truncated). Never reads past a NUL: every check fails on it first. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;

    if (c < 0x80)
        return 1;
    if (c < 0xC2 || c > 0xF4)
        return 0;
    if (c < 0xE0)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
        return 0;
    if (c < 0xF0)
        return 3;
    return (s[3] & 0xC0) == 0x80 ? 4 : 0;
}

/* A C1 control character (U+0080..U+009F): valid UTF-8, yet terminals act on it. */
static int is_c1(const unsigned char *s)
{
    return s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F;
}

/* Writes s (when f) with control characters (C0, DEL, C1) and bytes that
 * are not UTF-8 as \xNN; returns the columns used. */
size_t cli_put_escaped(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t cols = 0;

    while (*p) {
        size_t n = utf8_len(p);
        /* A C1 character's lead byte goes out as \xc2, then its second byte,
         * a stray continuation byte on its own, as \xNN. */
        if (n == 0 || *p < 0x20 || *p == 0x7f || is_c1(p)) {
            if (f)
                fprintf(f, "\\x%02x", *p);
            cols += 4;
            p++;
            continue;
        }
        if (f)
            fwrite(p, 1, n, f);
        cols++;
        p += n;
    }
    return cols;
}

size_t cli_put_text(FILE *f, const char *s)
{
    if (!s) {
        if (f)
            fputc('-', f);
        return 1;
    }
    if (!*s) {
        if (f)
            fputs("\"\"", f);
        return 2;
    }
    return cli_put_escaped(f, s);
}
