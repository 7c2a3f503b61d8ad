/*
 * bench/anchors.cpp -- octonav against the libraries a user would pick instead, on the Warframe maps:
 * OpenVDB (a MaskGrid of the blocked voxels; line of sight by VolumeRayIntersector, the hierarchical
 * DDA down to leaf nodes, then a voxel DDA inside them) and OctoMap (an OcTree at resolution 1 with
 * the blocked voxels occupied; OcTree::castRay ignoring unknown space). For each map: resident bytes,
 * file bytes (octonav's tree file, a .vdb, a .bt), and line-of-sight time per segment on the same
 * 4,000 segments (half between random free points, half scenario start -> goal), fastest of several
 * passes alternating the libraries; and how many answers differ from the dense voxel walk under
 * octonav's rule (on_grid_visible), the reference. Index space is voxel space in all three: voxel
 * (x,y,z) is [x,x+1) x [y,y+1) x [z,z+1).
 * Built only by `make bench-anchors` (needs libopenvdb-dev and liboctomap-dev); never linked into
 * the library. Usage: anchors [-s SEGMENTS] [-p PASSES] [MAP ...]   (run from the project root)
 */
#include "octonav.h"

#include "scen.h"

#include <openvdb/math/DDA.h>
#include <openvdb/math/Ray.h>
#include <openvdb/openvdb.h>
#include <openvdb/tools/RayIntersector.h>
#include <octomap/octomap.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

namespace {

using RayT = openvdb::math::Ray<double>;
using Intersector = openvdb::tools::VolumeRayIntersector<openvdb::MaskGrid, openvdb::MaskGrid::TreeType::RootNodeType::ChildNodeType::LEVEL, RayT>;

struct Seg {
    double a[3], b[3];
};

long file_size(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? (long)st.st_size : -1;
}

// OpenVDB: the leaf-level spans from the hierarchical DDA, then each span voxel by voxel.
bool vdb_visible(Intersector &ix, openvdb::MaskGrid::ConstAccessor &acc, const Seg &s)
{
    openvdb::Vec3d a(s.a[0], s.a[1], s.a[2]), b(s.b[0], s.b[1], s.b[2]);
    openvdb::Vec3d d = b - a;
    double len = d.length();
    if (len <= 0) return !acc.isValueOn(openvdb::Coord::floor(a));
    RayT ray(a, d / len, 0.0, len);
    if (!ix.setIndexRay(ray)) return true; // misses every active node
    double t0, t1;
    while (ix.march(t0, t1)) {
        RayT sub(a, d / len, t0, t1);
        openvdb::math::DDA<RayT, 0> dda(sub);
        do {
            if (acc.isValueOn(dda.voxel())) return false;
        } while (dda.step());
    }
    return true;
}

bool octomap_visible(octomap::OcTree &ot, const Seg &s)
{
    octomap::point3d a((float)s.a[0], (float)s.a[1], (float)s.a[2]), b((float)s.b[0], (float)s.b[1], (float)s.b[2]);
    octomap::point3d d = b - a;
    double len = d.norm();
    if (len <= 0) {
        octomap::OcTreeNode *n = ot.search(a);
        return !(n && ot.isNodeOccupied(n));
    }
    octomap::point3d end;
    return !ot.castRay(a, d, end, true, len);
}

template <typename F> double timed(F &&f)
{
    double t0 = bench_now();
    f();
    return bench_now() - t0;
}

} // namespace

