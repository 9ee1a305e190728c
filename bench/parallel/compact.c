/* C twin of compact.cairn: with OpenMP, a two-pass parallel compact (count per thread, then
 * write at each thread's offset); without, the one in-order pass. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#define N @N@
#define REPS @REPS@

static size_t keep(size_t n, const uint32_t *xs, uint32_t *out) {
#ifdef _OPENMP
    static size_t counts[1024];
    size_t kept = 0;
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), T = (size_t)omp_get_num_threads();
        size_t lo = n * t / T, hi = n * (t + 1) / T, c = 0;
        for (size_t i = lo; i < hi; i++) c += xs[i] % 3 == 0;
        counts[t] = c;
#pragma omp barrier
        size_t at = 0;
        for (size_t k = 0; k < t; k++) at += counts[k];
        for (size_t i = lo; i < hi; i++) if (xs[i] % 3 == 0) out[at++] = xs[i] + 1;
        if (t == T - 1) kept = at;
    }
    return kept;
#else
    size_t k = 0;
    for (size_t i = 0; i < n; i++) if (xs[i] % 3 == 0) out[k++] = xs[i] + 1;
    return k;
#endif
}

int main(void) {
    uint32_t *xs = calloc(N, sizeof *xs), *out = calloc(N, sizeof *out);
    for (size_t i = 0; i < N; i++) xs[i] = (uint32_t)((i * 40503) % 65521);
    uint64_t c = 0;
    for (size_t r = 0; r < REPS; r++) { size_t k = keep(N, xs, out); c += (uint64_t)k + out[(r * 31) % k]; }
    printf("compact n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)c);
    free(xs); free(out);
    return 0;
}
