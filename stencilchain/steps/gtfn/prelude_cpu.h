#define SC_HD
namespace sc_tuple_ns = std;
