/*
 * scratch.h -- a scratch directory of small files for the C tests that read files (test_objfile,
 * test_voxmap): scratch_open makes it under /tmp, scratch_put writes a named file into it (writing the
 * same name again replaces it) and returns its path, scratch_dir is its path, scratch_close removes it.
 * Any failure to set it up ends the test run with status 2.
 */
#ifndef OCTONAV_SCRATCH_H
#define OCTONAV_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch_dir[64];
static char scratch_made[64][128];
static int scratch_nmade;

static void scratch_open(const char *prefix)
{
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/%sXXXXXX", prefix);
    if (!mkdtemp(scratch_dir)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Write len bytes as file `name`; its path stays valid until scratch_close. */
static const char *scratch_put(const char *name, const char *bytes, size_t len)
{
    int i = 0;
    while (i < scratch_nmade && strcmp(strrchr(scratch_made[i], '/') + 1, name) != 0) i++;
    if (i == scratch_nmade) {
        if (scratch_nmade == 64) {
            fprintf(stderr, "too many files\n");
            exit(2);
        }
        scratch_nmade++;
    }
    char *path = scratch_made[i];
    snprintf(path, sizeof scratch_made[0], "%s/%s", scratch_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fwrite(bytes, 1, len, f);
    fclose(f);
    return path;
}

static void scratch_close(void)
{
    for (int i = 0; i < scratch_nmade; i++) unlink(scratch_made[i]);
    rmdir(scratch_dir);
}

#endif
