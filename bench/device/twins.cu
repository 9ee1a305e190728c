// Hand-written CUDA twins of bandwidth.cairn's kernels (issue 21): the same algorithms over the
// same sizes, one thread an index in blocks of 256, timed the same way (the best of REPS wall
// times around a launch and its synchronization), printing the same `<name> <bytes> <ns>` lines.
// Built on the GPU machine by its nvcc (`nvcc -O3 -arch=sm_90 twins.cu`); the CUDA runtime API
// is the twin's business, the CAIRN side drives the driver API itself.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

static const size_t N = 67108864;
static const size_t W = 8192;
static const int REPS = 20;

__global__ void saxpy(size_t n, float a, const float *x, float *y) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fadd_rn(__fmul_rn(a, x[i]), y[i]);
}

__global__ void transpose(size_t n, size_t w, const float *src, float *dst) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[(i % w) * w + i / w];
}

__global__ void stencil(size_t n, const float *x, float *out) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i > 0 && i + 1 < n) out[i] = __fmul_rn(__fadd_rn(__fadd_rn(x[i - 1], x[i]), x[i + 1]), 0.25f);
    else out[i] = x[i];
}

// The sum as bandwidth.cairn's `reduce` runs it: block b takes 16 * 256 consecutive indices,
// thread t adds t, t + 256, …; a warp adds its 32 sums by shuffles, the block's first thread adds
// the warps' sums and one atomicAdd takes the block's sum into the total.
__global__ void sum(size_t n, const uint32_t *u, uint32_t *total) {
    __shared__ uint32_t warps[32];
    size_t base = blockIdx.x * (size_t)blockDim.x * 16 + threadIdx.x;
    uint32_t s = 0;
    for (int j = 0; j < 16; j++) {
        size_t i = base + (size_t)j * blockDim.x;
        if (i >= n) break;
        s += u[i];
    }
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t b = 0;
        for (unsigned w = 0; w < blockDim.x / 32; w++) b += warps[w];
        atomicAdd(total, b);
    }
}

__global__ void fill(size_t n, uint32_t *u) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) u[i] = (uint32_t)(i % 1024);
}

static uint64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename F> static uint64_t best(F run) {
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < REPS; r++) {
        uint64_t t = now();
        run();
        cudaDeviceSynchronize();
        uint64_t took = now() - t;
        if (took < best) best = took;
    }
    return best;
}

int main() {
    std::vector<float> hx(N), hy(N);
    for (size_t i = 0; i < N; i++) { hx[i] = (float)(i % 1024); hy[i] = 1.0f; }
    float *x, *y, *z;
    cudaMalloc(&x, N * 4);
    cudaMalloc(&y, N * 4);
    cudaMalloc(&z, N * 4);
    cudaMemcpy(x, hx.data(), N * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(y, hy.data(), N * 4, cudaMemcpyHostToDevice);
    const unsigned blocks = (unsigned)((N + 255) / 256);
    uint64_t copy = best([&] { cudaMemcpy(z, x, N * 4, cudaMemcpyDeviceToDevice); });
    uint64_t ax = best([&] { saxpy<<<blocks, 256>>>(N, 0.0f, x, y); });
    uint64_t tr = best([&] { transpose<<<blocks, 256>>>(N, W, x, z); });
    uint64_t st = best([&] { stencil<<<blocks, 256>>>(N, x, z); });
    uint32_t *u, *total, host_total = 0;
    cudaMalloc(&u, N * 4);
    cudaMalloc(&total, 4);
    fill<<<blocks, 256>>>(N, u);
    // As the CAIRN side: the total starts at zero on the device, and is copied home.
    uint64_t su = best([&] {
        cudaMemset(total, 0, 4);
        sum<<<(unsigned)((N + 4095) / 4096), 256>>>(N, u, total);
        cudaMemcpy(&host_total, total, 4, cudaMemcpyDeviceToHost);
    });
    if (host_total != (uint32_t)((N / 1024 * 523776ull) % 4294967296ull)) { printf("sum wrong\n"); return 1; }
    if (cudaGetLastError() != cudaSuccess) { printf("a CUDA error\n"); return 1; }
    unsigned long long bytes = (unsigned long long)N * 4;
    printf("copy %llu %llu\n", 2 * bytes, (unsigned long long)copy);
    printf("saxpy %llu %llu\n", 3 * bytes, (unsigned long long)ax);
    printf("transpose %llu %llu\n", 2 * bytes, (unsigned long long)tr);
    printf("stencil %llu %llu\n", 2 * bytes, (unsigned long long)st);
    printf("sum %llu %llu\n", bytes, (unsigned long long)su);
    return 0;
}
