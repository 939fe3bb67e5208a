/* Text from archives made safe to show (escape.h). */
#include <stdio.h>

#include "common/escape.h"
#include "common/internal.h"

size_t oz_text_len(const unsigned char *p)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c < 0xC2 || c > 0xF4) return 0;
    if (c == 0xC2) return p[1] >= 0xA0 && p[1] <= 0xBF ? 2 : 0;
    if (c < 0xE0) return (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return 0;
    if (c < 0xF0) return 3;
    return (p[3] & 0xC0) == 0x80 ? 4 : 0;
}

/* A C1 control character (U+0080..U+009F): valid UTF-8, yet terminals act on it. */
static int is_c1(const unsigned char *p)
{
    return p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
}

/* JSON's short escape of byte c, or NULL when it has none. */
static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return NULL;
    }
}

int oz_buf_json_string(oz_buf *b, const char *s)
{
    if (!s) return oz_buf_append(b, "null", 4);
    const unsigned char *p = (const unsigned char *)s;
    int rc = oz_buf_append(b, "\"", 1);
    while (*p && !rc) {
        const char *esc = short_escape(*p);
        char u[8];
        size_t n;
        if (esc) {
            p++;
        } else if (*p < 0x20 || *p == 0x7f || is_c1(p)) {
            snprintf(u, sizeof u, "\\u%04x", *p < 0x80 ? *p : p[1]);
            p += *p < 0x80 ? 1 : 2;
            esc = u;
        } else if ((n = oz_text_len(p)) == 0) {
            esc = "\\ufffd";
            p++;
        } else {
            rc = oz_buf_append(b, p, n);
            p += n;
            continue;
        }
        rc = oz_buf_append(b, esc, strlen(esc));
    }
    return rc ? rc : oz_buf_append(b, "\"", 1);
}

int oz_buf_text(oz_buf *b, const char *s, size_t *cols)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "-");
    size_t used = 0;
    int rc = 0;
    if (s && !*s) p = (const unsigned char *)"\"\"";
    while (*p && !rc) {
        size_t n = oz_text_len(p);
        if (n == 0 || *p < 0x20 || *p == 0x7f) { /* a C1 character's second byte follows as \xNN too */
            char x[8];
            snprintf(x, sizeof x, "\\x%02x", *p++);
            rc = b ? oz_buf_append(b, x, 4) : 0;
            used += 4;
        } else {
            rc = b ? oz_buf_append(b, p, n) : 0;
            used++;
            p += n;
        }
    }
    if (cols) *cols = used;
    return rc;
}
