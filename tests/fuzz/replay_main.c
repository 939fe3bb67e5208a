/* replay_main.c — a main() for the fuzz targets when no fuzzing engine is
 * used (meson -Dfuzzing_engine=none): every file named on the command line,
 * and every regular file inside every directory named there (recursively),
 * is read into memory and passed to LLVMFuzzerTestOneInput once. Paths that
 * do not exist are skipped with a message (optional corpora). Prints
 * "replay: N inputs" and exits 0; a bug aborts inside the target. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long replayed;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return -1;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0) break;
        len += n;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy, so that ASan catches reads past the input's end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    if (len) memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    replayed++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) {
            printf("replay: %s: absent, skipped\n", path);
            return 0;
        }
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return S_ISREG(st.st_mode) ? replay_file(path) : 0;

    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue; /* ".", "..", hidden files */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) {
                rc = -1;
                break;
            }
            names = nn;
        }
        size_t l = strlen(path) + 1 + strlen(de->d_name) + 1;
        names[n] = malloc(l);
        if (!names[n]) {
            rc = -1;
            break;
        }
        snprintf(names[n], l, "%s/%s", path, de->d_name);
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_names); /* deterministic order */
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && replay_path(names[i]) != 0) rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i]) != 0) rc = 1;
    printf("replay: %lu inputs\n", replayed);
    return rc;
}
