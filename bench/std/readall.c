/* C twin of readall.cairn: read(2) of standard input in 64 KiB blocks. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    static unsigned char block[65536];
    uint64_t total = 0, sum = 0;
    for (;;) {
        ssize_t got = read(0, block, sizeof block);
        if (got < 0) return 1;
        if (got == 0) break;
        total += (uint64_t)got;
        for (ssize_t i = 0; i < got; i++) sum += block[i];
    }
    printf("bytes %llu sum %llu\n", (unsigned long long)total, (unsigned long long)sum);
    return 0;
}
