/*
 * fileio.c -- every file the core reads or writes goes through here (fileio.h).
 *
 * Reading: a loader wants a whole regular file in memory, NUL-terminated for the text parsers. A
 * hostile path must not hang or exhaust the process, so the path is stat'ed first (a FIFO, device or
 * directory is refused without being opened: opening a FIFO blocks until a writer comes), then opened
 * with O_NONBLOCK (should the path be swapped for a FIFO between the stat and the open, the open still
 * returns at once) and fstat'ed again: the checks that count are those on the descriptor actually
 * read, so there is no window for a swap. Exactly st_size bytes are allocated and read (a file that
 * grows meanwhile is read as it was), after the caller's limit for a well-formed file was checked.
 *
 * Writing: the data goes to a temporary beside the target, created with O_EXCL under a name made of
 * the pid, the clock and a retry counter (mkstemp's guarantee, but with the usual 0666 & ~umask
 * permissions: mkstemp makes 0600 files, and reading the umask would change process state), then
 * fflush + fsync + rename. Two writers never share a temporary, and a reader sees one complete file.
 *
 * Messages: "PATH: cannot read: REASON" with the OS's reason, and the text parsers' "PATH:LINE: REASON".
 */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* syscall (SYS_renameat2: the atomic exchange of two directories); strerror_r stays POSIX */
#endif
#include "fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

void on_errno_message(char *err, size_t errlen, const char *path, const char *what, int en)
{
    if (!err || !errlen) return;
    char msg[128];
    if (strerror_r(en, msg, sizeof msg) != 0) snprintf(msg, sizeof msg, "error %d", en);
    snprintf(err, errlen, "%s: %s: %s", path, what, msg);
}

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "a special file";
}

static on_status not_regular(char *err, size_t errlen, const char *path, const char *what, mode_t m)
{
    if (err && errlen) snprintf(err, errlen, "%s: %s: not a regular file (%s)", path, what, kind_of(m));
    return ON_FAILURE | ON_IO;
}

static on_status io_fail(char *err, size_t errlen, const char *path, const char *what, int en)
{
    on_errno_message(err, errlen, path, what, en);
    return ON_FAILURE | (en == ENOMEM ? ON_NO_MEMORY : ON_IO);
}

on_status on_read_file_max(const char *path, size_t max, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    if (!path) return ON_FAILURE | ON_INVALID;
    struct stat st;
    if (stat(path, &st) != 0) return io_fail(err, errlen, path, "cannot read", errno);
    if (!S_ISREG(st.st_mode)) return not_regular(err, errlen, path, "cannot read", st.st_mode);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return io_fail(err, errlen, path, "cannot read", errno);
    on_status s = ON_SUCCESS;
    uint8_t *buf = NULL;
    size_t n = 0;
    if (fstat(fd, &st) != 0) {
        s = io_fail(err, errlen, path, "cannot read", errno);
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        s = not_regular(err, errlen, path, "cannot read", st.st_mode);
        goto done;
    }
    uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    if (max && size > max) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %llu bytes, more than a well-formed file can hold (%zu)", path,
                     (unsigned long long)size, max);
        s = ON_FAILURE | ON_CORRUPT;
        goto done;
    }
    buf = size < SIZE_MAX ? malloc((size_t)size + 1) : NULL;
    if (!buf) {
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        s = ON_FAILURE | ON_NO_MEMORY;
        goto done;
    }
    while (n < size) {
        ssize_t got = read(fd, buf + n, (size_t)size - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            s = io_fail(err, errlen, path, "cannot read", errno);
            goto done;
        }
        if (got == 0) break; /* the file shrank meanwhile: what is there */
        n += (size_t)got;
    }
    buf[n] = 0;
done:
    close(fd);
    if (!on_ok(s)) {
        free(buf);
        return s;
    }
    *out = buf;
    *len = n;
    return ON_SUCCESS;
}

on_status on_read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    return on_read_file_max(path, 0, out, len, err, errlen);
}

