// The GPU pool of a GTFN program's temporaries: stream-ordered allocations on the default
// stream, where the kernels run (the CUDA driver's memory pool serves them).
namespace {
void* sc_take(std::size_t bytes, std::size_t* got) {
    void* data = nullptr;
    if (cudaMallocAsync(&data, bytes, 0) != cudaSuccess) return nullptr;
    *got = bytes;
    return data;
}

void sc_give(void* data, std::size_t) { cudaFreeAsync(data, 0); }
}  // namespace
