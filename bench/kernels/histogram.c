/* C twin of histogram.cairn: the same keys, bins from the first argument, the same counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void fill(size_t n, uint32_t *keys) {
  uint32_t x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    keys[i] = x >> 8;
  }
}

static void count(size_t n, const uint32_t *keys, size_t bins, uint64_t *counts) {
  for (size_t i = 0; i < n; i++) counts[(size_t)keys[i] % bins] += 1;
}

int main(int argc, char **argv) {
  size_t bins = argc > 1 ? strtoull(argv[1], 0, 10) : 1000;
  size_t n = 4194304;
  uint32_t *keys = calloc(n, sizeof *keys);
  uint64_t *counts = calloc(bins, sizeof *counts);
  fill(n, keys);
  size_t reps = 40;
  for (size_t r = 0; r < reps; r++) count(n, keys, bins, counts);
  uint64_t checksum = 0;
  for (size_t b = 0; b < bins; b++) checksum += counts[b] * (uint64_t)(b % 7 + 1);
  printf("histogram n=%zu bins=%zu reps=%zu checksum=%llu\n", n, bins, reps, (unsigned long long)checksum);
  free(keys);
  free(counts);
  return 0;
}
