// The CPU pool of a GTFN program's temporaries: the blocks of finished calls are kept (up to
// SC_POOL_CAPACITY, two per temporary: enough for two concurrent calls) and reused by the
// next call that fits. Freeing a large block returns it to the kernel, and the next call
// would pay for zeroing every page again (2.5x the time of a 4096x4096 lap(lap(f)) at the
// first measurement, benchmarks/temporaries.py). Needs SC_POOL_CAPACITY.
#include <cstdlib>
#include <pthread.h>
#include <sys/mman.h>
namespace {
constexpr std::size_t SC_HUGE = std::size_t(1) << 21;  // 2 MiB
struct sc_block {
    void* data;
    std::size_t bytes;
};
sc_block sc_pool[SC_POOL_CAPACITY];
int sc_pool_count = 0;
pthread_mutex_t sc_pool_mutex = PTHREAD_MUTEX_INITIALIZER;

// The smallest kept block of at least `bytes`, else a new one; its size in `*got`.
void* sc_take(std::size_t bytes, std::size_t* got) {
    void* data = nullptr;
    pthread_mutex_lock(&sc_pool_mutex);
    int best = -1;
    for (int k = 0; k < sc_pool_count; ++k) {
        if (sc_pool[k].bytes >= bytes && (best < 0 || sc_pool[k].bytes < sc_pool[best].bytes)) best = k;
    }
    if (best >= 0) {
        data = sc_pool[best].data;
        *got = sc_pool[best].bytes;
        sc_pool[best] = sc_pool[--sc_pool_count];
    }
    pthread_mutex_unlock(&sc_pool_mutex);
    if (data == nullptr) {
        *got = bytes;
        if (bytes < SC_HUGE) return std::malloc(bytes);
        // like NumPy's large arrays: transparent huge pages, fewer TLB misses
        *got = (bytes + SC_HUGE - 1) / SC_HUGE * SC_HUGE;
        if (posix_memalign(&data, SC_HUGE, *got) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
        madvise(data, *got, MADV_HUGEPAGE);
#endif
    }
    return data;
}

// Keep the block; when the pool is full, keep the larger of it and the smallest kept one
// (a larger block serves every smaller request).
void sc_give(void* data, std::size_t bytes) {
    pthread_mutex_lock(&sc_pool_mutex);
    if (sc_pool_count < SC_POOL_CAPACITY) {
        sc_pool[sc_pool_count++] = sc_block{data, bytes};
        data = nullptr;
    } else {
        int smallest = 0;
        for (int k = 1; k < sc_pool_count; ++k) {
            if (sc_pool[k].bytes < sc_pool[smallest].bytes) smallest = k;
        }
        if (sc_pool[smallest].bytes < bytes) {
            const sc_block evicted = sc_pool[smallest];
            sc_pool[smallest] = sc_block{data, bytes};
            data = evicted.data;
        }
    }
    pthread_mutex_unlock(&sc_pool_mutex);
    if (data != nullptr) std::free(data);
}
}  // namespace
