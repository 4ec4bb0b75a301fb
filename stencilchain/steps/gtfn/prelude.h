// The start of every program that the GTFN translation generates, followed by the part of
// its device (prelude_cpu.h or prelude_gpu.h): SC_HD marks functions for host and device,
// sc_tuple_ns is the namespace of the tuples of tuple-valued field operators.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <tuple>
