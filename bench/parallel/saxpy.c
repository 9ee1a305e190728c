/* C twin of saxpy.cairn (with `-fopenmp`: the OpenMP twin; without: sequential C). */
#include <stdio.h>
#include <stdlib.h>
#define N @N@
#define REPS @REPS@

static void saxpy(size_t n, float a, const float *xs, float *ys) {
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) ys[i] = a * xs[i] + ys[i];
}

int main(void) {
    float *xs = calloc(N, sizeof *xs), *ys = calloc(N, sizeof *ys);
    for (size_t i = 0; i < N; i++) { xs[i] = (float)(i % 1000) * 0.001f; ys[i] = 1.0f; }
    for (size_t r = 0; r < REPS; r++) saxpy(N, 0.5f, xs, ys);
    double s = 0.0;
    for (size_t i = 0; i < N; i++) s += (double)ys[i];
    printf("saxpy n=%d reps=%d checksum=%.17g\n", N, REPS, s);
    free(xs); free(ys);
    return 0;
}
