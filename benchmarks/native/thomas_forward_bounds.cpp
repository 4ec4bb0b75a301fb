// What bounds the Thomas solve's forward sweep (stencilchain.examples.tridiagonal) in cache
// (ADR 0060): the loops of GTFN's generated block (levels outside, `omp simd` over a block
// of W columns inside, the state in arrays of the block, c' and d' into level-major
// buffers), on 64x64x80 arrays, timed apart from everything else on one thread:
//   divisions only: the sweep's two divisions per point, vectorized, operands in L1;
//   gathers only:   a + b + c + d where each vector is built from 8 columns (C order);
//   sweep F / C:    the forward sweep with the columns unit-stride (Fortran order) or the
//                   levels unit-stride (C order: every vector gathered from 8 columns).
// Prints the minimum over 50 runs in ns per point. Build and run (W: columns per block):
//   g++ -O3 -march=native -fopenmp-simd -ffp-contract=off -fno-trapping-math -std=c++20
//       benchmarks/native/thomas_forward_bounds.cpp -o /tmp/thomas_bounds   (one line)
//   for w in 8 16 32 64 128 256; do /tmp/thomas_bounds $w; done
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

template <typename F>
double best_seconds(F&& run, int repeats) {
    double best = 1e9;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = Clock::now();
        run();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}
}  // namespace

int main(int argc, char** argv) {
    const int W = argc > 1 ? std::atoi(argv[1]) : 64;
    const int L = 80, COLS = 64 * 64;
    const std::int64_t N = std::int64_t(COLS) * L;
    // C order: column `col`, level `k` at col * L + k
    std::vector<double> a(N), b(N), c(N), d(N), cp(std::size_t(W) * L), dp(std::size_t(W) * L);
    for (std::int64_t i = 0; i < N; ++i) {
        a[i] = -0.3 - 1e-6 * double(i % 7);
        c[i] = -0.4;
        b[i] = 3.5 + 1e-7 * double(i % 13);
        d[i] = 0.5 + 1e-6 * double(i % 11);
    }
    double sink = 0;
    const double divisions = best_seconds([&] {
        for (int block = 0; block < COLS / W; ++block)
            for (int k = 0; k < L; ++k) {
                const double* C = &c[std::size_t(k % 8) * W];
                const double* B = &b[std::size_t(k % 8) * W];
                const double* D = &d[std::size_t(k % 8) * W];
#pragma omp simd
                for (int j = 0; j < W; ++j) {
                    cp[std::size_t(k) * W + j] = C[j] / B[j];
                    dp[std::size_t(k) * W + j] = D[j] / B[j];
                }
            }
        sink += cp[5] + dp[7];
    }, 50);
    const double gathers = best_seconds([&] {
        for (int block = 0; block < COLS / W; ++block)
            for (int k = 0; k < L; ++k) {
#pragma omp simd
                for (int j = 0; j < W; ++j) {
                    const std::int64_t o = std::int64_t(block * W + j) * L + k;
                    cp[std::size_t(k) * W + j] = a[o] + b[o] + c[o] + d[o];
                }
            }
        sink += cp[3];
    }, 50);
    // Fortran order: the same values with the columns unit-stride
    std::vector<double> aF(N), bF(N), cF(N), dF(N);
    for (int col = 0; col < COLS; ++col)
        for (int k = 0; k < L; ++k) {
            const std::int64_t o = std::int64_t(col) * L + k, f = std::int64_t(k) * COLS + col;
            aF[f] = a[o];
            bF[f] = b[o];
            cF[f] = c[o];
            dF[f] = d[o];
        }
    std::vector<double> state0(W), state1(W);
    auto sweep = [&](const double* A, const double* B, const double* C, const double* D,
                     std::int64_t column_stride, std::int64_t level_stride) {
        double* s0 = state0.data();
        double* s1 = state1.data();
        for (int block = 0; block < COLS / W; ++block) {
            for (int j = 0; j < W; ++j) s0[j] = s1[j] = 0.0;
            for (int k = 0; k < L; ++k) {
#pragma omp simd
                for (int j = 0; j < W; ++j) {
                    const std::int64_t o = (block * W + j) * column_stride + k * level_stride;
                    const double t = B[o] - A[o] * s0[j];
                    const double n0 = C[o] / t;
                    const double n1 = (D[o] - A[o] * s1[j]) / t;
                    s0[j] = n0;
                    s1[j] = n1;
                    cp[std::size_t(k) * W + j] = n0;
                    dp[std::size_t(k) * W + j] = n1;
                }
            }
        }
        sink += cp[1];
    };
    const double sweep_f = best_seconds([&] { sweep(aF.data(), bF.data(), cF.data(), dF.data(), 1, COLS); }, 50);
    const double sweep_c = best_seconds([&] { sweep(a.data(), b.data(), c.data(), d.data(), L, 1); }, 50);
    const double ns = 1e9 / double(N);
    std::printf("W=%d, ns per point: divisions only %.3f | gathers only %.3f | sweep F %.3f | "
                "sweep C %.3f (checksum %g)\n",
                W, divisions * ns, gathers * ns, sweep_f * ns, sweep_c * ns, sink);
    return 0;
}
