/* C twin of fnv1a.cairn: FNV-1a over the same text, unsigned wrapping multiply. */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#define REPS 800000

static uint64_t fnv1a(uint64_t h0, size_t n, const uint8_t *bytes) {
    uint64_t h = h0;
    for (size_t i = 0; i < n; i++) {
        h = h ^ (uint64_t)bytes[i];
        h = h * 0x100000001b3ULL;
    }
    return h;
}

int main(void) {
    static const char text[] = "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, it was the season of Darkness, it was the spring of hope, it was the winter of despair.";
    size_t n = sizeof text - 1;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t r = 0; r < REPS; r++) {
        h = fnv1a(h, n, (const uint8_t *)text);
    }
    printf("fnv1a bytes=%zu reps=%d hash=%llu\n", n, REPS, (unsigned long long)h);
    return 0;
}
