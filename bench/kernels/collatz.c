/* C twin of collatz.cairn: plain unsigned arithmetic, no overflow checks. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#define N 1000000

static uint64_t collatz_steps(uint64_t start) {
    uint64_t x = start;
    uint64_t steps = 0;
    while (x != 1) {
        if (x % 2 == 0) {
            x = x / 2;
        } else {
            x = 3 * x + 1;
        }
        steps += 1;
    }
    return steps;
}

int main(void) {
    uint64_t longest = 0, longest_start = 0, total = 0;
    for (size_t n = 1; n < N; n++) {
        uint64_t steps = collatz_steps((uint64_t)n);
        total += steps;
        if (steps > longest) {
            longest = steps;
            longest_start = (uint64_t)n;
        }
    }
    printf("collatz n=%d longest=%llu at=%llu total=%llu\n", N, (unsigned long long)longest,
           (unsigned long long)longest_start, (unsigned long long)total);
    return 0;
}
