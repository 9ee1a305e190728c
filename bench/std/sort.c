/* C twins of sort.cairn and radix.cairn: qsort with a comparator (SORT=1), an LSD radix sort
 * eight bits a pass stopping at the largest key's last digit (SORT=2), or the heapsort std.sort
 * is (SORT=3: the classic sift building the heap, Floyd's sift climbing past equals sorting it)
 * — the same algorithm in C, to tell the algorithm's cost from the compiler's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define N @N@

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void swap2(uint64_t *a, size_t i, size_t j) { uint64_t t = a[i]; a[i] = a[j]; a[j] = t; }

static void sift(uint64_t *a, size_t at, size_t end) {
    for (;;) {
        size_t left = 2 * at + 1;
        if (left >= end) return;
        size_t child = left;
        if (left + 1 < end && a[left] < a[left + 1]) child = left + 1;
        if (!(a[at] < a[child])) return;
        swap2(a, at, child);
        at = child;
    }
}

static void settle(uint64_t *a, size_t end) {
    size_t at = 0, left = 1;
    while (left < end) {
        size_t child = left;
        if (left + 1 < end && a[left] < a[left + 1]) child = left + 1;
        swap2(a, at, child);
        at = child;
        left = 2 * at + 1;
    }
    while (at > 0) {
        size_t parent = (at - 1) / 2;
        if (a[at] < a[parent]) return;
        swap2(a, parent, at);
        at = parent;
    }
}

static void heapsort(uint64_t *a, size_t n) {
    if (n < 2) return;
    for (size_t start = n / 2; start > 0;) sift(a, --start, n);
    for (size_t end = n; end > 1;) {
        end--;
        swap2(a, 0, end);
        settle(a, end);
    }
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
#elif SORT == 3
    heapsort(xs, N);
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
