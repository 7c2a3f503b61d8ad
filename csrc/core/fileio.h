/*
 * fileio.h -- how the core touches files (internal; fileio.c): reading a whole file safely, publishing
 * a written file atomically, the parsers' error messages, and the CRC-32 every octonav file carries.
 */
#ifndef OCTONAV_FILEIO_H
#define OCTONAV_FILEIO_H

#include "octonav_core.h"

#include <stdarg.h>
#include <stdio.h>

/* (public in octonav.h: on_crc32, zlib's CRC-32; on_read_file_max, a whole regular file under a size
 * limit; on_write_file_atomic, a whole file written through on_atomic_*) */

/* on_read_file_max without a size limit. */
on_status on_read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen);

/* Writing a file so that readers see the old contents or the new, never a mix: the data goes to a
 * fresh, uniquely named temporary file beside the target (created with O_EXCL, so two writers never
 * share one), is flushed to disk, then renamed over the target. A target that exists as a character
 * device (/dev/null, /dev/full) is written in place; a directory, FIFO or other special file is
 * refused. Errors carry the OS reason: "PATH: cannot write: No space left on device". */
typedef struct on_atomic_file {
    FILE *f;        /* write here between open and commit */
    char *tmp;      /* the temporary's path (NULL when writing in place) */
    const char *path;
    int en;         /* errno of the first failed on_atomic_write */
    int nosync;     /* set after on_atomic_open: commit publishes the file without syncing it first */
} on_atomic_file;
on_status on_atomic_open(on_atomic_file *a, const char *path, char *err, size_t errlen);
/* fwrite n bytes; 0 on success, -1 on failure (the reason is kept for on_atomic_commit). */
int on_atomic_write(on_atomic_file *a, const void *p, size_t n);
/* Flush, sync, close and publish; on any failure the temporary is removed and the target untouched. */
on_status on_atomic_commit(on_atomic_file *a, char *err, size_t errlen);
/* Give up: close and remove the temporary. */
void on_atomic_abort(on_atomic_file *a);
/* on_write_file_atomic, but with sync = 0 the temporary is renamed over path without an fsync first:
 * readers still never see a mix, but a crash of the machine may leave the file empty or short. For a
 * writer of many files (a bake job: two files a tile) whose result is checked when read (tile and
 * graph files carry their CRC-32), so that one fsync a file (~0.15-0.3 ms, the journal committed each
 * time) does not dominate the job. */
on_status on_write_file_atomic_sync(const char *path, const void *data, size_t len, int sync, char *err,
                                    size_t errlen);

/* Directory trees, for publishing a pack's generation (lua/octonav/bake/publish.lua). Each returns
 * ON_SUCCESS or a failure with "PATH: WHAT: REASON" (the OS's reason) in err.
 * on_link_tree: dst made a copy of src made of hard links: directories are created (existing ones
 * kept), each regular file linked (a name that exists in dst is kept: it is newer); symlinks in src
 * are followed, other special files skipped. A missing src is no error (nothing to copy).
 * on_remove_tree: path removed with everything under it, symlinks removed and never followed; a
 * missing path is no error.
 * on_exchange_dirs: the directory at `next` put in place of the one at `dir` (same filesystem): one
 * atomic exchange (Linux renameat2 RENAME_EXCHANGE), after which `next` holds what was at dir; where
 * the exchange is not supported, dir is renamed to `next`.old then `next` to dir (a crash between the
 * two leaves no dir: never a mix). When dir does not exist, `next` is renamed to it. */
on_status on_link_tree(const char *src, const char *dst, char *err, size_t errlen);
on_status on_remove_tree(const char *path, char *err, size_t errlen);
on_status on_exchange_dirs(const char *next, const char *dir, char *err, size_t errlen);

/* A text parser's message for a bad line into err (may be NULL): "PATH:LINE: " and the formatted
 * reason, truncated to errlen. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 0)))
#endif
void on_parse_error(char *err, size_t errlen, const char *path, size_t line, const char *fmt, va_list ap);

/* "PATH: REASON" from an errno value into err (may be NULL), as "PATH: cannot read: No such file". */
void on_errno_message(char *err, size_t errlen, const char *path, const char *what, int en);

#endif
