// Column solves in C order (the scans' axis the arrays' fastest dimension): a block of
// columns stores what its scans write level-major in a buffer (buf[level * width + column])
// and writes it to the array here, column by column, after the block (ADR 0055; GTFN's
// chains, and DaCe's scans on the CPU, ADR 0060). Storing straight from the vectorized
// loop over the block's columns would write one element per column and level, each to
// another cache line; here each column's levels are written as contiguous runs.
#include <cstdint>
#include <cstring>

namespace {
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define SC_COLUMNS_SHUFFLE 1
#endif
#endif

#ifdef SC_COLUMNS_SHUFFLE
typedef double sc_v8d __attribute__((vector_size(64)));

// The 8 x 8 tile at buf (rows `width` apart: 8 levels of 8 columns) stored transposed at
// out (8 columns `column_stride` apart, their 8 levels contiguous). Every element is moved,
// none computed.
inline void sc_store_tile8(const double* buf, std::int64_t width, double* out,
                           std::int64_t column_stride) {
    // (no function passes or returns a vector: without AVX-512 that would change the ABI)
    sc_v8d r[8];
    for (int k = 0; k < 8; ++k) std::memcpy(&r[k], buf + k * width, sizeof r[k]);
    const sc_v8d r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3], r4 = r[4], r5 = r[5], r6 = r[6],
                 r7 = r[7];
    // pairs of levels, then quadruples, then all eight, for each column
    const sc_v8d t0 = __builtin_shufflevector(r0, r1, 0, 8, 2, 10, 4, 12, 6, 14);
    const sc_v8d t1 = __builtin_shufflevector(r0, r1, 1, 9, 3, 11, 5, 13, 7, 15);
    const sc_v8d t2 = __builtin_shufflevector(r2, r3, 0, 8, 2, 10, 4, 12, 6, 14);
    const sc_v8d t3 = __builtin_shufflevector(r2, r3, 1, 9, 3, 11, 5, 13, 7, 15);
    const sc_v8d t4 = __builtin_shufflevector(r4, r5, 0, 8, 2, 10, 4, 12, 6, 14);
    const sc_v8d t5 = __builtin_shufflevector(r4, r5, 1, 9, 3, 11, 5, 13, 7, 15);
    const sc_v8d t6 = __builtin_shufflevector(r6, r7, 0, 8, 2, 10, 4, 12, 6, 14);
    const sc_v8d t7 = __builtin_shufflevector(r6, r7, 1, 9, 3, 11, 5, 13, 7, 15);
    const sc_v8d u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    const sc_v8d u1 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
    const sc_v8d u2 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    const sc_v8d u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
    const sc_v8d u4 = __builtin_shufflevector(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13);
    const sc_v8d u5 = __builtin_shufflevector(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13);
    const sc_v8d u6 = __builtin_shufflevector(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
    const sc_v8d u7 = __builtin_shufflevector(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
    const sc_v8d c[8] = {
        __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15),
        __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15),
        __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15),
        __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15),
    };
    for (int k = 0; k < 8; ++k) std::memcpy(out + k * column_stride, &c[k], sizeof c[k]);
}
#endif

// `columns` columns of `levels` levels from buf (level-major, rows `width` apart) to out
// (the first level of the first column; columns `column_stride` apart, levels
// `level_stride` apart).
template <typename T>
inline void sc_store_columns(const T* buf, std::int64_t width, std::int64_t columns,
                             std::int64_t levels, T* out, std::int64_t column_stride,
                             std::int64_t level_stride) {
    for (std::int64_t c = 0; c < columns; ++c)
        for (std::int64_t l = 0; l < levels; ++l)
            out[c * column_stride + l * level_stride] = buf[l * width + c];
}

#ifdef SC_COLUMNS_SHUFFLE
template <>
inline void sc_store_columns<double>(const double* buf, std::int64_t width, std::int64_t columns,
                                     std::int64_t levels, double* out,
                                     std::int64_t column_stride, std::int64_t level_stride) {
    if (level_stride != 1) {
        for (std::int64_t c = 0; c < columns; ++c)
            for (std::int64_t l = 0; l < levels; ++l)
                out[c * column_stride + l * level_stride] = buf[l * width + c];
        return;
    }
    const std::int64_t tiled_columns = columns / 8 * 8, tiled_levels = levels / 8 * 8;
    for (std::int64_t c = 0; c < tiled_columns; c += 8) {
        for (std::int64_t l = 0; l < tiled_levels; l += 8)
            sc_store_tile8(buf + l * width + c, width, out + c * column_stride + l, column_stride);
        for (std::int64_t k = c; k < c + 8; ++k)
            for (std::int64_t l = tiled_levels; l < levels; ++l)
                out[k * column_stride + l] = buf[l * width + k];
    }
    for (std::int64_t c = tiled_columns; c < columns; ++c)
        for (std::int64_t l = 0; l < levels; ++l) out[c * column_stride + l] = buf[l * width + c];
}
#endif
}  // namespace
