/* C twin of histogram.cairn: the same lane-owned rows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define N @N@
#define REPS @REPS@
#define NB ((N + 4095) / 4096)

static void rows(size_t nb, size_t n, const uint32_t *xs, uint32_t *h) {
#pragma omp parallel for
    for (size_t b = 0; b < nb; b++) {
        for (size_t k = 0; k < 256; k++) h[b * 256 + k] = 0;
        size_t lo = b * 4096, hi = lo + 4096 < n ? lo + 4096 : n;
        for (size_t i = lo; i < hi; i++) h[b * 256 + (xs[i] & 255)] += 1;
    }
}

int main(void) {
    uint32_t *xs = calloc(N, sizeof *xs);
    uint32_t *h = calloc((size_t)NB * 256, sizeof *h);
    uint64_t bins[256] = {0};
    for (size_t i = 0; i < N; i++) xs[i] = (uint32_t)(((uint64_t)i * 2654435761ull) % 4294967291ull);
    for (size_t r = 0; r < REPS; r++) {
        rows(NB, N, xs, h);
        for (size_t b = 0; b < NB; b++)
            for (size_t k = 0; k < 256; k++) bins[k] += h[b * 256 + k];
    }
    uint64_t c = 0;
    for (size_t k = 0; k < 256; k++) c = c * 31 + bins[k];
    printf("histogram n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)c);
    free(xs); free(h);
    return 0;
}
