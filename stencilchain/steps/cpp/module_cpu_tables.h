// CPU neighbour tables of the extension module: every entry lies in [low, n) (low = -1 where
// the connectivity has skip values, n the size of its source dimension), checked before
// anything runs. A frozen table (sc.frozen_table: a read-only array over a
// stencilchain.program.tables.TableBytes object, whose header records the smallest and the
// largest entry) is checked with two comparisons; any other table is read entry by entry, in
// a vectorized loop. See stencilchain/program/tables.py and docs/adr/0031.
#include <cstring>
#include <type_traits>

#define SC_NATIVE_TABLE_CHECKS 1

// The loop over a table's entries gets the vectorizer, which the bindings unit's -O1 lacks,
// and an AVX2 clone chosen when the module loads on a CPU that has it (the bindings unit is
// built for any x86-64: 4-6x fewer cycles per entry than SSE2, measured on a 20,000 x 4 table).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define SC_VECTORIZED __attribute__((noinline, optimize("O3"), target_clones("avx2", "default")))
#elif defined(__GNUC__) && !defined(__clang__)
#define SC_VECTORIZED __attribute__((noinline, optimize("O3")))
#else
#define SC_VECTORIZED __attribute__((noinline))
#endif

namespace {
constexpr std::int64_t SC_TABLE_HEADER = 32;          // tables.HEADER_BYTES
constexpr std::int64_t SC_TABLE_VERSION = 0x5C7AB1E1;  // tables.HEADER_VERSION

// stencilchain.program.tables.TableBytes, looked up at the first table check (null when
// stencilchain cannot be imported: every table is then read entry by entry).
PyTypeObject* sc_table_bytes() {
    static PyTypeObject* type = nullptr;
    static bool looked_up = false;
    if (!looked_up) {
        looked_up = true;
        PyObject* module = PyImport_ImportModule("stencilchain.program.tables");
        PyObject* found = module ? PyObject_GetAttrString(module, "TableBytes") : nullptr;
        Py_XDECREF(module);
        if (found != nullptr && PyType_Check(found)) {
            type = reinterpret_cast<PyTypeObject*>(found);  // kept for the module's lifetime
        } else {
            Py_XDECREF(found);
            PyErr_Clear();
        }
    }
    return type;
}

// The range recorded in the header of the frozen table `o` (checked as array `a`), when every
// element of `a` is one of that table's own: its memory ends in a TableBytes object, whose
// header took the range in this item size, `a` lies within the entries and starts at a whole
// entry (its strides are whole entries: sc_numpy_array checked them).
template <class T>
SC_INLINE bool sc_frozen_range(PyObject* o, const sc_array& a, std::int64_t* lo, std::int64_t* hi) {
    const auto* array = reinterpret_cast<const sc_ndarray*>(o);
    if (array->flags & SC_NPY_WRITEABLE) return false;
    PyObject* base = array->base;
    auto* ndarray = reinterpret_cast<PyTypeObject*>(sc_globals.ndarray);
    while (base != nullptr && PyObject_TypeCheck(base, ndarray)) {
        base = reinterpret_cast<const sc_ndarray*>(base)->base;
    }
    PyTypeObject* table_bytes = base != nullptr ? sc_table_bytes() : nullptr;
    if (table_bytes == nullptr || Py_TYPE(base) != table_bytes) return false;
    const Py_ssize_t size = PyBytes_GET_SIZE(base);
    if (size < SC_TABLE_HEADER) return false;
    const char* memory = PyBytes_AS_STRING(base);
    std::int64_t header[4];
    std::memcpy(header, memory, sizeof header);
    if (header[3] != SC_TABLE_VERSION || header[2] != static_cast<std::int64_t>(sizeof(T))) return false;
    if (!a.empty) {
        const auto begin = reinterpret_cast<std::intptr_t>(memory + SC_TABLE_HEADER);
        const auto end = reinterpret_cast<std::intptr_t>(memory + size);
        const auto first = reinterpret_cast<std::intptr_t>(a.data);
        if (a.begin < begin || a.end > end || (first - begin) % static_cast<std::intptr_t>(sizeof(T)) != 0) {
            return false;
        }
    }
    *lo = header[0];
    *hi = header[1];
    return true;
}

// Whether every entry of the 2-D table `a` lies in [low, n): entry - low, as an unsigned
// number, is below n - low exactly then, so the loop is one maximum.
template <class T>
SC_VECTORIZED bool sc_entries_in_range(const sc_array& a, std::int64_t low, std::int64_t n) {
    using U = typename std::make_unsigned<T>::type;
    constexpr std::int64_t past_max = sizeof(T) < 8 ? std::int64_t(1) << (8 * sizeof(T) - 1) : 0;
    if (past_max != 0 && n > past_max) n = past_max;  // every entry is below it
    const U shift = static_cast<U>(low);
    const U bound = static_cast<U>(static_cast<U>(n) - shift);
    const T* p = reinterpret_cast<const T*>(a.data);
    const std::int64_t rows = a.shape[0], cols = a.shape[1], s0 = a.strides[0], s1 = a.strides[1];
    if (rows == 0 || cols == 0) return true;
    U largest = 0;
    const bool c_order = (cols == 1 || s1 == 1) && (rows == 1 || s0 == cols);
    const bool f_order = (rows == 1 || s0 == 1) && (cols == 1 || s1 == rows);
    if (c_order || f_order) {
        const std::int64_t count = rows * cols;
        for (std::int64_t k = 0; k < count; ++k) {
            const U v = static_cast<U>(static_cast<U>(p[k]) - shift);
            largest = v > largest ? v : largest;
        }
    } else {
        for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t c = 0; c < cols; ++c) {
                const U v = static_cast<U>(static_cast<U>(p[r * s0 + c * s1]) - shift);
                largest = v > largest ? v : largest;
            }
        }
    }
    return largest < bound;
}

SC_COLD bool sc_table_mismatch(const char* name, std::int64_t low, std::int64_t n, std::string& why) {
    return sc_fail(why, name, "the table holds an entry outside [" + std::to_string(low) + ", " +
                                  std::to_string(n) + ")");
}

// The check of table argument `o` (already checked as array `a` of entries T; false: rejected).
template <class T>
SC_INLINE bool sc_check_table(PyObject* o, const sc_array& a, const char* name, std::int64_t low, std::int64_t n,
                              std::string& why) {
    std::int64_t lo = 0, hi = 0;
    if (sc_frozen_range<T>(o, a, &lo, &hi) && low <= lo && hi < n) return true;
    return sc_entries_in_range<T>(a, low, n) || sc_table_mismatch(name, low, n, why);
}
}  // namespace
