/* C twin of mixed.cairn. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define N @N@
#define REPS @REPS@

static void mix(size_t n, uint64_t seed, uint64_t *out) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)i ^ seed;
        uint64_t h = x * 11400714819323198485ull;
        out[i] = (h ^ (h >> 29)) + x % 13;
    }
}

int main(void) {
    uint64_t *out = calloc(N, sizeof *out);
    uint64_t c = 0;
    for (size_t r = 0; r < REPS; r++) { mix(N, (uint64_t)r, out); c += out[r % N]; }
    for (size_t i = 0; i < N; i++) c ^= out[i];
    printf("mixed n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)c);
    free(out);
    return 0;
}