/* ---- atomic writes ---------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

on_status on_atomic_open(on_atomic_file *a, const char *path, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    if (err && errlen) err[0] = '\0';
    if (!path) return ON_FAILURE | ON_INVALID;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* /dev/null, /dev/stdout, /dev/full: no rename over a device, the bytes go there directly */
        if (!S_ISCHR(st.st_mode)) return not_regular(err, errlen, path, "cannot write", st.st_mode);
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) return io_fail(err, errlen, path, "cannot write", errno);
        a->f = fdopen(fd, "wb");
        if (!a->f) {
            int en = errno;
            close(fd);
            return io_fail(err, errlen, path, "cannot write", en);
        }
        return ON_SUCCESS;
    }
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 48);
    if (!tmp) return io_fail(err, errlen, path, "cannot write", ENOMEM);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long pid = (long)getpid();
    uint64_t h = mix64((uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&st ^
                       (uint64_t)pid << 40);
    int fd = -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(tmp, pl + 48, "%s.tmp.%ld.%08x", path, pid, (unsigned)(h & 0xffffffffu));
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd >= 0 || errno != EEXIST) break;
        h = mix64(h);
    }
    if (fd < 0) {
        int en = errno;
        free(tmp);
        return io_fail(err, errlen, path, "cannot write", en);
    }
    a->f = fdopen(fd, "wb");
    if (!a->f) {
        int en = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return io_fail(err, errlen, path, "cannot write", en);
    }
    a->tmp = tmp;
    return ON_SUCCESS;
}

int on_atomic_write(on_atomic_file *a, const void *p, size_t n)
{
    if (a->en) return -1;
    errno = 0;
    if (fwrite(p, 1, n, a->f) == n) return 0;
    a->en = errno ? errno : EIO;
    return -1;
}

on_status on_atomic_commit(on_atomic_file *a, char *err, size_t errlen)
{
    int en = a->en;
    if (!en && ferror(a->f)) en = EIO;
    if (!en && fflush(a->f) != 0) en = errno;
    /* on disk before the rename publishes it (unless the writer chose to sync once for many files) */
    if (!en && a->tmp && !a->nosync && fsync(fileno(a->f)) != 0) en = errno;
    if (fclose(a->f) != 0 && !en) en = errno;
    a->f = NULL;
    if (!en && a->tmp && rename(a->tmp, a->path) != 0) en = errno;
    if (a->tmp) {
        if (en) unlink(a->tmp);
        free(a->tmp);
        a->tmp = NULL;
    }
    if (en) return io_fail(err, errlen, a->path, "cannot write", en);
    return ON_SUCCESS;
}

void on_atomic_abort(on_atomic_file *a)
{
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp) {
        unlink(a->tmp);
        free(a->tmp);
        a->tmp = NULL;
    }
}

on_status on_write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    return on_write_file_atomic_sync(path, data, len, 1, err, errlen);
}

on_status on_write_file_atomic_sync(const char *path, const void *data, size_t len, int sync, char *err, size_t errlen)
{
    on_atomic_file f;
    on_status s = on_atomic_open(&f, path, err, errlen);
    if (!on_ok(s)) return s;
    f.nosync = !sync;
    on_atomic_write(&f, data, len);
    return on_atomic_commit(&f, err, errlen);
}

/* ---- directory trees ------------------------------------------------------------------------- */

/* a + "/" + b, malloc'd (NULL when out of memory) */
static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p) return NULL;
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb + 1);
    return p;
}

static int dots(const char *n) { return n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0)); }

