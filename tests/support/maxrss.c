/* Runs a command and prints its peak resident set in KiB ("maxrss: N") on
 * stderr. A launcher this small matters: Linux carries the forking process's
 * own high-water mark into the child's ru_maxrss across exec, so measuring
 * from a large parent (Python) would report the parent's size. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: maxrss COMMAND [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
        perror("maxrss");
        return 1;
    }
    fprintf(stderr, "maxrss: %ld\n", ru.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
