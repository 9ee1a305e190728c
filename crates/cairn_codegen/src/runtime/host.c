/* The CAIRN runtime: what every built program links (language §13, tools.md §3.2).
 *
 * Printing formats one print call into a 4096-byte buffer and writes it with write(2): no stdio
 * buffering, so everything printed before a trap is out. Floats print with the fewest digits that
 * read back to the same value of their type, laid out as ECMAScript's Number::toString lays such
 * digits out (language §13.1). A failed guard writes one line naming the guard and its place,
 * then aborts (SIGABRT, status 134); assert and assert_eq write `assertion failed at FILE:LINE`,
 * the message and, for assert_eq, both values. A stack overflow is caught on an alternate stack
 * and reported as `stack overflow in <function>` (the function read from the executable's own
 * symbol table), then aborts like a failed guard (status 134). Nothing here allocates but the
 * owners' storage: `cairn_rt_alloc` hands out zeroed blocks (calloc), or NULL when the machine
 * has no room (the program's allocation guard reports it), and `cairn_rt_free` gives them back.
 * Parallel regions run on one pool of lanes (`cairn_rt_parallel`, below). */

#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ucontext.h>
#include <time.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char cairn_buffer[4096];
static size_t cairn_used;
static int cairn_fd = 1;

static void cairn_write_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, data, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return; /* a refused write ends this print silently */
        }
        data += written;
        length -= (size_t)written;
    }
}

static void cairn_flush(void) {
    cairn_write_all(cairn_fd, cairn_buffer, cairn_used);
    cairn_used = 0;
}

/* format (language §13.1) renders with the same `cairn_rt_put_*` calls as a print, between
 * `cairn_rt_format_begin` and `cairn_rt_format_end`: meanwhile they append to a scratch text on
 * the heap instead of the line buffer. The scratch is the calling thread's own (a lane may call a
 * helper that formats), kept for its next format (it holds the text until the program's
 * `std.vec.extend_from` has copied it) and freed when the thread ends: at exit for the main
 * thread, by a key's destructor for a lane. */
static __thread int cairn_formatting;
static __thread char *cairn_text;
static __thread size_t cairn_text_used, cairn_text_room;
static pthread_key_t cairn_text_key;

_Noreturn void cairn_rt_trap(const char *message);

static void cairn_text_release(void *text) { free(text); }

static void cairn_text_free_main(void) {
    free(cairn_text);
    cairn_text = NULL;
    cairn_text_room = 0;
}

/* Made before `main`, before any lane exists (so every thread sees the key made). */
__attribute__((constructor)) static void cairn_text_keys(void) {
    if (pthread_key_create(&cairn_text_key, cairn_text_release) != 0) cairn_rt_trap("allocation guard failed in format");
    atexit(cairn_text_free_main);
}

static void cairn_text_put(const char *data, size_t length) {
    if (length == 0) return;
    if (length > cairn_text_room - cairn_text_used) {
        size_t room = cairn_text_room < 256 ? 256 : cairn_text_room;
        while (room - cairn_text_used < length) {
            if (room > SIZE_MAX / 2) cairn_rt_trap("allocation guard failed in format");
            room *= 2;
        }
        char *grown = realloc(cairn_text, room);
        if (grown == NULL) cairn_rt_trap("allocation guard failed in format");
        cairn_text = grown;
        cairn_text_room = room;
        /* The key's destructor frees a lane's scratch when its thread ends; the main thread's is
         * freed at exit (a destructor does not run for it). */
        pthread_setspecific(cairn_text_key, grown);
    }
    memcpy(cairn_text + cairn_text_used, data, length);
    cairn_text_used += length;
}

static void cairn_put(const char *data, size_t length) {
    if (cairn_formatting) {
        cairn_text_put(data, length);
        return;
    }
    while (length > 0) {
        if (cairn_used == sizeof cairn_buffer) cairn_flush();
        size_t room = sizeof cairn_buffer - cairn_used;
        size_t n = length < room ? length : room;
        memcpy(cairn_buffer + cairn_used, data, n);
        cairn_used += n;
        data += n;
        length -= n;
    }
}

