/*
 * util.c -- helpers of the profile benchmark: clocks, directory walking,
 * free ports and the lifecycle of the servers the benchmark starts.
 */
#include "bench/profiles/util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int util_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c) return c;
    return al < bl ? -1 : al > bl;
}

int64_t util_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t util_dir_bytes(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return -1;
    if (S_ISREG(st.st_mode)) return st.st_size;
    if (!S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(path);
    if (!d) return -1;
    int64_t total = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char sub[4096];
        snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
        int64_t n = util_dir_bytes(sub);
        if (n > 0) total += n;
    }
    closedir(d);
    return total;
}

int util_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return -1;
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char sub[4096];
            snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
            util_rm_rf(sub);
        }
        closedir(d);
        return rmdir(path);
    }
    return unlink(path);
}

int util_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

pid_t util_spawn(char *const argv[], const char *logpath, char *err, size_t cap)
{
    if (access(argv[0], X_OK) != 0) {
        snprintf(err, cap, "%s: %s", argv[0], strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, cap, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(logpath ? logpath : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nfd = open("/dev/null", O_RDONLY);
        if (nfd >= 0) dup2(nfd, 0);
        /* A server must not outlive the benchmark process that started it
         * (killed, or interrupted from the terminal). */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

int util_wait_port(pid_t pid, int port, int timeout_ms, char *err, size_t cap)
{
    int64_t deadline = util_now_ns() + (int64_t)timeout_ms * 1000000;
    while (util_now_ns() < deadline) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            snprintf(err, cap, "server exited (status %d) before listening on port %d",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), port);
            return -1;
        }
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
        if (fd >= 0) close(fd);
        if (ok) return 0;
        usleep(20000);
    }
    snprintf(err, cap, "server not listening on port %d after %d ms", port, timeout_ms);
    return -1;
}

int util_reap(pid_t pid, int timeout_ms)
{
    int64_t deadline = util_now_ns() + (int64_t)timeout_ms * 1000000;
    int status;
    while (util_now_ns() < deadline) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) return 0;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int util_stop(pid_t pid, int timeout_ms)
{
    if (pid <= 0) return 0;
    kill(pid, SIGTERM);
    return util_reap(pid, timeout_ms);
}

int64_t util_vmhwm(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int64_t kb = -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmHWM:", 6)) kb = strtoll(line + 6, NULL, 10);
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

int64_t util_cpu_ns(pid_t pid)
{
    if (pid == 0) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
        return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
               ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    }
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[n] = 0;
    /* after "pid (comm) ": state is field 3, utime 14 and stime 15 */
    char *p = strrchr(line, ')');
    unsigned long long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return (int64_t)((ut + st) * (1000000000.0 / (double)(hz > 0 ? hz : 100)));
}

void util_exe_sibling(const char *name, char *out, size_t cap)
{
    char self[2048];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    out[0] = 0;
    if (n <= 0) return;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return;
    *slash = 0;
    snprintf(out, cap, "%s/%s", self, name);
}

void util_log_tail(const char *path, char *out, size_t cap)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)cap - 1 ? size - (long)cap + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    fclose(f);
    for (size_t i = 0; i < n; i++)
        if (out[i] == '\n') out[i] = ' ';
}
