/*
 * grid_map2d.c -- Moving AI 2D maps (.map: "type octile", height, width, "map", then the rows) read
 * into a one-cell-deep grid: '.', 'G' and 'S' are free, anything else blocked. Every row is checked
 * before the grid is allocated, so a short or ragged file costs nothing; errors say "PATH:LINE: reason".
 */
#include "grid.h"
#include "fileio.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void map_error(char *err, size_t errlen, const char *path, long line, const char *fmt, ...)
{
    if (!err || !errlen) return;
    int k = snprintf(err, errlen, "%s:%ld: ", path, line);
    if (k < 0 || (size_t)k >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    va_end(ap);
}

/* Strip the line ending; returns the remaining length. */
static size_t chomp(char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
    return n;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

/* "key value" with a positive int value; 1 on success. */
static int header_int(const char *s, long *v)
{
    while (*s == ' ' || *s == '\t') s++;
    if (*s < '0' || *s > '9') return 0;
    errno = 0;
    char *end;
    long x = strtol(s, &end, 10);
    if (errno || x < 1 || x > 0x7fffffffL) return 0;
    while (*end == ' ' || *end == '\t') end++;
    if (*end) return 0;
    *v = x;
    return 1;
}

/* The next line of [*pos, end): NUL-terminated in place (getline's view of it, without the line end:
 * trailing CR and LF stripped), its length in *n. NULL at the end of the text. */
static char *next_line(char *buf, size_t len, size_t *pos, size_t *n)
{
    if (*pos >= len) return NULL;
    char *s = buf + *pos;
    char *nl = memchr(s, '\n', len - *pos);
    size_t k = nl ? (size_t)(nl - s) + 1 : len - *pos;
    *pos += k;
    if (nl) *nl = '\0';
    else s[k] = '\0'; /* the last line: buf[len] is the text's NUL */
    *n = chomp(s, nl ? k - 1 : k);
    return s;
}

/* The same without changing the text (the rows are read twice): the line's start, its length
 * without the line end in *n. */
static const char *next_row(const char *buf, size_t len, size_t *pos, size_t *n)
{
    if (*pos >= len) return NULL;
    const char *s = buf + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t k = nl ? (size_t)(nl - s) : len - *pos;
    *pos += nl ? k + 1 : k;
    while (k > 0 && (s[k - 1] == '\n' || s[k - 1] == '\r')) k--;
    *n = k;
    return s;
}

on_status on_grid_parse_map2d(const char *path, char *buf, size_t len, on_grid **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out || !buf || !path) {
        if (err && errlen) snprintf(err, errlen, "invalid argument");
        return ON_FAILURE | ON_INVALID;
    }
    *out = NULL;
    size_t pos = 0, n;
    char *line;
    long lineno = 0, width = 0, height = 0;
    int typed = 0;

    /* header: type, height, width (any order), then "map" */
    for (;;) {
        line = next_line(buf, len, &pos, &n);
        if (!line) {
            map_error(err, errlen, path, lineno + 1, "unexpected end of file before \"map\"");
            return ON_FAILURE | ON_CORRUPT;
        }
        lineno++;
        if (blank(line, n)) continue;
        if (strcmp(line, "map") == 0) break;
        if (strncmp(line, "type", 4) == 0 && (line[4] == ' ' || line[4] == '\t')) {
            const char *v = line + 4;
            while (*v == ' ' || *v == '\t') v++;
            size_t vn = strlen(v);
            while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
            if (vn != 6 || strncmp(v, "octile", 6) != 0) {
                map_error(err, errlen, path, lineno, "unsupported map type (want \"type octile\")");
                return ON_FAILURE | ON_CORRUPT;
            }
            typed = 1;
        } else if (strncmp(line, "height", 6) == 0 && (line[6] == ' ' || line[6] == '\t')) {
            if (!header_int(line + 6, &height)) {
                map_error(err, errlen, path, lineno, "bad height");
                return ON_FAILURE | ON_CORRUPT;
            }
        } else if (strncmp(line, "width", 5) == 0 && (line[5] == ' ' || line[5] == '\t')) {
            if (!header_int(line + 5, &width)) {
                map_error(err, errlen, path, lineno, "bad width");
                return ON_FAILURE | ON_CORRUPT;
            }
        } else {
            map_error(err, errlen, path, lineno, "unexpected header line");
            return ON_FAILURE | ON_CORRUPT;
        }
    }
    if (!typed || !width || !height) {
        map_error(err, errlen, path, lineno, "header lacks %s before \"map\"",
                  !typed ? "\"type octile\"" : !height ? "\"height\"" : "\"width\"");
        return ON_FAILURE | ON_CORRUPT;
    }
    if ((uint64_t)width * (uint64_t)height >= ((uint64_t)1 << 32)) {
        map_error(err, errlen, path, lineno, "map too large (%ld x %ld)", width, height);
        return ON_FAILURE | ON_INVALID;
    }
    /* Check the rows before the grid is allocated: it then costs at most what the file holds. */
    size_t rows_at = pos;
    long rows_line = lineno;
    const char *row;
    for (long r = 0; r < height; r++) {
        row = next_row(buf, len, &pos, &n);
        if (!row) {
            map_error(err, errlen, path, lineno + 1, "map ends after %ld of %ld rows", r, height);
            return ON_FAILURE | ON_CORRUPT;
        }
        lineno++;
        if (n != (size_t)width) {
            map_error(err, errlen, path, lineno, "row has %zu characters, expected %ld", n, width);
            return ON_FAILURE | ON_CORRUPT;
        }
    }
    /* only blank lines may follow */
    while ((row = next_row(buf, len, &pos, &n)) != NULL) {
        lineno++;
        if (!blank(row, n)) {
            map_error(err, errlen, path, lineno, "extra data after the %ld map rows", height);
            return ON_FAILURE | ON_CORRUPT;
        }
    }
    on_grid *g;
    on_status st = on_grid_create((int)width, (int)height, 1, &g);
    if (on_failed(st)) {
        if (st & ON_NO_MEMORY) map_error(err, errlen, path, rows_line, "out of memory");
        else map_error(err, errlen, path, rows_line, "map too large (%ld x %ld)", width, height);
        return st;
    }
    for (long r = 0; r < height; r++) { /* the rows again, checked: width characters each */
        row = next_row(buf, len, &rows_at, &n);
        for (long x = 0; x < width; x++) {
            char c = row[x];
            if (c != '.' && c != 'G' && c != 'S') on_grid_set(g, (int)x, (int)r, 0, 1);
        }
    }
    *out = g;
    return ON_SUCCESS;
}

on_status on_grid_read_map2d(const char *path, on_grid **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out || !path) {
        if (out) *out = NULL;
        if (err && errlen) snprintf(err, errlen, "invalid argument");
        return ON_FAILURE | ON_INVALID;
    }
    *out = NULL;
    uint8_t *buf;
    size_t len;
    on_status st = on_read_file(path, &buf, &len, err, errlen);
    if (!on_ok(st)) return st;
    st = on_grid_parse_map2d(path, (char *)buf, len, out, err, errlen);
    free(buf);
    return st;
}
