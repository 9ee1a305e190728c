/* C twin of prefix_part.cairn: prefix sums over v[lo..n-lo], lo from the first argument. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void prefix(size_t m, uint64_t *v) {
  for (size_t i = 1; i < m; i++) v[i] = v[i] + v[i - 1];
}

int main(int argc, char **argv) {
  size_t lo = argc > 1 ? strtoull(argv[1], 0, 10) : 3;
  size_t n = 1048576;
  size_t hi = n - lo;
  uint64_t *v = calloc(n, sizeof *v);
  size_t reps = 200;
  uint64_t checksum = 0;
  for (size_t r = 0; r < reps; r++) {
    for (size_t i = 0; i < n; i++) v[i] = (uint64_t)((i + r) % 10);
    prefix(hi - lo, v + lo);
    checksum += v[hi - 1] + v[lo + r];
  }
  printf("prefix_part n=%zu lo=%zu reps=%zu checksum=%llu\n", n, lo, reps, (unsigned long long)checksum);
  free(v);
  return 0;
}
