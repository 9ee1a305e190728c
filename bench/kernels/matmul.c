/* C twin of matmul.cairn: 64x64 double multiply-accumulate, no checks. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#define D 64
#define CELLS 4096
#define REPS 4000

static void multiply_add(const double *a, const double *b, double *c) {
    for (size_t i = 0; i < D; i++) {
        for (size_t k = 0; k < D; k++) {
            double aik = a[i * D + k];
            for (size_t j = 0; j < D; j++) {
                c[i * D + j] += aik * b[k * D + j];
            }
        }
    }
}

static uint64_t run(const double *a, const double *b) {
    double c[CELLS] = {0};
    for (size_t r = 0; r < REPS; r++) {
        multiply_add(a, b, c);
    }
    double total = 0.0;
    for (size_t i = 0; i < CELLS; i++) {
        total += c[i];
    }
    return (uint64_t)total;
}

int main(void) {
    double a[CELLS] = {0};
    double b[CELLS] = {0};
    for (size_t i = 0; i < CELLS; i++) {
        a[i] = (double)(i % 7);
        b[i] = (double)(i % 5);
    }
    uint64_t checksum = run(a, b);
    printf("matmul d=%d reps=%d checksum=%llu\n", D, REPS, (unsigned long long)checksum);
    return 0;
}
