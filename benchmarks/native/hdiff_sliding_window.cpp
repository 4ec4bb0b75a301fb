// hdiff (stencilchain.examples.hdiff) with a hand-written sliding-window schedule, the one
// Halide's storage folding gives: each intermediate (the Laplacian, the two fluxes) is
// computed once per point into a small ring buffer that moves with the outer loop, instead
// of being recomputed where it is read (what GTFN's generated code does). Used by
// benchmarks/hdiff_schedules.py only, to measure whether that schedule would pay on the
// machine at hand; the arithmetic is GTFN's, operation for operation, so the results are
// bit-identical (the benchmark checks it).
//
// Arrays are float64 over (I, J, K) with element strides s0, s1, s2; the domain is
// I: [2, nI-2), J: [2, nJ-2), K: [0, nK). Two schedules:
//   sc_hdiff_c: K unit-stride (C order). Planes of J x K stream along I (a ring of 3
//     Laplacian planes and 2 flux-x planes), J cut into tiles of `tile` points.
//   sc_hdiff_f: I unit-stride (Fortran order). Rows along I stream along J within each
//     level k (a ring of 3 Laplacian rows and 2 flux-y rows: everything stays in L1).
// Both are parallel (OpenMP) over independent work items; `slab` planes per item along I.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef std::int64_t i64;

static inline double flux(double d, double a, double b) { return (d * (a - b) > 0.0) ? 0.0 : d; }

// One work item of the C-order schedule: result planes [ilo, ihi), J tile [jlo, jhi).
static void c_item(const double* __restrict__ p, const double* __restrict__ c, double* __restrict__ o,
                   i64 s0, i64 s1, i64 nK, i64 ilo, i64 ihi, i64 jlo, i64 jhi,
                   double* __restrict__ lap, double* __restrict__ flx, double* __restrict__ fly) {
    const i64 wl = (jhi - jlo + 2) * nK;  // a Laplacian plane: J in [jlo-1, jhi+1)
    const i64 wf = (jhi - jlo) * nK;      // a flux-x plane: J in [jlo, jhi)
    for (i64 t = ilo - 2; t < ihi; ++t) {
        const i64 pl = t + 1;  // the Laplacian's leading plane
        if (pl >= ilo - 1) {
            double* __restrict__ L = lap + (pl % 3) * wl;
            for (i64 j = jlo - 1; j < jhi + 1; ++j) {
                const double* __restrict__ q = p + pl * s0 + j * s1;
                double* __restrict__ r = L + (j - (jlo - 1)) * nK;
#pragma omp simd
                for (i64 k = 0; k < nK; ++k)
                    r[k] = 4.0 * q[k] - (((q[k - s0] + q[k + s0]) + q[k - s1]) + q[k + s1]);
            }
        }
        if (t >= ilo - 1) {  // flux-x of plane t
            const double* __restrict__ L1 = lap + ((t + 1) % 3) * wl;
            const double* __restrict__ L0 = lap + (t % 3) * wl;
            double* __restrict__ F = flx + (t % 2) * wf;
            for (i64 j = jlo; j < jhi; ++j) {
                const double* __restrict__ q = p + t * s0 + j * s1;
                const double* __restrict__ a = L1 + (j - (jlo - 1)) * nK;
                const double* __restrict__ b = L0 + (j - (jlo - 1)) * nK;
                double* __restrict__ f = F + (j - jlo) * nK;
#pragma omp simd
                for (i64 k = 0; k < nK; ++k) f[k] = flux(a[k] - b[k], q[k + s0], q[k]);
            }
        }
        if (t >= ilo) {  // flux-y and the result of plane t
            const double* __restrict__ L0 = lap + (t % 3) * wl;
            for (i64 j = jlo - 1; j < jhi; ++j) {
                const double* __restrict__ q = p + t * s0 + j * s1;
                const double* __restrict__ a = L0 + (j + 1 - (jlo - 1)) * nK;
                const double* __restrict__ b = L0 + (j - (jlo - 1)) * nK;
                double* __restrict__ y = fly + (j - (jlo - 1)) * nK;
#pragma omp simd
                for (i64 k = 0; k < nK; ++k) y[k] = flux(a[k] - b[k], q[k + s1], q[k]);
            }
            const double* __restrict__ F0 = flx + (t % 2) * wf;
            const double* __restrict__ F1 = flx + ((t + 1) % 2) * wf;  // plane t - 1
            for (i64 j = jlo; j < jhi; ++j) {
                const double* __restrict__ q = p + t * s0 + j * s1;
                const double* __restrict__ cc = c + t * s0 + j * s1;
                double* __restrict__ out = o + t * s0 + j * s1;
                const double* __restrict__ f0 = F0 + (j - jlo) * nK;
                const double* __restrict__ f1 = F1 + (j - jlo) * nK;
                const double* __restrict__ y0 = fly + (j - (jlo - 1)) * nK;
                const double* __restrict__ y1 = y0 - nK;
#pragma omp simd
                for (i64 k = 0; k < nK; ++k) out[k] = q[k] - cc[k] * (((f0[k] - f1[k]) + y0[k]) - y1[k]);
            }
        }
    }
}