int main(int argc, char **argv)
{
    size_t nseg = 4000;
    int passes = 5;
    std::vector<std::string> maps;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc) nseg = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
        else maps.push_back(argv[i]);
    }
    if (maps.empty())
        for (int i = 0; bench_maps[i]; i++) maps.push_back(bench_maps[i]);
    if (nseg < 2 || passes < 1) {
        fprintf(stderr, "usage: anchors [-s SEGMENTS] [-p PASSES] [MAP ...]\n");
        return 2;
    }
    openvdb::initialize();
    printf("| map | voxels | bytes octonav / OpenVDB / OctoMap | file bytes octonav / OpenVDB / OctoMap | "
           "line of sight us octonav / OpenVDB / OctoMap | OpenVDB / octonav | clear | disagree octonav / OpenVDB "
           "/ OctoMap | octonav LOS masks bytes / build ms |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    char tmpl[] = "/tmp/octonav-anchors-XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        return 1;
    }
    std::string tmp = tmpl;
    for (const std::string &name : maps) {
        std::string path = std::string(BENCH_VOXEL_DIR) + "/" + name + ".3dmap";
        on_voxmap vm;
        char err[256];
        if (!on_ok(on_voxmap_read(path.c_str(), &vm, err, sizeof err))) {
            fprintf(stderr, "%s: skipped (%s)\n", name.c_str(), err);
            continue;
        }
        on_tree *t = nullptr;
        on_grid *g = nullptr;
        if (!on_ok(on_tree_from_voxmap(&vm, 9, &t)) || !on_ok(on_grid_from_voxmap(&vm, &g))) {
            fprintf(stderr, "%s: cannot build\n", name.c_str());
            return 1;
        }
        // OpenVDB and OctoMap from the same voxel list
        openvdb::MaskGrid::Ptr grid = openvdb::MaskGrid::create();
        {
            auto acc = grid->getAccessor();
            for (size_t i = 0; i < vm.count; i++)
                acc.setValueOn(openvdb::Coord(vm.xyz[3 * i], vm.xyz[3 * i + 1], vm.xyz[3 * i + 2]));
        }
        grid->pruneGrid();
        auto ot = std::make_unique<octomap::OcTree>(1.0);
        for (size_t i = 0; i < vm.count; i++)
            ot->updateNode(octomap::point3d(vm.xyz[3 * i] + 0.5f, vm.xyz[3 * i + 1] + 0.5f, vm.xyz[3 * i + 2] + 0.5f),
                           true, true);
        ot->updateInnerOccupancy();
        ot->prune();
        int W = vm.w, H = vm.h, D = vm.d;
        size_t voxels = vm.count;
        on_voxmap_free(&vm);

        on_tree_stats st;
        on_tree_stats_get(t, &st);
        // line of sight's masks (losmap.h): built on the first line of sight; here before the timing
        size_t lbytes = 0;
        double lms = timed([&] { on_tree_los_prepare(t, &lbytes); }) * 1e3;
        std::string f1 = tmp + "/map.tree", f2 = tmp + "/map.vdb", f3 = tmp + "/map.bt";
        on_tree_save(t, f1.c_str());
        {
            openvdb::io::File file(f2);
            openvdb::GridPtrVec grids{grid};
            file.write(grids);
            file.close();
        }
        {
            std::ostringstream quiet; // OctoMap reports the write on std::cout
            std::streambuf *old = std::cout.rdbuf(quiet.rdbuf());
            ot->writeBinary(f3);
            std::cout.rdbuf(old);
        }
        long fb1 = file_size(f1), fb2 = file_size(f2), fb3 = file_size(f3);
        unlink(f1.c_str());
        unlink(f2.c_str());
        unlink(f3.c_str());

        // the segments
        size_t ns = 0;
        bench_scen *scen = bench_read_scen((path + ".3dscen").c_str(), &ns);
        std::vector<Seg> segs(nseg);
        bench_segments(t, W, H, D, scen, ns, nseg, segs[0].a);
        free(scen);

        std::vector<char> ref(nseg), r1(nseg), r2(nseg), r3(nseg);
        for (size_t i = 0; i < nseg; i++) ref[i] = on_ok(on_grid_visible(g, segs[i].a, segs[i].b));
        Intersector ix(*grid);
        auto vacc = grid->getConstAccessor();
        double best1 = 1e30, best2 = 1e30, best3 = 1e30;
        for (int p = 0; p < passes; p++) {
            double d1 = timed([&] {
                for (size_t i = 0; i < nseg; i++) r1[i] = on_ok(on_tree_visible(t, segs[i].a, segs[i].b));
            });
            double d2 = timed([&] {
                for (size_t i = 0; i < nseg; i++) r2[i] = vdb_visible(ix, vacc, segs[i]);
            });
            double d3 = timed([&] {
                for (size_t i = 0; i < nseg; i++) r3[i] = octomap_visible(*ot, segs[i]);
            });
            best1 = std::min(best1, d1);
            best2 = std::min(best2, d2);
            best3 = std::min(best3, d3);
        }
        size_t clear = 0, x1 = 0, x2 = 0, x3 = 0;
        for (size_t i = 0; i < nseg; i++) {
            clear += ref[i];
            x1 += r1[i] != ref[i];
            x2 += r2[i] != ref[i];
            x3 += r3[i] != ref[i];
        }
        double us = 1e6 / (double)nseg;
        printf("| %s | %zu | %zu / %zu / %zu | %ld / %ld / %ld | %.3f / %.3f / %.3f | %.2f | %zu/%zu | %zu / %zu / %zu | %zu / %.1f |\n",
               name.c_str(), voxels, st.bytes, (size_t)grid->memUsage(), (size_t)ot->memoryUsage(), fb1, fb2, fb3,
               best1 * us, best2 * us, best3 * us, best2 / best1, clear, nseg, x1, x2, x3, lbytes, lms);
        fflush(stdout);
        on_grid_destroy(g);
        on_tree_destroy(t);
    }
    rmdir(tmp.c_str());
    return 0;
}
