/* Large archives, built sparse so they cost little disk:
 *   zip64      an archive over 4 GiB (one 4.5 GiB entry, zip64 records) opens,
 *              verifies, and libzip (path in argv[2]) agrees;
 *   residency  opening a 1 GiB archive reads no weight page: after evicting the
 *              file from the page cache, open + a view of every tensor leaves
 *              only header, directory and model pages resident (mincore). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* Builds an archive of `n` entries of `each` bytes streamed from an all-zero
 * sparse source; the writer leaves zero chunks as holes, so the archive is
 * sparse too. */
static void build(const char *dir, const char *path, int n, uint64_t each)
{
    const char *src = tu_path(dir, "src.bin");
    int fd = open(src, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)each) == 0);
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    tu_tensor *t = calloc((size_t)n, sizeof *t);
    char(*names)[16] = calloc((size_t)n, sizeof *names);
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "w%d", i);
        CHECK_RC(onnxzip_writer_add_file_range(w, names[i], fd, 0, each), 0);
        t[i] = (tu_tensor){ names[i], 2, { (int64_t)each }, 1, names[i], 0 };
    }
    size_t mlen;
    uint8_t *model = tu_model(t, (size_t)n, &mlen);
    CHECK_RC(onnxzip_writer_set_model(w, model, mlen), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    close(fd);
    unlink(src);
    free(model);
    free(t);
    free(names);
}

static int zip64_case(const char *dir, const char *libzip_oracle)
{
    const char *path = tu_path(dir, "big.onnxzip");
    uint64_t each = (9ull << 29); /* 4.5 GiB */
    build(dir, path, 1, each);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (uint64_t)st.st_size > each);
    printf("archive: %lld bytes, %lld bytes on disk\n", (long long)st.st_size, (long long)st.st_blocks * 512);
    onnxzip_archive *a;
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    const onnxzip_tensor *v = onnxzip_find_tensor(a, "w0");
    CHECK(v && v->nbytes == each && v->storage == ONNXZIP_STORAGE_ENTRY);
    const onnxzip_entry *m = onnxzip_entry_at(a, 1);
    CHECK(m && m->header_offset > 0xFFFFFFFFull); /* the model sits past 4 GiB */
    CHECK_RC(onnxzip_verify(a), 0);
    onnxzip_close(&a);
    if (libzip_oracle) {
        pid_t pid = fork();
        if (pid == 0) {
            execl(libzip_oracle, libzip_oracle, path, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return tu_finish("zip64_4gib");
}

static size_t resident_pages(const void *base, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page, r = 0;
    unsigned char *vec = malloc(n);
    if (mincore((void *)base, len, vec) != 0) {
        perror("mincore");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) r += vec[i] & 1;
    free(vec);
    return r;
}

static int residency_case(const char *dir)
{
    const char *path = tu_path(dir, "gib.onnxzip");
    const int n = 16;
    const uint64_t each = 64ull << 20; /* 16 x 64 MiB = 1 GiB */
    build(dir, path, n, each);
    int fd = open(path, O_RDONLY);
    struct stat st;
    CHECK(fd >= 0 && fstat(fd, &st) == 0);
    size_t size = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE);
    /* Our own second mapping of the file lets mincore see the page cache. */
    const uint8_t *probe = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(probe != MAP_FAILED);
    /* DONTNEED drops clean pages only: the file was just written, and pages
     * still dirty or under writeback would stay and count against open
     * (seen: 64 pages resident "before open" under load). */
    CHECK(fsync(fd) == 0);
    CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
    size_t before = resident_pages(probe, size);

    onnxzip_archive *a;
    CHECK_RC(onnxzip_open_fd(fd, 0, &a), 0);
    uint64_t seen = 0;
    for (size_t i = 0; i < onnxzip_tensor_count(a); i++) seen += onnxzip_tensor_at(a, i)->nbytes;
    CHECK(seen == n * each);
    size_t after_open = resident_pages(probe, size);
    /* Allowed: per entry, the page holding its local header (which may also
     * hold the first data bytes), plus the directory and model at the end. */
    size_t tail_pages = (size - (size_t)onnxzip_entry_at(a, (size_t)n)->header_offset) / page + 2;
    size_t allowed = (size_t)n + 1 + tail_pages;
    printf("1 GiB archive: %zu pages (%zu KiB) resident after open, of %zu; allowed %zu; before open %zu\n",
           after_open, after_open * page / 1024, size / page, allowed, before);
    CHECK(after_open <= allowed);

    /* The measurement can see touches: reading every weight makes them resident. */
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        for (uint64_t off = 0; off < t->nbytes; off += page) sink ^= ((const uint8_t *)t->data)[off];
    }
    (void)sink;
    size_t after_touch = resident_pages(probe, size);
    printf("after touching every weight page: %zu pages resident\n", after_touch);
    CHECK(after_touch >= size / page * 9 / 10);
    onnxzip_close(&a);

    /* ONNXZIP_OPEN_POPULATE reads the whole file during open. */
    CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
    CHECK_RC(onnxzip_open_fd(fd, ONNXZIP_OPEN_POPULATE, &a), 0);
    size_t populated = resident_pages(probe, size);
    printf("after an open with ONNXZIP_OPEN_POPULATE: %zu pages resident\n", populated);
    CHECK(populated >= size / page * 9 / 10);
    onnxzip_close(&a);
    munmap((void *)probe, size);
    close(fd);
    return tu_finish("open_touches_no_weights");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_large zip64 [LIBZIP_ORACLE] | residency\n");
        return 2;
    }
    char *dir = tu_tmpdir();
    int rc = !strcmp(argv[1], "zip64") ? zip64_case(dir, argc > 2 ? argv[2] : NULL) : residency_case(dir);
    tu_rmtree(dir);
    free(dir);
    return rc;
}
