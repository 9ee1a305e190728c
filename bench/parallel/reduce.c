/* C twin of reduce.cairn (plain + where CAIRN checks). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define N @N@
#define REPS @REPS@

static uint64_t total(size_t n, const uint64_t *xs) {
    uint64_t s = 0;
#pragma omp parallel for reduction(+:s)
    for (size_t i = 0; i < n; i++) s += xs[i];
    return s;
}

int main(void) {
    uint64_t *xs = calloc(N, sizeof *xs);
    for (size_t i = 0; i < N; i++) xs[i] = i % 1009;
    uint64_t c = 0;
    for (size_t r = 0; r < REPS; r++) { xs[r % N] = r % 7; c += total(N, xs); }
    printf("reduce n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)c);
    free(xs);
    return 0;
}
