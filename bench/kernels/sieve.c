/* C twin of sieve.cairn: the same sieve on a 64 KiB stack array, no checks. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#define LIMIT 65536
#define REPS 4000

static uint64_t sieve(size_t n, uint8_t *composite) {
    for (size_t i = 0; i < n; i++) {
        composite[i] = 0;
    }
    size_t i = 2;
    while (i * i < n) {
        if (composite[i] == 0) {
            size_t j = i * i;
            while (j < n) {
                composite[j] = 1;
                j += i;
            }
        }
        i += 1;
    }
    uint64_t count = 0;
    for (size_t k = 2; k < n; k++) {
        if (composite[k] == 0) {
            count += 1;
        }
    }
    return count;
}

int main(void) {
    uint8_t composite[LIMIT] = {0};
    uint64_t total = 0;
    for (size_t r = 0; r < REPS; r++) {
        size_t m = LIMIT - r % 64;
        uint64_t primes = sieve(m, composite);
        total += primes;
    }
    printf("sieve limit=%d reps=%d primes=%llu\n", LIMIT, REPS, (unsigned long long)total);
    return 0;
}
