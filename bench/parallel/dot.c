/* C twin of dot.cairn; the OpenMP twin reassociates the sum (reduction(+)). */
#include <stdio.h>
#include <stdlib.h>
#define N @N@
#define REPS @REPS@

static double dot(size_t n, const double *xs, const double *ys) {
    double d = 0.0;
#pragma omp parallel for reduction(+:d)
    for (size_t i = 0; i < n; i++) d += xs[i] * ys[i];
    return d;
}

int main(void) {
    double *xs = calloc(N, sizeof *xs), *ys = calloc(N, sizeof *ys);
    for (size_t i = 0; i < N; i++) { xs[i] = (double)(i % 8); ys[i] = (double)(i % 5); }
    double s = 0.0;
    for (size_t r = 0; r < REPS; r++) {
        ys[r % N] = (double)(r % 5);
        s += dot(N, xs, ys);
    }
    printf("dot n=%d reps=%d checksum=%.17g\n", N, REPS, s);
    free(xs); free(ys);
    return 0;
}
