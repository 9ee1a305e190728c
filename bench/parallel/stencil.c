/* C twin of stencil.cairn. */
#include <stdio.h>
#include <stdlib.h>
#define N @N@
#define REPS @REPS@

static void sweep(size_t n, const double *src, double *dst) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && i + 1 < n) dst[i] = (src[i - 1] + src[i] + src[i + 1]) * 0.3333333333333333;
        else dst[i] = src[i];
    }
}

int main(void) {
    double *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    for (size_t i = 0; i < N; i++) a[i] = (double)(i % 17);
    for (size_t r = 0; r < REPS / 2; r++) { sweep(N, a, b); sweep(N, b, a); }
    double s = 0.0;
    for (size_t i = 0; i < N; i++) s += a[i];
    printf("stencil n=%d reps=%d checksum=%.17g\n", N, REPS, s);
    free(a); free(b);
    return 0;
}
