// Program-local temporaries of a GTFN program: taken from the pool (cpu_pool.h or
// gpu_pool.h, before this) when the call starts, given back on every return path.
namespace {
// A program-local temporary: taken when the call starts, given back on every return path.
struct sc_temporary {
    void* data = nullptr;
    std::size_t bytes = 0;
    sc_temporary() = default;
    sc_temporary(const sc_temporary&) = delete;
    sc_temporary& operator=(const sc_temporary&) = delete;
    ~sc_temporary() { if (data != nullptr) sc_give(data, bytes); }
};

inline bool sc_allocate(sc_temporary& t, std::size_t bytes) {
    t.data = sc_take(bytes == 0 ? 1 : bytes, &t.bytes);
    return t.data != nullptr;
}

// Dense strides (in elements) for `n` axes of sizes `size`, the axis of smallest |like|
// stride fastest; on ties the later axis is faster (C order).
inline void sc_dense_like(int n, const std::int64_t* like, const std::int64_t* size, std::int64_t* out) {
    int order[8];
    for (int k = 0; k < n; ++k) order[k] = n - 1 - k;
    for (int k = 1; k < n; ++k) {  // stable insertion sort by |like|
        const int axis = order[k];
        int j = k;
        while (j > 0 && std::llabs(like[order[j - 1]]) > std::llabs(like[axis])) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = axis;
    }
    std::int64_t stride = 1;
    for (int k = 0; k < n; ++k) {
        out[order[k]] = stride;
        stride *= size[order[k]] > 0 ? size[order[k]] : 1;
    }
}
}  // namespace