// One level k of the Fortran-order schedule (I unit-stride): rows stream along J.
static void f_level(const double* __restrict__ p, const double* __restrict__ c, double* __restrict__ o,
                    i64 s1, i64 s2, i64 nI, i64 nJ, i64 k,
                    double* __restrict__ lap, double* __restrict__ fly, double* __restrict__ flx) {
    const i64 w = nI;  // a row: I in [0, nI), the Laplacian on [1, nI-1)
    for (i64 t = 0; t < nJ - 2; ++t) {
        const i64 jl = t + 1;  // the Laplacian's leading row
        if (jl >= 1) {
            const double* __restrict__ q = p + jl * s1 + k * s2;
            double* __restrict__ L = lap + (jl % 3) * w;
#pragma omp simd
            for (i64 i = 1; i < nI - 1; ++i)
                L[i] = 4.0 * q[i] - (((q[i - 1] + q[i + 1]) + q[i - s1]) + q[i + s1]);
        }
        if (t >= 1) {  // flux-y of row t (read at t and t - 1)
            const double* __restrict__ q = p + t * s1 + k * s2;
            const double* __restrict__ a = lap + ((t + 1) % 3) * w;
            const double* __restrict__ b = lap + (t % 3) * w;
            double* __restrict__ Y = fly + (t % 2) * w;
#pragma omp simd
            for (i64 i = 2; i < nI - 2; ++i) Y[i] = flux(a[i] - b[i], q[i + s1], q[i]);
        }
        if (t >= 2) {  // flux-x and the result of row t
            const double* __restrict__ q = p + t * s1 + k * s2;
            const double* __restrict__ L = lap + (t % 3) * w;
#pragma omp simd
            for (i64 i = 1; i < nI - 2; ++i) flx[i] = flux(L[i + 1] - L[i], q[i + 1], q[i]);
            const double* __restrict__ y0 = fly + (t % 2) * w;
            const double* __restrict__ y1 = fly + ((t + 1) % 2) * w;  // row t - 1
            const double* __restrict__ cc = c + t * s1 + k * s2;
            double* __restrict__ out = o + t * s1 + k * s2;
#pragma omp simd
            for (i64 i = 2; i < nI - 2; ++i)
                out[i] = q[i] - cc[i] * (((flx[i] - flx[i - 1]) + y0[i]) - y1[i]);
        }
    }
}

extern "C" int sc_hdiff_c(const double* p, const double* c, double* o, i64 nI, i64 nJ, i64 nK,
                          i64 s0, i64 s1, i64 tile, i64 slab) {
    if (nI < 5 || nJ < 5 || nK < 1 || tile < 1 || slab < 1) return 1;
    const i64 tiles = (nJ - 4 + tile - 1) / tile, slabs = (nI - 4 + slab - 1) / slab;
#pragma omp parallel
    {
        std::vector<double> lap(3 * (tile + 2) * nK), flx(2 * tile * nK), fly((tile + 1) * nK);
#pragma omp for schedule(static) collapse(2)
        for (i64 a = 0; a < slabs; ++a)
            for (i64 b = 0; b < tiles; ++b) {
                const i64 ilo = 2 + a * slab, jlo = 2 + b * tile;
                c_item(p, c, o, s0, s1, nK, ilo, std::min(ilo + slab, nI - 2), jlo,
                       std::min(jlo + tile, nJ - 2), lap.data(), flx.data(), fly.data());
            }
    }
    return 0;
}

extern "C" int sc_hdiff_f(const double* p, const double* c, double* o, i64 nI, i64 nJ, i64 nK,
                          i64 s1, i64 s2) {
    if (nI < 5 || nJ < 5 || nK < 1) return 1;
#pragma omp parallel
    {
        std::vector<double> lap(3 * nI), fly(2 * nI), flx(nI);
#pragma omp for schedule(static)
        for (i64 k = 0; k < nK; ++k)
            f_level(p, c, o, s1, s2, nI, nJ, k, lap.data(), fly.data(), flx.data());
    }
    return 0;
}
