/* SHA-1 from FIPS 180-4: §5.1.1 padding, §5.3.1 initial hash value, §6.1.2
 * hash computation with the §4.1.1 functions and §4.2.1 constants. */
#include <string.h>

#include "common/sha1.h"

static uint32_t rotl(uint32_t x, unsigned n) { return x << n | x >> (32 - n); }

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* f_t and K_t for round t (§4.1.1, §4.2.1). */
static uint32_t round_f(unsigned t, uint32_t b, uint32_t c, uint32_t d, uint32_t *k)
{
    if (t < 20) {
        *k = 0x5a827999u;
        return (b & c) ^ (~b & d); /* Ch */
    }
    if (t < 40) {
        *k = 0x6ed9eba1u;
        return b ^ c ^ d; /* Parity */
    }
    if (t < 60) {
        *k = 0x8f1bbcdcu;
        return (b & c) ^ (b & d) ^ (c & d); /* Maj */
    }
    *k = 0xca62c1d6u;
    return b ^ c ^ d;
}

/* §6.1.2 steps 1-4 for one 512-bit block. */
static void compress(uint32_t h[5], const uint8_t *m)
{
    uint32_t w[80];
    for (unsigned t = 0; t < 16; t++) w[t] = be32(m + 4 * t);
    for (unsigned t = 16; t < 80; t++) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (unsigned t = 0; t < 80; t++) {
        uint32_t k, f = round_f(t, b, c, d, &k);
        uint32_t tmp = rotl(a, 5) + f + e + k + w[t];
        e = d;
        d = c;
        c = rotl(b, 30);
        b = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void oz_sha1_init(oz_sha1 *s)
{
    static const uint32_t h0[5] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u };
    memcpy(s->h, h0, sizeof h0);
    s->nbytes = 0;
    s->fill = 0;
}

void oz_sha1_update(oz_sha1 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->nbytes += n;
    if (s->fill) {
        size_t k = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, k);
        s->fill += k;
        p += k;
        n -= k;
        if (s->fill < 64) return;
        compress(s->h, s->block);
        s->fill = 0;
    }
    for (; n >= 64; p += 64, n -= 64) compress(s->h, p);
    memcpy(s->block, p, n);
    s->fill = n;
}

void oz_sha1_final(oz_sha1 *s, uint8_t digest[20])
{
    /* §5.1.1: a 1 bit, zeros to 448 mod 512, then the length in bits (64-bit big-endian). */
    uint64_t bits = s->nbytes * 8;
    uint8_t pad[72] = { 0x80 };
    size_t npad = (s->fill < 56 ? 56 : 120) - s->fill;
    for (unsigned i = 0; i < 8; i++) pad[npad + i] = (uint8_t)(bits >> (56 - 8 * i));
    oz_sha1_update(s, pad, npad + 8);
    for (unsigned i = 0; i < 20; i++) digest[i] = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

void oz_sha1_hex(const void *data, uint64_t n, char hex[41])
{
    static const char digits[] = "0123456789abcdef";
    oz_sha1 s;
    uint8_t d[20];
    const uint8_t *p = data;
    oz_sha1_init(&s);
    for (; n > (1u << 30); p += 1u << 30, n -= 1u << 30) oz_sha1_update(&s, p, 1u << 30);
    oz_sha1_update(&s, p, (size_t)n);
    oz_sha1_final(&s, d);
    for (unsigned i = 0; i < 20; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[40] = '\0';
}