static void cairn_puts(const char *text) { cairn_put(text, strlen(text)); }

void cairn_rt_print_begin(int fd) {
    cairn_fd = fd;
    cairn_used = 0;
}

void cairn_rt_print_end(int fd, int newline) {
    cairn_fd = fd;
    if (newline) cairn_put("\n", 1);
    cairn_flush();
}

void cairn_rt_format_begin(void) {
    cairn_formatting = 1;
    cairn_text_used = 0;
}

/* The text formatted since `cairn_rt_format_begin` (its length is `cairn_rt_format_len`). */
const uint8_t *cairn_rt_format_end(void) {
    cairn_formatting = 0;
    return (const uint8_t *)cairn_text;
}

uint64_t cairn_rt_format_len(void) { return (uint64_t)cairn_text_used; }

void cairn_rt_put_u64(uint64_t value) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    char out[24];
    for (int i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    cairn_put(out, (size_t)n);
}

void cairn_rt_put_i64(int64_t value) {
    if (value < 0) {
        cairn_put("-", 1);
        cairn_rt_put_u64((uint64_t)0 - (uint64_t)value);
    } else {
        cairn_rt_put_u64((uint64_t)value);
    }
}

void cairn_rt_put_bool(int value) { cairn_puts(value ? "true" : "false"); }

void cairn_rt_put_byte(int value) {
    char byte = (char)value;
    cairn_put(&byte, 1);
}

void cairn_rt_put_bytes(const uint8_t *data, uint64_t length) { cairn_put((const char *)data, (size_t)length); }

/* Writes the shortest round-trip digits of `value` (read back as a float when `single`) in
 * ECMAScript's layout into `out`. */
static void cairn_format_float(double value, int single, char *out) {
    if (isnan(value)) {
        strcpy(out, signbit(value) ? "-nan" : "nan");
        return;
    }
    if (isinf(value)) {
        strcpy(out, value < 0 ? "-inf" : "inf");
        return;
    }
    if (value == 0) {
        strcpy(out, signbit(value) ? "-0" : "0");
        return;
    }
    char text[64];
    int limit = single ? 9 : 17;
    for (int precision = 1; precision <= limit; precision++) {
        snprintf(text, sizeof text, "%.*e", precision - 1, value);
        if (single ? strtof(text, NULL) == (float)value : strtod(text, NULL) == value) break;
    }
    /* text: [-]d[.ddd]e(+|-)XX */
    const char *p = text;
    int negative = 0;
    if (*p == '-') {
        negative = 1;
        p++;
    }
    char digits[32];
    int k = 0;
    while (*p && *p != 'e') {
        if (*p != '.') digits[k++] = *p;
        p++;
    }
    while (k > 1 && digits[k - 1] == '0') k--;
    int exponent = atoi(p + 1);
    int n = exponent + 1; /* value = 0.d1d2...dk x 10^n */
    char *o = out;
    if (negative) *o++ = '-';
    if (k <= n && n <= 21) {
        memcpy(o, digits, (size_t)k);
        o += k;
        for (int i = k; i < n; i++) *o++ = '0';
    } else if (0 < n && n <= 21) {
        memcpy(o, digits, (size_t)n);
        o += n;
        *o++ = '.';
        memcpy(o, digits + n, (size_t)(k - n));
        o += k - n;
    } else if (-6 < n && n <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -n; i++) *o++ = '0';
        memcpy(o, digits, (size_t)k);
        o += k;
    } else {
        *o++ = digits[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(k - 1));
            o += k - 1;
        }
        o += sprintf(o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
    *o = 0;
}

void cairn_rt_put_f64(double value) {
    char out[64];
    cairn_format_float(value, 0, out);
    cairn_puts(out);
}

