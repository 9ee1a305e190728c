/* C twin of buf_fill.cairn: calloc, the same fill loop without bounds checks, free. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1048576
#define REPS 120

int main(void) {
    uint64_t checksum = 0;
    for (size_t r = 0; r < REPS; r++) {
        uint64_t *b = calloc(N, sizeof *b);
        if (b == NULL) return 1;
        for (size_t i = 0; i < N; i++) {
            b[i] = (uint64_t)r + (uint64_t)i * 3;
        }
        checksum += b[(r * 7919) % N];
        free(b);
    }
    printf("buf_fill n=%d reps=%d checksum=%llu\n", N, REPS, (unsigned long long)checksum);
    return 0;
}
