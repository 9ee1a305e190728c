/* C twin of search.cairn: the same bytes, the pattern from the first argument, the same naive
   comparison at every position. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t occurrences(size_t n, const uint8_t *text, size_t m, const uint8_t *pat) {
  uint64_t found = 0;
  if (m == 0 || m > n) return 0;
  for (size_t i = 0; i < n - m + 1; i++) {
    size_t j = 0;
    while (j < m && text[i + j] == pat[j]) j++;
    if (j == m) found++;
  }
  return found;
}

int main(int argc, char **argv) {
  const char *pattern = argc > 1 ? argv[1] : "acgta";
  size_t m = strlen(pattern);
  size_t n = 4194304;
  uint8_t *bytes = calloc(n, 1);
  const char *letters = "acgt";
  uint32_t x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    bytes[i] = (uint8_t)letters[x >> 30];
  }
  size_t reps = 30;
  uint64_t total = 0;
  for (size_t r = 0; r < reps; r++) total += occurrences(n, bytes, m, (const uint8_t *)pattern);
  printf("search n=%zu m=%zu reps=%zu found=%llu\n", n, m, reps, (unsigned long long)total);
  free(bytes);
  return 0;
}
