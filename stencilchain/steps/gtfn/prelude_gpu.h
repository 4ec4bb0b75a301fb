#include <cuda/std/tuple>
#define SC_HD __host__ __device__
namespace sc_tuple_ns = cuda::std;  // std::tuple is host-only in device code
