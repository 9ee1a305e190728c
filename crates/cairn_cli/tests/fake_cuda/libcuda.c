/* A stand-in for NVIDIA's driver library (libcuda.so.1), for the GPU build's tests on machines
 * without a GPU (crates/cairn_cli/tests/gpu_launch.rs). It implements the driver calls the
 * device runtime makes (crates/cairn_codegen/src/runtime/device.c) over host memory, runs no
 * kernel, and writes one line per call of interest to the file $FAKE_CUDA_LOG:
 *
 *   init | module <entries…> flag=<yes|no> | function <name> | alloc <bytes> | alloc-managed <bytes>
 *   host-alloc <bytes> | free <bytes> | free-unknown | set <value> <bytes>
 *   copy <h2d|d2h|d2d|h2h> <bytes> | launch <kernel> grid <g> block <b> count <n> env <word…>
 *   [cell D+<offset> holds <value>] | live <allocations>
 *
 * A launch's environment is its first parameter, by value, of the size the PTX declares for it;
 * in it a word that is the start of a block this driver gave out is written `D`, any other word
 * as its decimal value. $FAKE_CUDA_TRAP=K raises the trap flag to K at a launch (of a kernel whose
 * name holds $FAKE_CUDA_TRAP_KERNEL, when that is set), through the address the program stored
 * in the module's `cairn_device_trap`; $FAKE_CUDA_FAIL=NAME makes the call NAME answer error
 * 719. A device reduce's kernel (one with a third parameter, the total's cell) logs where its
 * cell is and what it holds at the launch; $FAKE_CUDA_FOLD=V stores V into it, as a kernel that
 * computed the total V would. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long cu_ptr;

static char *module_text;
static uint64_t trap_at; /* the module's global `cairn_device_trap`: where the flag is */
static struct { void *at; size_t bytes; } blocks[1024];
static size_t block_count;

static void say(const char *format, ...) {
    const char *path = getenv("FAKE_CUDA_LOG");
    if (path == NULL) return;
    FILE *log = fopen(path, "a");
    if (log == NULL) return;
    va_list args;
    va_start(args, format);
    vfprintf(log, format, args);
    va_end(args);
    fputc('\n', log);
    fclose(log);
}

static int failing(const char *call) {
    const char *name = getenv("FAKE_CUDA_FAIL");
    return name != NULL && strcmp(name, call) == 0;
}

static long find_block(const void *at) {
    for (size_t k = 0; k < block_count; k++) {
        const char *start = blocks[k].at;
        if ((const char *)at >= start && (const char *)at < start + blocks[k].bytes) return (long)k;
    }
    return -1;
}

int cuInit(unsigned flags) {
    (void)flags;
    say("init");
    return 0;
}

int cuDeviceGet(int *device, int ordinal) {
    *device = ordinal;
    return 0;
}

int cuDevicePrimaryCtxRetain(void **context, int device) {
    (void)device;
    *context = (void *)&module_text;
    return 0;
}

int cuCtxSetCurrent(void *context) {
    (void)context;
    return 0;
}

int cuModuleLoadData(void **module, const void *image) {
    module_text = strdup(image);
    char line[4096] = "module";
    for (const char *at = module_text; (at = strstr(at, ".entry ")) != NULL; at += 7) {
        char name[256];
        if (sscanf(at + 7, "%255[A-Za-z0-9_$]", name) == 1 && strlen(line) + strlen(name) + 2 < sizeof line) {
            strcat(line, " ");
            strcat(line, name);
        }
    }
    say("%s flag=%s", line, strstr(module_text, ".global .align 8 .u64 cairn_device_trap") ? "yes" : "no");
    *module = module_text;
    return 0;
}

struct kernel { char name[256]; size_t env_bytes; int cell; };

