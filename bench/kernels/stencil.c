/* C twin of stencil.cairn: a 5-point stencil over a 512x512 double grid, sizes passed as
 * parameters to a function the compiler may not inline, no checks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>

#define W 512
#define H 512
#define CELLS 262144
#define REPS 1000

__attribute__((noinline)) static void smooth(size_t w, size_t h, size_t n, const double *src, double *dst) {
    (void)n;
    for (size_t y = 1; y < h - 1; y++) {
        for (size_t x = 1; x < w - 1; x++) {
            size_t i = y * w + x;
            dst[i] = (src[i] + src[i - 1] + src[i + 1] + src[i - w] + src[i + w]) * 0.2;
        }
    }
}

int main(void) {
    double *a = calloc(CELLS, sizeof(double));
    double *b = calloc(CELLS, sizeof(double));
    if (!a || !b) return 1;
    for (size_t i = 0; i < CELLS; i++) {
        a[i] = (double)(i % 13);
    }
    for (size_t r = 0; r < REPS; r++) {
        smooth(W, H, CELLS, a, b);
        smooth(W, H, CELLS, b, a);
    }
    double total = 0.0;
    for (size_t i = 0; i < CELLS; i++) {
        total += a[i];
    }
    printf("stencil w=%d h=%d reps=%d checksum=%llu\n", W, H, REPS, (unsigned long long)(uint64_t)total);
    free(a);
    free(b);
    return 0;
}
