// stencilchain: a parallel region that can only have one thread runs as a plain call.
//
// DaCe's CPU code opens an OpenMP region (`#pragma omp parallel for`) for every parallel
// map, whatever the call's size. A small call runs on one thread (the shim sets the
// thread count to 1 below its `openmp_threshold`), and libgomp's team of one still costs a
// heap allocation of the team, a futex wake at its end barrier and the free: about 0.3 us
// per region, more than a small stencil's work. The library of the SDFG is linked with
// `--wrap=GOMP_parallel` (DaCeCompiler), so its regions come here: with one thread (the
// region's num_threads clause, or the thread count when it has none) the region's outlined
// function runs on the calling thread, as the only thread of the region would (thread
// number 0 of 1; the constructs inside it, orphaned, run as a team of one runs them);
// otherwise libgomp starts the team. Not a static function: the linker resolves the
// library's calls to it by name.
#include <omp.h>

extern "C" void __real_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads,
                                     unsigned flags) __attribute__((weak));

extern "C" void __wrap_GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads,
                                     unsigned flags) {
    if (num_threads == 1 || (num_threads == 0 && omp_get_max_threads() == 1)) {
        fn(data);
        return;
    }
    __real_GOMP_parallel(fn, data, num_threads, flags);
}
