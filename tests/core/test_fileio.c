/*
 * test_fileio.c -- fileio.c's directory helpers (the pack publishing of lua/octonav/bake/publish.lua)
 * and the OBJ exports written beside their path (export.c): a hard-link copy shares every file and
 * keeps what the copy already has, an exchange puts the new directory in place in one step, a removal
 * takes everything and follows no symlink; an export failing half way (a file size limit in a child:
 * the injected write failure, no mount needed) leaves the previous export whole with the OS's reason.
 */
#include "octonav.h"
#include "fileio.h"
#include "minitest.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[64];

static const char *at(const char *name)
{
    static char buf[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
    return buf[k];
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(at(name), "wb");
    if (!f) {
        perror(at(name));
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

/* the whole file as a string (static buffer), "" when missing */
static const char *get(const char *name)
{
    static char buf[4096];
    buf[0] = 0;
    FILE *f = fopen(at(name), "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static ino_t inode(const char *name)
{
    struct stat st;
    return stat(at(name), &st) == 0 ? st.st_ino : 0;
}

static int exists(const char *name)
{
    struct stat st;
    return lstat(at(name), &st) == 0;
}

static void test_trees(void)
{
    char err[512];
    mkdir(at("a"), 0777);
    mkdir(at("a/tiles"), 0777);
    put("a/manifest.txt", "A manifest");
    put("a/tiles/0.tile", "A tile 0");
    put("a/tiles/1.tile", "A tile 1");
    put("outside", "not in the pack");
    CHECK(symlink("../outside", at("a/link")) == 0);
    /* the copy: hard links, directories made, a file the copy has already kept */
    mkdir(at("b"), 0777);
    mkdir(at("b/tiles"), 0777);
    put("b/tiles/1.tile", "B tile 1");
    CHECK_EQ_INT(on_link_tree(at("a"), at("b"), err, sizeof err), ON_SUCCESS);
    CHECK(inode("a/manifest.txt") == inode("b/manifest.txt"));
    CHECK(inode("a/tiles/0.tile") == inode("b/tiles/0.tile"));
    CHECK(strcmp(get("b/tiles/1.tile"), "B tile 1") == 0);
    CHECK(strcmp(get("b/link"), "not in the pack") == 0); /* a symlink is followed: its file linked */
    CHECK_EQ_INT(on_link_tree(at("missing"), at("b"), err, sizeof err), ON_SUCCESS);
    /* a missing destination directory's parent: the OS's reason */
    CHECK_EQ_INT(on_link_tree(at("a"), at("no/such/dir"), err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, "no/such/dir: cannot create directory: No such file or directory") != NULL);
    /* the exchange: b in a's place, a's old files at b */
    CHECK_EQ_INT(on_exchange_dirs(at("b"), at("a"), err, sizeof err), ON_SUCCESS);
    CHECK(strcmp(get("a/tiles/1.tile"), "B tile 1") == 0);
    CHECK(strcmp(get("b/tiles/1.tile"), "A tile 1") == 0);
    /* into a missing place: a rename */
    CHECK_EQ_INT(on_exchange_dirs(at("b"), at("c"), err, sizeof err), ON_SUCCESS);
    CHECK(!exists("b") && strcmp(get("c/tiles/1.tile"), "A tile 1") == 0);
    put("file", "x");
    CHECK_EQ_INT(on_exchange_dirs(at("c"), at("file"), err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, "file: cannot publish: Not a directory") != NULL);
    /* removal: symlinks removed, never followed */
    CHECK(symlink("../outside", at("c/tiles/out")) == 0);
    CHECK(symlink("..", at("c/up")) == 0);
    CHECK_EQ_INT(on_remove_tree(at("c"), err, sizeof err), ON_SUCCESS);
    CHECK(!exists("c") && strcmp(get("outside"), "not in the pack") == 0 && exists("a/tiles/0.tile"));
    CHECK_EQ_INT(on_remove_tree(at("c"), err, sizeof err), ON_SUCCESS);
    remove(at("file"));
}

static on_tree *scene(void)
{
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = p.tiles[1] = p.tiles[2] = 1;
    p.depth = 5;
    p.scale = 1;
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    for (int i = 0; i < 20; i++) {
        double mn[3] = {i * 1.5 + 0.2, 0.3, 0.1 * i}, mx[3] = {i * 1.5 + 0.9, 4.5 + i % 7, 0.1 * i + 3.3};
        on_tree_add_box(t, mn, mx);
    }
    return t;
}

static void test_export(void)
{
    on_tree *t = scene();
    CHECK(t != NULL);
    if (!t) return;
    char err[512];
    const char *p = at("x.obj");
    size_t faces = 0, verts = 0, boxes = 0;
    CHECK_EQ_INT(on_tree_export_surface_obj_msg(t, p, 0, &faces, &verts, err, sizeof err), ON_SUCCESS);
    CHECK(faces > 0 && verts > 0);
    char before[4096];
    snprintf(before, sizeof before, "%s", get("x.obj"));
    CHECK(strlen(before) > 1000);
    for (int form = 0; form < 2; form++) {
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {1000, 1000};
            setrlimit(RLIMIT_FSIZE, &rl);
            char e2[512] = "";
            on_status s = form ? on_tree_export_obj_msg(t, p, 1, &boxes, e2, sizeof e2)
                               : on_tree_export_surface_obj_msg(t, p, 1, &faces, &verts, e2, sizeof e2);
            _exit(s == (ON_FAILURE | ON_IO) && strstr(e2, "x.obj: cannot write: File too large") ? 0 : 1);
        }
        int ws = -1;
        CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
        CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        CHECK(strcmp(get("x.obj"), before) == 0);
    }
    /* only x.obj and what test_trees left: no temporary */
    DIR *d = opendir(root);
    int tmp = 0;
    for (struct dirent *e; d && (e = readdir(d));) tmp += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    CHECK_EQ_INT(tmp, 0);
    CHECK_EQ_INT(on_tree_export_obj_msg(t, "/dev/full", 0, &boxes, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strcmp(err, "/dev/full: cannot write: No space left on device") == 0);
    on_tree_destroy(t);
}

TEST_MAIN("fileio", {
    snprintf(root, sizeof root, "/tmp/onfileioXXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 2;
    }
    test_trees();
    test_export();
    char err[512];
    CHECK_EQ_INT(on_remove_tree(root, err, sizeof err), ON_SUCCESS);
})
