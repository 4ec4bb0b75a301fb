// The fixed C++ of the adapter that DaCeCompiler appends to the DaCe shim (see
// stencilchain/steps/dace/shim.py, adapter_source). Not compiled on its own: it is cut into
// sections, each from a line "//@ <name>" to the next such line (this comment is none of
// them), and shim.py puts the sections together, filling in each ${...} per program.
//@ head

// appended by DaCeCompiler: runs the DaCe SDFG ${sdfg} of program ${program}
#include <dlfcn.h>
#include <pthread.h>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <tuple>
#include <type_traits>

namespace ${namespace} {
namespace {
using init_t = void* (*)(${init_params});
using program_t = void (*)(${program_params});
using exit_t = int (*)(void*);
using last_error_t = int (*)(void*);
using memory_size_t = std::size_t (*)(${memory_size_params});
using set_memory_t = void (*)(${set_memory_params});

template <class F> struct sc_params;
template <class R, class... A> struct sc_params<R (*)(A...)> {
    template <std::size_t K> using at = std::tuple_element_t<K, std::tuple<A...>>;
};
template <class F, std::size_t K> using sc_param_t = typename sc_params<F>::template at<K>;
//@ program_arg_check
static_assert(std::is_same<sc_param_t<program_t, ${position}>, decltype(${args_type}::${arg})>::value,
              "DaCe argument ${arg} of ${sdfg} differs in type from what stencilchain passes");
//@ init_arg_check
static_assert(std::is_same<sc_param_t<init_t, ${position}>, decltype(${args_type}::${arg})>::value,
              "DaCe init argument ${arg} of ${sdfg} differs in type");
//@ load

const char* const sc_library = ${library};
const char* const sc_where = "program ${program}() (DaCe SDFG ${sdfg})";
init_t sc_init = nullptr;
program_t sc_program = nullptr;
exit_t sc_exit = nullptr;
last_error_t sc_last_error = nullptr;
memory_size_t sc_memory_size = nullptr;
set_memory_t sc_set_memory = nullptr;
pthread_mutex_t sc_mutex = PTHREAD_MUTEX_INITIALIZER;
struct sc_lock {  // <mutex> would double the unit's compile time
    sc_lock() { pthread_mutex_lock(&sc_mutex); }
    ~sc_lock() { pthread_mutex_unlock(&sc_mutex); }
};
std::atomic<void*> sc_state{nullptr};
std::int64_t sc_symbols[${symbol_count}] = {};

void sc_finalize() {
    void* state = sc_state.exchange(nullptr);
    if (state != nullptr) sc_exit(state);
}

// dlopen the DaCe library beside this module; false with a message in `err` if it fails
bool sc_load(char* err, std::size_t err_len) {
    if (sc_program != nullptr) return true;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&sc_finalize), &info) == 0 || info.dli_fname == nullptr) {
        std::snprintf(err, err_len, "%s: cannot locate its extension module", sc_where);
        return false;
    }
    char path[PATH_MAX + 256];
    const char* slash = std::strrchr(info.dli_fname, '/');
    const int folder = slash == nullptr ? 1 : static_cast<int>(slash - info.dli_fname);
    std::snprintf(path, sizeof(path), "%.*s/%s", folder, slash == nullptr ? "." : info.dli_fname, sc_library);
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        std::snprintf(err, err_len, "%s: cannot load %s: %s (the build folder is damaged: remove it and the program is rebuilt)", sc_where, path, why ? why : "");
        return false;
    }
    sc_init = reinterpret_cast<init_t>(dlsym(handle, "__dace_init_${sdfg}"));
    sc_exit = reinterpret_cast<exit_t>(dlsym(handle, "__dace_exit_${sdfg}"));
    sc_last_error = reinterpret_cast<last_error_t>(dlsym(handle, "__dace_gpu_last_error"));
    program_t program = reinterpret_cast<program_t>(dlsym(handle, "__program_${sdfg}"));
    if (sc_init == nullptr || sc_exit == nullptr || program == nullptr) {
        std::snprintf(err, err_len, "%s: %s lacks the functions of the SDFG", sc_where, path);
        return false;
    }
//@ load_workspace
    sc_memory_size = reinterpret_cast<memory_size_t>(dlsym(handle, "__dace_get_external_memory_size_${storage}"));
    sc_set_memory = reinterpret_cast<set_memory_t>(dlsym(handle, "__dace_set_external_memory_${storage}"));
    if (sc_memory_size == nullptr || sc_set_memory == nullptr) {
        std::snprintf(err, err_len, "%s: %s lacks the external-memory functions of the SDFG", sc_where, path);
        return false;
    }
