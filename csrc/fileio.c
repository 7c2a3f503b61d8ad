/*
 * fileio.c -- reading a whole file into memory, the one way every loader in the core does it
 * (tile and tree files, OBJ meshes, voxel maps): NUL-terminated for the text parsers, errors as a
 * status and, when asked, as a message "PATH: cannot read: REASON"; and the text parsers' message
 * for a bad line, "PATH:LINE: REASON".
 */
#include "tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

on_status on_read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    int en = 0;
    if (!f) {
        en = errno;
        goto io_error;
    }
    size_t cap = 1u << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        goto no_memory;
    }
    for (;;) {
        if (cap - n < 2) { /* room for one more byte and the NUL */
            uint8_t *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                free(buf);
                fclose(f);
                goto no_memory;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        en = errno ? errno : EIO;
        free(buf);
        fclose(f);
        goto io_error;
    }
    fclose(f);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return ON_SUCCESS;
io_error:
    if (err && errlen) {
        char msg[128];
        if (strerror_r(en, msg, sizeof msg) != 0) snprintf(msg, sizeof msg, "error %d", en);
        snprintf(err, errlen, "%s: cannot read: %s", path, msg);
    }
    return ON_FAILURE | ON_IO;
no_memory:
    if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
    return ON_FAILURE | ON_NO_MEMORY;
}

void on_parse_error(char *err, size_t errlen, const char *path, size_t line, const char *fmt, va_list ap)
{
    if (!err || !errlen) return;
    int k = snprintf(err, errlen, "%s:%zu: ", path, line);
    if (k >= 0 && (size_t)k < errlen) vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
}
