#define SC_HD
namespace sc_tuple_ns = std;
// The threads an OpenMP parallel region may have, the threads of the region running,
// and this thread's number in it.
#ifdef _OPENMP
#include <omp.h>
inline int sc_max_threads() { return omp_get_max_threads(); }
inline int sc_num_threads() { return omp_get_num_threads(); }
inline int sc_thread_num() { return omp_get_thread_num(); }
#else
inline int sc_max_threads() { return 1; }
inline int sc_num_threads() { return 1; }
inline int sc_thread_num() { return 0; }
#endif
