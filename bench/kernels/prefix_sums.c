/* C twin of prefix_sums.cairn: the same scans, plain (unchecked) additions. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#define N 4096
#define REPS 200000

static void prefix_sums(size_t n, const uint64_t *src, uint64_t *dst) {
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += src[i];
        dst[i] = acc;
    }
}

int main(void) {
    uint64_t src[N] = {0};
    uint64_t dst[N] = {0};
    for (size_t i = 0; i < N; i++) {
        src[i] = (uint64_t)(i % 1000);
    }
    uint64_t checksum = 0;
    for (size_t r = 0; r < REPS; r++) {
        src[r % N] += 1;
        prefix_sums(N, src, dst);
        checksum += dst[N - 1];
    }
    printf("prefix_sums n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)checksum);
    return 0;
}
