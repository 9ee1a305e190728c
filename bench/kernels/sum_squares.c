/* C twin of sum_squares.cairn: the same computation, unsigned wrapping arithmetic. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#define N 1048576
#define REPS 512

static uint64_t sum_squares(size_t n, uint64_t seed) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)i ^ seed;
        s = s + x * x;
    }
    return s;
}

int main(void) {
    uint64_t total = 0;
    for (size_t r = 0; r < REPS; r++) {
        total = total + sum_squares(N, (uint64_t)r);
    }
    printf("sum_squares n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)total);
    return 0;
}
