/* C twin of wordfreq.cairn: the same algorithm (read all of stdin, lower-case, runs of ASCII
 * letters, an open-addressing map of FNV-1a hashed byte strings with linear probing grown past
 * 3/4, then a sort by count descending and word). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { unsigned char *word; size_t len; uint64_t count; int live; } Entry;

static Entry *table;
static size_t slots, used;

static uint64_t fnv(const unsigned char *s, size_t n) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) { h ^= s[i]; h *= 1099511628211ull; }
    return h;
}

static size_t home(uint64_t h) { return (size_t)((h ^ (h >> 29)) & (slots - 1)); }

static void grow(void) {
    size_t old = slots;
    Entry *was = table;
    slots = old ? old * 2 : 8;
    table = calloc(slots, sizeof *table);
    for (size_t i = 0; i < old; i++) {
        if (!was[i].live) continue;
        size_t at = home(fnv(was[i].word, was[i].len));
        while (table[at].live) at = (at + 1) & (slots - 1);
        table[at] = was[i];
    }
    free(was);
}

static void count(const unsigned char *w, size_t n) {
    if ((used + 1) * 4 > slots * 3) grow();
    size_t at = home(fnv(w, n));
    while (table[at].live) {
        if (table[at].len == n && memcmp(table[at].word, w, n) == 0) { table[at].count++; return; }
        at = (at + 1) & (slots - 1);
    }
    table[at].word = malloc(n ? n : 1);
    memcpy(table[at].word, w, n);
    table[at].len = n;
    table[at].count = 1;
    table[at].live = 1;
    used++;
}

static int order(const void *pa, const void *pb) {
    const Entry *a = *(Entry *const *)pa, *b = *(Entry *const *)pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->word, b->word, n);
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

int main(void) {
    size_t cap = 1 << 16, len = 0;
    unsigned char *in = malloc(cap);
    for (;;) {
        if (cap - len < 65536) { cap *= 2; in = realloc(in, cap); }
        ssize_t got = read(0, in + len, cap - len);
        if (got <= 0) break;
        len += (size_t)got;
    }
    for (size_t i = 0; i < len; i++) if (in[i] >= 'A' && in[i] <= 'Z') in[i] += 32;
    size_t i = 0;
    while (i < len) {
        while (i < len && !(in[i] >= 'a' && in[i] <= 'z')) i++;
        size_t start = i;
        while (i < len && in[i] >= 'a' && in[i] <= 'z') i++;
        if (i > start) count(in + start, i - start);
    }
    Entry **all = malloc((used ? used : 1) * sizeof *all);
    size_t k = 0;
    for (size_t s = 0; s < slots; s++) if (table[s].live) all[k++] = &table[s];
    qsort(all, k, sizeof *all, order);
    printf("distinct %zu\n", used);
    for (size_t t = 0; t < k && t < 10; t++) printf("%.*s %llu\n", (int)all[t]->len, all[t]->word, (unsigned long long)all[t]->count);
    return 0;
}
