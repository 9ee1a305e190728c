/* C twin of stencil_n.cairn: the same sweeps over heap grids, w from the first argument. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void smooth(size_t w, size_t h, const double *src, double *dst) {
  for (size_t y = 1; y < h - 1; y++)
    for (size_t x = 1; x < w - 1; x++) {
      size_t i = y * w + x;
      dst[i] = (src[i] + src[i - 1] + src[i + 1] + src[i - w] + src[i + w]) * 0.2;
    }
}

int main(int argc, char **argv) {
  size_t w = argc > 1 ? strtoull(argv[1], 0, 10) : 512;
  size_t n = w * w;
  double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
  for (size_t i = 0; i < n; i++) a[i] = (double)(i % 13);
  size_t reps = 400;
  for (size_t r = 0; r < reps; r++) {
    smooth(w, w, a, b);
    smooth(w, w, b, a);
  }
  double total = 0.0;
  for (size_t i = 0; i < n; i++) total += a[i];
  printf("stencil_n w=%zu reps=%zu checksum=%llu\n", w, reps, (unsigned long long)total);
  free(a);
  free(b);
  return 0;
}
