/* fuzz_names: onnxzip_entry_name_for() on arbitrary tensor names. Every
 * candidate (indices 0..3) must be a valid tensor entry name of the spec
 * (section 7.1): [A-Za-z_][A-Za-z0-9_]*, 1..255 bytes, no "__" prefix; the
 * candidates must differ from each other; and a name that is already a
 * valid entry name of at most 240 bytes maps to itself (except "_", which
 * maps to "t_" so that its candidate 1 is not the reserved "__2"). */
#include <onnxzip/onnxzip.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ident_start(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int ident_char(unsigned char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

static int valid_entry_name(const char *s, size_t len)
{
    if (len < 1 || len > 255 || strlen(s) != len) return 0;
    if (!ident_start((unsigned char)s[0])) return 0;
    for (size_t i = 1; i < len; i++)
        if (!ident_char((unsigned char)s[i])) return 0;
    return !(len >= 2 && s[0] == '_' && s[1] == '_');
}

static void fail(const char *what, const char *name, unsigned i, const char *got)
{
    fprintf(stderr, "fuzz_names: %s: index %u of \"%s\" -> \"%s\"\n", what, i, name, got ? got : "(none)");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *name = malloc(size + 1);
    if (!name) return 0;
    memcpy(name, data, size);
    name[size] = '\0';

    char got[4][300];
    for (unsigned i = 0; i < 4; i++) {
        memset(got[i], 0x7f, sizeof got[i]);
        int n = onnxzip_entry_name_for(name, i, got[i], sizeof got[i]);
        if (n < 0) fail("failed", name, i, NULL);
        if ((size_t)n >= sizeof got[i] || got[i][n] != '\0') fail("length disagrees with the string", name, i, NULL);
        if (!valid_entry_name(got[i], (size_t)n)) fail("invalid entry name", name, i, got[i]);
        for (unsigned j = 0; j < i; j++)
            if (strcmp(got[i], got[j]) == 0) fail("candidates repeat", name, i, got[i]);

        /* A buffer of exactly the name's length + 1 is enough; one less is ELIMIT. */
        char exact[300];
        if (onnxzip_entry_name_for(name, i, exact, (size_t)n + 1) != n || strcmp(exact, got[i]) != 0)
            fail("exact-size buffer", name, i, got[i]);
        if (onnxzip_entry_name_for(name, i, exact, (size_t)n) != ONNXZIP_ELIMIT)
            fail("short buffer not refused", name, i, got[i]);
    }
    size_t len = strlen(name);
    if (len <= 240 && strcmp(name, "_") != 0 && valid_entry_name(name, len) && strcmp(got[0], name) != 0)
        fail("a valid name is not kept", name, 0, got[0]);
    /* Deterministic. */
    char again[300];
    if (onnxzip_entry_name_for(name, 0, again, sizeof again) < 0 || strcmp(again, got[0]) != 0)
        fail("not deterministic", name, 0, again);
    free(name);
    return 0;
}
