/* C twin of matmul_n.cairn: the same loops over heap arrays, n from the first argument. */
#include <stdio.h>
#include <stdlib.h>

static void multiply_add(size_t n, const double *a, const double *b, double *c) {
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < n; k++) {
      double aik = a[i * n + k];
      for (size_t j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
    }
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 96;
  size_t nn = n * n;
  double *a = calloc(nn, sizeof *a), *b = calloc(nn, sizeof *b), *c = calloc(nn, sizeof *c);
  for (size_t i = 0; i < nn; i++) {
    a[i] = (double)(i % 7);
    b[i] = (double)(i % 5);
  }
  size_t reps = 1500;
  for (size_t r = 0; r < reps; r++) multiply_add(n, a, b, c);
  double total = 0.0;
  for (size_t i = 0; i < nn; i++) total += c[i];
  printf("matmul_n n=%zu reps=%zu checksum=%llu\n", n, reps, (unsigned long long)total);
  free(a); free(b); free(c);
  return 0;
}