on_status on_link_tree(const char *src, const char *dst, char *err, size_t errlen)
{
    struct stat st;
    if (stat(src, &st) != 0) {
        if (errno == ENOENT) return ON_SUCCESS;
        return io_fail(err, errlen, src, "cannot read", errno);
    }
    if (S_ISREG(st.st_mode)) {
        if (linkat(AT_FDCWD, src, AT_FDCWD, dst, AT_SYMLINK_FOLLOW) != 0 && errno != EEXIST)
            return io_fail(err, errlen, dst, "cannot link", errno);
        return ON_SUCCESS;
    }
    if (!S_ISDIR(st.st_mode)) return ON_SUCCESS;
    if (mkdir(dst, 0777) != 0 && errno != EEXIST) return io_fail(err, errlen, dst, "cannot create directory", errno);
    DIR *d = opendir(src);
    if (!d) return io_fail(err, errlen, src, "cannot read", errno);
    on_status s = ON_SUCCESS;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno) s = io_fail(err, errlen, src, "cannot read", errno);
            break;
        }
        if (dots(e->d_name)) continue;
        char *a = join(src, e->d_name), *b = join(dst, e->d_name);
        s = a && b ? on_link_tree(a, b, err, errlen) : io_fail(err, errlen, dst, "cannot link", ENOMEM);
        free(a);
        free(b);
        if (!on_ok(s)) break;
    }
    closedir(d);
    return s;
}

on_status on_remove_tree(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return ON_SUCCESS;
        return io_fail(err, errlen, path, "cannot remove", errno);
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) return io_fail(err, errlen, path, "cannot remove", errno);
        on_status s = ON_SUCCESS;
        for (;;) {
            errno = 0;
            struct dirent *e = readdir(d);
            if (!e) {
                if (errno) s = io_fail(err, errlen, path, "cannot remove", errno);
                break;
            }
            if (dots(e->d_name)) continue;
            char *a = join(path, e->d_name);
            s = a ? on_remove_tree(a, err, errlen) : io_fail(err, errlen, path, "cannot remove", ENOMEM);
            free(a);
            if (!on_ok(s)) break;
        }
        closedir(d);
        if (!on_ok(s)) return s;
        if (rmdir(path) != 0 && errno != ENOENT) return io_fail(err, errlen, path, "cannot remove", errno);
        return ON_SUCCESS;
    }
    if (unlink(path) != 0 && errno != ENOENT) return io_fail(err, errlen, path, "cannot remove", errno);
    return ON_SUCCESS;
}

on_status on_exchange_dirs(const char *next, const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT) return io_fail(err, errlen, dir, "cannot publish", errno);
        if (rename(next, dir) != 0) return io_fail(err, errlen, dir, "cannot publish", errno);
        return ON_SUCCESS;
    }
    if (!S_ISDIR(st.st_mode)) return io_fail(err, errlen, dir, "cannot publish", ENOTDIR);
    int en = ENOSYS;
#if defined(__linux__) && defined(SYS_renameat2)
    if (syscall(SYS_renameat2, AT_FDCWD, next, AT_FDCWD, dir, 2 /* RENAME_EXCHANGE */) == 0) return ON_SUCCESS;
    en = errno;
#endif
    if (en != ENOSYS && en != EINVAL && en != ENOTSUP) return io_fail(err, errlen, dir, "cannot publish", en);
    size_t nl = strlen(next);
    char *old = malloc(nl + 5);
    if (!old) return io_fail(err, errlen, dir, "cannot publish", ENOMEM);
    snprintf(old, nl + 5, "%s.old", next);
    on_status s = ON_SUCCESS;
    if (rename(dir, old) != 0) s = io_fail(err, errlen, dir, "cannot publish", errno);
    else if (rename(next, dir) != 0) {
        s = io_fail(err, errlen, dir, "cannot publish", errno);
        rename(old, dir);
    } else if (rename(old, next) != 0) /* the old pack where the caller removes it, or removed here */
        on_remove_tree(old, NULL, 0); /* published either way: what is left of the old one does no harm */
    free(old);
    return s;
}

/* ---- parser messages ------------------------------------------------------------------------- */

void on_parse_error(char *err, size_t errlen, const char *path, size_t line, const char *fmt, va_list ap)
{
    if (!err || !errlen) return;
    int k = snprintf(err, errlen, "%s:%zu: ", path, line);
    if (k >= 0 && (size_t)k < errlen) vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
}