//@ load_end
    sc_program = program;
    return true;
}

//@ temporaries_fit
bool sc_temporaries_fit(const ${args_type}& a, char* err, std::size_t err_len) {
    std::size_t bytes;
    bool over;
    void* trial;
//@ temporary_bytes
    bytes = ${itemsize};
    over = false;
//@ temporary_times_size
    over = over || __builtin_mul_overflow(bytes, static_cast<std::size_t>(a.${size} > 0 ? a.${size} : 0), &bytes);
//@ temporary_trial
    trial = over ? nullptr : std::malloc(bytes > 0 ? bytes : 1);
    if (trial == nullptr) {
        std::snprintf(err, err_len, "cannot allocate %zu bytes for temporary ${temporary} of ${program}()", over ? SIZE_MAX : bytes);
        return false;
    }
    std::free(trial);
//@ temporaries_fit_end
    return true;
}

//@ initialize
// (re)create DaCe's state handle for the symbol values of `a`; call under sc_mutex;
// null with a status (3, or 5: memory) and a message in `err` if it fails
void* sc_initialize(const ${args_type}& a, char* err, std::size_t err_len, int* status) {
    *status = 3;
    if (!sc_load(err, err_len)) return nullptr;
    static bool registered = false;
    void* old = sc_state.exchange(nullptr);
    if (old != nullptr) sc_exit(old);
//@ initialize_temporaries_fit
    if (!sc_temporaries_fit(a, err, err_len)) {
        *status = 5;
        return nullptr;
    }
//@ initialize_state
    void* state = nullptr;
    try {  // DaCe allocates persistent transients with new
        state = sc_init(${init_call});
    } catch (const std::bad_alloc&) {
        std::snprintf(err, err_len, "cannot allocate the temporaries of %s", sc_where);
        *status = 5;
        return nullptr;
    }
    if (state == nullptr) {
        std::snprintf(err, err_len, "%s: DaCe failed to initialize it", sc_where);
        return nullptr;
    }
//@ record_symbol
    sc_symbols[${position}] = ${symbol};
//@ initialize_end
    sc_state.store(state, std::memory_order_release);
    if (!registered) {
        registered = true;
        std::atexit(&sc_finalize);
    }
    return state;
}

//@ symbols_differ
bool sc_symbols_differ(const ${args_type}& a) {
    return ${differs};
}
//@ end_of_locals
}  // namespace

//@ workspace_size_without
int workspace_size(const ${args_type}&, std::size_t* needed, char*, std::size_t) {
    *needed = 0;  // no external transients
    return 0;
}
//@ workspace_size
int workspace_size(const ${args_type}& a, std::size_t* needed, char* err, std::size_t err_len) {
    sc_lock lock;
//@ workspace_size_end
    *needed = sc_memory_size(state${init_values});
    return 0;
}
//@ call

int call(const ${args_type}& a, char* workspace, char* err, std::size_t err_len) {
//@ call_locked
    // DaCe's state holds persistent transients or the workspace pointer, which
    // depend on the call: one call at a time
    sc_lock lock;
//@ call_unlocked
    (void)workspace;
    void* state = sc_state.load(std::memory_order_acquire);
    if (state == nullptr) {
        sc_lock lock;
        state = sc_state.load(std::memory_order_acquire);
        int status = 3;
        if (state == nullptr) state = sc_initialize(a, err, err_len, &status);
        if (state == nullptr) return status;
    }
//@ locked_state
    void* state = sc_state.load(std::memory_order_relaxed);
    if (${stale}) {
        int status;
        state = sc_initialize(a, err, err_len, &status);
        if (state == nullptr) return status;
    }
//@ set_memory
    sc_set_memory(state, workspace${init_values});
//@ call_temporaries_fit
    if (!sc_temporaries_fit(a, err, err_len)) return 5;
//@ run
    try {
        sc_program(${program_call});
    } catch (const std::bad_alloc&) {
        std::snprintf(err, err_len, "cannot allocate the temporaries of %s", sc_where);
        return 5;
    }
//@ gpu_error
    if (sc_last_error != nullptr) {
        const int code = sc_last_error(state);
        if (code != 0) {
            std::snprintf(err, err_len, "%s failed on the GPU (error %d)", sc_where, code);
            return 2;
        }
    }
//@ end
    return 0;
}
}  // namespace ${namespace}