void cairn_rt_put_f32(float value) {
    char out[64];
    cairn_format_float((double)value, 1, out);
    cairn_puts(out);
}

/* A heap owner's storage (language §22.1): `count` zeroed elements of `size` bytes, NULL for
 * none. NULL also answers a request the machine cannot meet (the byte count overflows, or calloc
 * has no room): the caller's allocation guard then stops the program with its place. */
void *cairn_rt_alloc(uint64_t count, uint64_t size) {
    if (count == 0) return NULL;
    if (size == 0) size = 1; /* elements of no size still get distinct addresses */
    if (count > (uint64_t)INT64_MAX / size) return NULL;
    return calloc((size_t)count, (size_t)size);
}

/* Defined by the device half of the runtime (device.c), linked only into programs built for a
 * GPU: it gives a device block back to the driver and answers 1, or answers 0 for host memory. */
extern int cairn_device_release(void *block) __attribute__((weak));

void cairn_rt_free(void *block) {
    if (cairn_device_release != NULL && cairn_device_release(block)) return;
    free(block);
}

/* ----- what std.sys reads of the C library (language §30) ---------------------------------
 * The calling thread's errno, and the clocks as nanosecond counts (the original reads errno's
 * address with `mmio` and fills a timespec; neither is built, so the runtime answers). */
int32_t cairn_rt_errno(void) { return errno; }

