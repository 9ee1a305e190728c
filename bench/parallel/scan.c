/* C twin of scan.cairn: with OpenMP, a two-pass blocked scan (one block per thread). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#define N @N@
#define REPS @REPS@

static uint64_t prefix(size_t n, const uint64_t *xs, uint64_t *out) {
#ifdef _OPENMP
    static uint64_t partial[1024];
    uint64_t total = 0;
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), T = (size_t)omp_get_num_threads();
        size_t lo = n * t / T, hi = n * (t + 1) / T;
        uint64_t s = 0;
        for (size_t i = lo; i < hi; i++) { s += xs[i]; out[i] = s; }
        partial[t] = s;
#pragma omp barrier
        uint64_t off = 0;
        for (size_t k = 0; k < t; k++) off += partial[k];
        for (size_t i = lo; i < hi; i++) out[i] += off;
        if (t == T - 1) total = off + s;
    }
    return total;
#else
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) { s += xs[i]; out[i] = s; }
    return s;
#endif
}

int main(void) {
    uint64_t *xs = calloc(N, sizeof *xs), *out = calloc(N, sizeof *out);
    for (size_t i = 0; i < N; i++) xs[i] = i % 101;
    uint64_t c = 0;
    for (size_t r = 0; r < REPS; r++) { uint64_t t = prefix(N, xs, out); c += t + out[(r * 7919) % N]; }
    printf("scan n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)c);
    free(xs); free(out);
    return 0;
}