int cuModuleGetFunction(void **function, void *module, const char *name) {
    (void)module;
    char entry[300];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    if (strstr(module_text, entry) == NULL) return 500;
    struct kernel *k = calloc(1, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", name);
    /* `.param .align 8 .b8 NAME_param_0[N]`: the environment's size. */
    char param[300];
    snprintf(param, sizeof param, "%s_param_0[", name);
    const char *at = strstr(module_text, param);
    if (at != NULL) k->env_bytes = strtoull(at + strlen(param), NULL, 10);
    /* A device reduce's kernel takes a third parameter: the total's cell. */
    snprintf(param, sizeof param, "%s_param_2", name);
    k->cell = strstr(module_text, param) != NULL;
    say("function %s", name);
    *function = k;
    return 0;
}

int cuModuleGetGlobal_v2(cu_ptr *at, size_t *bytes, void *module, const char *name) {
    (void)module;
    if (strcmp(name, "cairn_device_trap") != 0) return 500;
    *at = (cu_ptr)(uintptr_t)&trap_at;
    *bytes = sizeof trap_at;
    return 0;
}

static int give(cu_ptr *at, size_t bytes, const char *what) {
    if (failing(what) || block_count == sizeof blocks / sizeof blocks[0]) return 2;
    void *block = malloc(bytes);
    memset(block, 0xAB, bytes); /* the runtime must zero it */
    blocks[block_count].at = block;
    blocks[block_count].bytes = bytes;
    block_count++;
    *at = (cu_ptr)(uintptr_t)block;
    say("%s %zu", strcmp(what, "cuMemAllocManaged") == 0 ? "alloc-managed" : "alloc", bytes);
    return 0;
}

int cuMemAlloc_v2(cu_ptr *at, size_t bytes) { return give(at, bytes, "cuMemAlloc"); }

int cuMemHostAlloc(void **at, size_t bytes, unsigned flags) {
    if (flags != 2) return 1; /* the runtime asks for memory mapped for the device */
    *at = malloc(bytes);
    memset(*at, 0xAB, bytes);
    say("host-alloc %zu", bytes);
    return 0;
}

int cuMemHostGetDevicePointer_v2(cu_ptr *device, void *host, unsigned flags) {
    (void)flags;
    *device = (cu_ptr)(uintptr_t)host;
    return 0;
}

int cuMemAllocManaged(cu_ptr *at, size_t bytes, unsigned flags) {
    (void)flags;
    return give(at, bytes, "cuMemAllocManaged");
}

int cuMemFree_v2(cu_ptr at) {
    for (size_t k = 0; k < block_count; k++) {
        if ((uintptr_t)blocks[k].at != at) continue;
        say("free %zu", blocks[k].bytes);
        free(blocks[k].at);
        blocks[k] = blocks[--block_count];
        return 0;
    }
    say("free-unknown");
    return 1;
}

int cuMemsetD8_v2(cu_ptr at, unsigned char value, size_t bytes) {
    long k = find_block((void *)(uintptr_t)at);
    if (k < 0 || (char *)(uintptr_t)at + bytes > (char *)blocks[k].at + blocks[k].bytes) return 1;
    memset((void *)(uintptr_t)at, value, bytes);
    say("set %u %zu", value, bytes);
    return 0;
}

int cuMemcpy(cu_ptr dst, cu_ptr src, size_t bytes) {
    int to_device = find_block((void *)(uintptr_t)dst) >= 0;
    int from_device = find_block((void *)(uintptr_t)src) >= 0;
    memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    say("copy %c2%c %zu", from_device ? 'd' : 'h', to_device ? 'd' : 'h', bytes);
    return 0;
}

int cuMemcpyHtoD_v2(cu_ptr dst, const void *src, size_t bytes) {
    int flag = dst == (cu_ptr)(uintptr_t)&trap_at && bytes == sizeof trap_at;
    if (!flag && find_block((void *)(uintptr_t)dst) < 0) return 1;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    if (!flag) say("copy h2d %zu", bytes);
    return 0;
}

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    (void)gy, (void)gz, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
    if (failing("cuLaunchKernel")) return 719;
    const struct kernel *k = function;
    const char *name = k->name;
    const uint64_t *env = params[0];
    uint64_t count = *(uint64_t *)params[1];
    char line[4096];
    int used = snprintf(line, sizeof line, "launch %s grid %u block %u count %llu env", name, gx, bx,
                        (unsigned long long)count);
    for (size_t w = 0; w < k->env_bytes / 8 && used < (int)sizeof line - 40; w++) {
        int device = 0;
        for (size_t k = 0; k < block_count; k++) device |= (uintptr_t)blocks[k].at == env[w];
        if (device) used += snprintf(line + used, sizeof line - used, " D");
        else used += snprintf(line + used, sizeof line - used, " %llu", (unsigned long long)env[w]);
    }
    if (k->cell) {
        /* The cell: where in which block, and what it holds at the launch (its start value). */
        char *cell = (char *)(uintptr_t)*(cu_ptr *)params[2];
        long b = find_block(cell);
        if (b < 0) {
            used += snprintf(line + used, sizeof line - used, " cell host");
        } else {
            size_t offset = (size_t)(cell - (char *)blocks[b].at), room = blocks[b].bytes - offset;
            size_t size = room < 8 ? room : 8;
            uint64_t held = 0;
            memcpy(&held, cell, size);
            used += snprintf(line + used, sizeof line - used, " cell D+%zu holds %llu", offset, (unsigned long long)held);
            /* $FAKE_CUDA_FOLD=V plays the kernel's total: V is stored into the cell. */
            const char *total = getenv("FAKE_CUDA_FOLD");
            if (total != NULL) {
                uint64_t v = strtoull(total, NULL, 10);
                memcpy(cell, &v, size);
            }
        }
    }
    say("%s", line);
    const char *trap = getenv("FAKE_CUDA_TRAP");
    const char *only = getenv("FAKE_CUDA_TRAP_KERNEL");
    if (trap != NULL && (only == NULL || strstr(name, only) != NULL) && trap_at != 0) {
        *(uint32_t *)(uintptr_t)trap_at = (uint32_t)atoi(trap);
    }
    return 0;
}

int cuCtxSynchronize(void) { return 0; }

int cuGetErrorString(int code, const char **words) {
    *words = code == 719 ? "unspecified launch failure (fake)" : "fake driver error";
    return 0;
}

__attribute__((destructor)) static void fake_cuda_end(void) {
    if (module_text != NULL) say("live %zu", block_count);
}