static uint64_t cairn_clock_ns(clockid_t clock) {
    struct timespec now;
    if (clock_gettime(clock, &now) != 0) return 0;
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

uint64_t cairn_rt_monotonic_ns(void) { return cairn_clock_ns(CLOCK_MONOTONIC); }
uint64_t cairn_rt_wall_ns(void) { return cairn_clock_ns(CLOCK_REALTIME); }

/* Sleeps at least `ns` nanoseconds, resuming after a signal: 0. */
int32_t cairn_rt_sleep_ns(uint64_t ns) {
    struct timespec left = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
    return 0;
}

/* ----- the lane pool (language §24) ------------------------------------------------------
 * One pool for the process: as many lanes as cores (or CAIRN_LANES), the calling thread being
 * one of them, created by the first region large enough to use it and reused by every later one
 * (between jobs a lane spins briefly, looking only under the lock, then sleeps).
 * A region hands the pool one job: a lane function `fn(env, lo, hi)` over `0..count`, split into
 * claims taken in index order under one mutex; each lane (the caller included) takes claims until
 * none is left, and the caller returns once every claim has run. A region of less than 16,384
 * elements of work, or a pool of one lane, is the plain loop on the calling thread. Without a
 * plan a claim is at least 8,192 elements of work and a quarter of a lane's share; a plan's grain
 * sets it in indices, and its
 * lane count caps how many lanes join. Lanes never race (the checker's lane rules), so claims
 * may run in any order on any lane: the split never changes a result. Only mutexes and
 * condition variables order the pool, so helgrind and ThreadSanitizer understand it. A guard
 * failing in a lane aborts the whole process with the guard's message, and a stack overflow in a
 * lane is reported as on the calling thread (each lane has its own signal stack). */

typedef void (*cairn_lane_fn)(void *env, uint64_t lo, uint64_t hi);

#define CAIRN_SMALL_REGION 16384u
#define CAIRN_CLAIM_WORK 8192u
#define CAIRN_MAX_LANES 1024

static pthread_mutex_t cairn_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cairn_pool_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t cairn_pool_idle = PTHREAD_COND_INITIALIZER;
static int cairn_pool_lanes; /* 0: not yet known */
static int cairn_pool_started;
static uint64_t cairn_job_generation;
static struct {
    cairn_lane_fn fn;
    void *env;
    uint64_t count, next, claim;
    int seats;   /* pool lanes that may still join (a plan's `lanes` minus the caller) */
    int running; /* claims being run */
} cairn_job;

static int cairn_lane_count(void) {
    const char *text = getenv("CAIRN_LANES");
    long lanes = 0;
    if (text != NULL && *text != 0) {
        char *end = NULL;
        lanes = strtol(text, &end, 10);
        if (end == text || *end != 0 || lanes < 1) lanes = 0;
    }
    if (lanes == 0) lanes = sysconf(_SC_NPROCESSORS_ONLN);
    if (lanes < 1) lanes = 1;
    if (lanes > CAIRN_MAX_LANES) lanes = CAIRN_MAX_LANES;
    return (int)lanes;
}

/* Takes and runs claims of the current job until none is left; called with the lock held,
 * returns with it held. */
static void cairn_run_claims(void) {
    while (cairn_job.next < cairn_job.count) {
        uint64_t lo = cairn_job.next;
        uint64_t left = cairn_job.count - lo;
        uint64_t hi = lo + (cairn_job.claim < left ? cairn_job.claim : left);
        cairn_job.next = hi;
        cairn_job.running += 1;
        cairn_lane_fn fn = cairn_job.fn;
        void *env = cairn_job.env;
        pthread_mutex_unlock(&cairn_pool_lock);
        fn(env, lo, hi);
        pthread_mutex_lock(&cairn_pool_lock);
        cairn_job.running -= 1;
    }
    if (cairn_job.running == 0) pthread_cond_broadcast(&cairn_pool_idle);
}

/* A short busy wait, kind to a sibling hyperthread. */
static void cairn_pause(int times) {
    for (int i = 0; i < times; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

/* Waits, holding the lock, for a job after `seen`: first a short spin that looks only under
 * the lock (try-lock, so a spinning lane never makes the caller wait), since regions often
 * follow each other closely; then asleep on the condition variable. */
static void cairn_wait_for_job(uint64_t seen) {
    for (int spin = 0; spin < 2000 && cairn_job_generation == seen; spin++) {
        pthread_mutex_unlock(&cairn_pool_lock);
        cairn_pause(16);
        while (pthread_mutex_trylock(&cairn_pool_lock) != 0) cairn_pause(1);
    }
    while (cairn_job_generation == seen) pthread_cond_wait(&cairn_pool_wake, &cairn_pool_lock);
}

/* Each lane's own stack for the fault handler (below), kept so that the blocks stay reachable
 * for as long as the lanes live. */
#define CAIRN_SIGNAL_STACK (64 * 1024)
static void *cairn_lane_signal_stacks[CAIRN_MAX_LANES];

static void *cairn_lane_main(void *slot) {
    /* A stack overflow in a lane is reported like one on the calling thread: the handler needs
     * an alternate stack on every thread that may overflow. */
    void **kept = (void **)slot;
    *kept = malloc(CAIRN_SIGNAL_STACK);
    if (*kept != NULL) {
        stack_t alternate = {.ss_sp = *kept, .ss_size = CAIRN_SIGNAL_STACK, .ss_flags = 0};
        sigaltstack(&alternate, NULL);
    }
    uint64_t seen = 0;
    pthread_mutex_lock(&cairn_pool_lock);
    for (;;) {
        cairn_wait_for_job(seen);
        seen = cairn_job_generation;
        if (cairn_job.seats <= 0) continue;
        cairn_job.seats -= 1;
        cairn_run_claims();
    }
    return NULL;
}

static void cairn_pool_start(void) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* 2 MiB: lane stacks count against `cairn run`'s address-space limit on a many-core machine,
     * and a lane that recurses past it is reported like any stack overflow. */
    pthread_attr_setstacksize(&attr, 2u << 20);
    for (int i = 1; i < cairn_pool_lanes; i++) {
        pthread_t thread;
        if (pthread_create(&thread, &attr, cairn_lane_main, &cairn_lane_signal_stacks[i]) != 0) {
            cairn_pool_lanes = i; /* fewer lanes: still correct */
            break;
        }
    }
    pthread_attr_destroy(&attr);
    cairn_pool_started = 1;
}

void cairn_rt_parallel(cairn_lane_fn fn, void *env, uint64_t count, uint64_t work, uint64_t grain, int32_t lanes) {
    if (count == 0) return;
    pthread_mutex_lock(&cairn_pool_lock);
    if (cairn_pool_lanes == 0) cairn_pool_lanes = cairn_lane_count();
    int limit = cairn_pool_lanes;
    if (lanes > 0 && lanes < limit) limit = lanes;
    /* Small regions, a pool of one lane, or a job already running (never, by the lane rules,
     * but then the plain loop is still right): the calling thread runs every index. */
    if (work < CAIRN_SMALL_REGION || limit <= 1 || cairn_job.next < cairn_job.count || cairn_job.running > 0) {
        pthread_mutex_unlock(&cairn_pool_lock);
        fn(env, 0, count);
        return;
    }
    if (!cairn_pool_started) cairn_pool_start();
    if (limit > cairn_pool_lanes) limit = cairn_pool_lanes;
    uint64_t claim = grain;
    if (claim == 0) {
        /* At least 8,192 elements of work per claim (ceil(8192 * count / work) indices), and no
         * smaller than a quarter of each lane's share, so that a large region takes a few claims
         * per lane rather than hundreds of trips through the lock. */
        uint64_t per = work / count; /* elements per index, at least 1 */
        if (per == 0) per = 1;
        claim = (CAIRN_CLAIM_WORK + per - 1) / per;
        uint64_t share = count / ((uint64_t)limit * 4);
        if (share > claim) claim = share;
    }
    if (claim == 0) claim = 1;
    cairn_job.fn = fn;
    cairn_job.env = env;
    cairn_job.count = count;
    cairn_job.next = 0;
    cairn_job.claim = claim;
    cairn_job.seats = limit - 1;
    cairn_job.running = 0;
    cairn_job_generation += 1;
    pthread_cond_broadcast(&cairn_pool_wake);
    cairn_run_claims();
    /* The last claims are ending on other lanes: spin a little (they are usually about done)
     * before sleeping until they are. */
    for (int spin = 0; spin < 4000 && cairn_job.running > 0; spin++) {
        pthread_mutex_unlock(&cairn_pool_lock);
        cairn_pause(16);
        while (pthread_mutex_trylock(&cairn_pool_lock) != 0) cairn_pause(1);
    }
    while (cairn_job.running > 0) pthread_cond_wait(&cairn_pool_idle, &cairn_pool_lock);
    cairn_job.seats = 0;
    pthread_mutex_unlock(&cairn_pool_lock);
}

/* The first failure reports and aborts; a lane failing at the same moment finds the flag set and
 * waits for the abort to end the process, so exactly one line is written. (A flag, not a lock: a
 * lock held through abort() is what a thread checker reports.) */
static int cairn_failed;

static void cairn_first_failure(void) {
    if (__atomic_exchange_n(&cairn_failed, 1, __ATOMIC_SEQ_CST) != 0) {
        for (;;) pause();
    }
}

/* A failed guard: one line on standard error, then SIGABRT. */
_Noreturn void cairn_rt_trap(const char *message) {
    cairn_first_failure();
    char line[512];
    int n = snprintf(line, sizeof line, "%s\n", message);
    cairn_write_all(2, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
    abort();
}

static size_t cairn_assert_line(char *line, size_t size, const char *site, const uint8_t *why, uint64_t length) {
    int n = snprintf(line, size, "%s", site);
    size_t used = n < (int)size ? (size_t)n : size - 1;
    if (why != NULL && used + 2 + length < size) {
        memcpy(line + used, ": ", 2);
        memcpy(line + used + 2, why, (size_t)length);
        used += 2 + (size_t)length;
        line[used] = 0;
    }
    return used;
}

_Noreturn void cairn_rt_assert_failed(const char *site, const uint8_t *why, uint64_t length) {
    cairn_first_failure();
    char line[1024];
    size_t used = cairn_assert_line(line, sizeof line - 1, site, why, length);
    line[used++] = '\n';
    cairn_write_all(2, line, used);
    abort();
}

static _Noreturn void cairn_assert_eq_failed(const char *site, const uint8_t *why, uint64_t length,
                                              const char *left, const char *right) {
    cairn_first_failure();
    char line[1200];
    size_t used = cairn_assert_line(line, 1000, site, why, length);
    int n = snprintf(line + used, sizeof line - used, ": left %s, right %s\n", left, right);
    used += n < (int)(sizeof line - used) ? (size_t)n : sizeof line - used - 1;
    cairn_write_all(2, line, used);
    abort();
}

_Noreturn void cairn_rt_assert_eq_i64(const char *site, const uint8_t *why, uint64_t length, int64_t a, int64_t b) {
    char left[32], right[32];
    snprintf(left, sizeof left, "%lld", (long long)a);
    snprintf(right, sizeof right, "%lld", (long long)b);
    cairn_assert_eq_failed(site, why, length, left, right);
}

_Noreturn void cairn_rt_assert_eq_u64(const char *site, const uint8_t *why, uint64_t length, uint64_t a, uint64_t b) {
    char left[32], right[32];
    snprintf(left, sizeof left, "%llu", (unsigned long long)a);
    snprintf(right, sizeof right, "%llu", (unsigned long long)b);
    cairn_assert_eq_failed(site, why, length, left, right);
}

_Noreturn void cairn_rt_assert_eq_f64(const char *site, const uint8_t *why, uint64_t length, double a, double b) {
    char left[40], right[40];
    snprintf(left, sizeof left, "%.17g", a);
    snprintf(right, sizeof right, "%.17g", b);
    cairn_assert_eq_failed(site, why, length, left, right);
}

_Noreturn void cairn_rt_assert_eq_f32(const char *site, const uint8_t *why, uint64_t length, float a, float b) {
    char left[40], right[40];
    snprintf(left, sizeof left, "%.9g", (double)a);
    snprintf(right, sizeof right, "%.9g", (double)b);
    cairn_assert_eq_failed(site, why, length, left, right);
}

_Noreturn void cairn_rt_assert_eq_bool(const char *site, const uint8_t *why, uint64_t length, int a, int b) {
    cairn_assert_eq_failed(site, why, length, a ? "true" : "false", b ? "true" : "false");
}

/* The test runner's argument: the index of the test to run. */
int64_t cairn_rt_test_index(int argc, char **argv, int64_t count) {
    if (argc < 2) {
        cairn_write_all(2, "usage: PROGRAM TEST-INDEX\n", 26);
        exit(2);
    }
    char *end = NULL;
    long long index = strtoll(argv[1], &end, 10);
    if (end == argv[1] || *end != 0 || index < 0 || index >= count) {
        cairn_write_all(2, "no such test\n", 13);
        exit(2);
    }
    return (int64_t)index;
}

/* ----- stack overflow ----------------------------------------------------------------------
 * A guard page below the stack makes an overflowing call fault; the handler runs on a stack of
 * its own, recognises the fault as an overflow when it lies just below the interrupted stack
 * pointer (within the largest frame a function may have, language §12), names the function the
 * program counter is in, and aborts. Any other fault is re-raised with the default action. The
 * name is looked up with open/read only (async-signal-safe) in /proc/self/exe's .symtab. */

extern const char __executable_start[] __attribute__((weak));

static char cairn_signal_stack[64 * 1024];

static int cairn_read_at(int fd, off_t offset, void *into, size_t length) {
    if (lseek(fd, offset, SEEK_SET) != offset) return 0;
    size_t done = 0;
    while (done < length) {
        ssize_t n = read(fd, (char *)into + done, length - done);
        if (n <= 0) return 0;
        done += (size_t)n;
    }
    return 1;
}

/* Writes the name of the function holding `pc` into `out` ("?" when unknown), without the
 * `cairn.` prefix of the program's own symbols. */
static void cairn_function_at(uintptr_t pc, char *out, size_t size) {
    static Elf64_Shdr sections[128];
    static Elf64_Sym symbols[256];
    out[0] = '?';
    out[1] = 0;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    Elf64_Ehdr header;
    if (!cairn_read_at(fd, 0, &header, sizeof header) || header.e_shnum == 0 || header.e_shnum > 128 ||
        header.e_shentsize != sizeof(Elf64_Shdr) ||
        !cairn_read_at(fd, (off_t)header.e_shoff, sections, sizeof(Elf64_Shdr) * header.e_shnum)) {
        close(fd);
        return;
    }
    /* A position-independent executable is loaded at __executable_start; symbols are relative. */
    uintptr_t base = header.e_type == ET_DYN && __executable_start ? (uintptr_t)__executable_start : 0;
    uintptr_t best_start = 0;
    uint32_t best_name = 0;
    int best_strtab = -1;
    for (int s = 0; s < header.e_shnum; s++) {
        if (sections[s].sh_type != SHT_SYMTAB || sections[s].sh_entsize != sizeof(Elf64_Sym)) continue;
        size_t count = sections[s].sh_size / sizeof(Elf64_Sym);
        for (size_t first = 0; first < count; first += 256) {
            size_t chunk = count - first < 256 ? count - first : 256;
            if (!cairn_read_at(fd, (off_t)(sections[s].sh_offset + first * sizeof(Elf64_Sym)), symbols,
                               chunk * sizeof(Elf64_Sym))) break;
            for (size_t i = 0; i < chunk; i++) {
                if (ELF64_ST_TYPE(symbols[i].st_info) != STT_FUNC || symbols[i].st_value == 0) continue;
                uintptr_t start = base + symbols[i].st_value;
                uintptr_t end = start + (symbols[i].st_size ? symbols[i].st_size : 1);
                if (pc >= start && pc < end && start >= best_start) {
                    best_start = start;
                    best_name = symbols[i].st_name;
                    best_strtab = (int)sections[s].sh_link;
                }
            }
        }
    }
    if (best_strtab >= 0 && best_strtab < header.e_shnum) {
        char name[256];
        size_t length = sizeof name - 1;
        if (best_name + length > sections[best_strtab].sh_size) length = sections[best_strtab].sh_size - best_name;
        if (cairn_read_at(fd, (off_t)(sections[best_strtab].sh_offset + best_name), name, length)) {
            name[length] = 0;
            const char *shown = strncmp(name, "cairn.", 6) == 0 ? name + 6 : name;
            size_t n = strnlen(shown, size - 1);
            memcpy(out, shown, n);
            out[n] = 0;
        }
    }
    close(fd);
}

static void cairn_on_fault(int number, siginfo_t *info, void *context) {
    ucontext_t *uc = (ucontext_t *)context;
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t address = (uintptr_t)info->si_addr;
    if (address <= sp + 4096 && address + 256 * 1024 >= sp) {
        cairn_first_failure(); /* two lanes overflowing at once: one line */
        char function[200];
        cairn_function_at(pc, function, sizeof function);
        char line[256];
        int n = snprintf(line, sizeof line, "stack overflow in %s\n", function);
        cairn_write_all(2, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
        signal(SIGABRT, SIG_DFL);
        abort();
    }
    /* Not an overflow: the default action, as if no handler were installed. */
    signal(number, SIG_DFL);
    raise(number);
}

__attribute__((constructor)) static void cairn_install_stack_guard(void) {
    stack_t alternate = {.ss_sp = cairn_signal_stack, .ss_size = sizeof cairn_signal_stack, .ss_flags = 0};
    if (sigaltstack(&alternate, NULL) != 0) return;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = cairn_on_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
}
