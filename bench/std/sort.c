/* C twins of sort.cairn and radix.cairn: qsort with a comparator (SORT=1) or an LSD radix sort
 * eight bits a pass stopping at the largest key's last digit (SORT=2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define N @N@

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t *radix(uint64_t *xs, uint64_t *scratch, size_t n) {
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) if (xs[i] > top) top = xs[i];
    for (unsigned shift = 0; shift < 64 && (top >> shift) != 0; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[(xs[i] >> shift) & 255]++;
        size_t at = 0;
        for (int d = 0; d < 256; d++) { size_t c = count[d]; count[d] = at; at += c; }
        for (size_t i = 0; i < n; i++) scratch[count[(xs[i] >> shift) & 255]++] = xs[i];
        uint64_t *t = xs; xs = scratch; scratch = t;
    }
    return xs;
}

int main(void) {
    uint64_t *xs = malloc(N * sizeof *xs), *scratch = malloc(N * sizeof *xs);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < N; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; xs[i] = x; }
#if SORT == 1
    qsort(xs, N, sizeof *xs, cmp);
    uint64_t *sorted = xs;
#else
    uint64_t *sorted = radix(xs, scratch, N);
#endif
    uint64_t check = 0;
    for (size_t i = 0; i < N; i++) check = check * 31 + sorted[i];
    printf("sorted %d checksum %llu\n", N, (unsigned long long)check);
    free(xs); free(scratch);
    return 0;
}
