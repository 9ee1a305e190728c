/* The device half of the CAIRN runtime (language §36-§38): linked only into programs built for a
 * GPU. It loads the CUDA driver (`libcuda.so.1`) with dlopen at the first device operation, so
 * nothing here needs a CUDA toolkit to build, and a program without device work never loads it.
 *
 * The host module of such a program defines what this file reads: the PTX module's text
 * (`cairn_gpu_ptx`), its kernels' names by index (`cairn_gpu_kernels`) and the messages of its
 * device guards by trap number (`cairn_gpu_messages`). A device guard that fails stores its
 * number into the trap flag (the first failing lane's number wins) and ends its thread; the flag
 * is a word of host memory mapped for the device, whose device address the module's global
 * `cairn_device_trap` holds, so after each launch the host reads it without a copy and, when it
 * is set, stops the program with that guard's message, as a host guard does. A launch passes the
 * region's environment record by value (the kernel's first parameter, never under 8 bytes), so
 * a launch is one driver call and a synchronization.
 *
 * Every device operation is synchronous (language §38: a region over device views, and a
 * transfer, return once the stream ran them). Device memory is tracked in a small table so that
 * the release of a `buffer …@device` (`cairn_rt_free`, the same drop as any owner's) gives it
 * back to the driver. A driver call that fails stops the program with the call's name and the
 * driver's words for the error: "a failed enqueue or a lost device traps". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void cairn_rt_trap(const char *message);

extern const char cairn_gpu_ptx[];
extern const char *const cairn_gpu_kernels[];
extern const int32_t cairn_gpu_kernel_count;
extern const char *const cairn_gpu_messages[];
extern const int32_t cairn_gpu_message_count;

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context;
typedef void *cu_module;
typedef void *cu_function;
typedef unsigned long long cu_ptr;

enum { CU_SUCCESS = 0, CU_OUT_OF_MEMORY = 2, CU_ATTACH_GLOBAL = 1, CU_HOST_DEVICEMAP = 2 };

static struct {
    cu_result (*init)(unsigned);
    cu_result (*device_get)(cu_device *, int);
    cu_result (*primary_retain)(cu_context *, cu_device);
    cu_result (*set_current)(cu_context);
    cu_result (*module_load)(cu_module *, const void *);
    cu_result (*module_function)(cu_function *, cu_module, const char *);
    cu_result (*module_global)(cu_ptr *, size_t *, cu_module, const char *);
    cu_result (*alloc)(cu_ptr *, size_t);
    cu_result (*alloc_managed)(cu_ptr *, size_t, unsigned);
    cu_result (*release)(cu_ptr);
    cu_result (*set8)(cu_ptr, unsigned char, size_t);
    cu_result (*copy)(cu_ptr, cu_ptr, size_t);
    cu_result (*to_device)(cu_ptr, const void *, size_t);
    cu_result (*host_alloc)(void **, size_t, unsigned);
    cu_result (*host_device_pointer)(cu_ptr *, void *, unsigned);
    cu_result (*launch)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);
    cu_result (*synchronize)(void);
    cu_result (*error_string)(cu_result, const char **);
} cu;

static pthread_mutex_t cairn_gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cairn_gpu_once = PTHREAD_ONCE_INIT;
static cu_context cairn_gpu_context;
static cu_module cairn_gpu_module;
static cu_function *cairn_gpu_functions;
static volatile uint32_t *cairn_gpu_trap_flag;

/* The device allocations alive, for `cairn_device_release` (a few per program: a linear table). */
static void **cairn_gpu_blocks;
static size_t cairn_gpu_block_count, cairn_gpu_block_room;

static _Noreturn void cairn_gpu_fail(const char *call, cu_result code) {
    const char *words = NULL;
    if (cu.error_string != NULL) cu.error_string(code, &words);
    char line[400];
    snprintf(line, sizeof line, "device error: %s failed (%d: %s)", call, code, words != NULL ? words : "no description");
    cairn_rt_trap(line);
}

static void cairn_gpu_check(const char *call, cu_result code) {
    if (code != CU_SUCCESS) cairn_gpu_fail(call, code);
}

static void *cairn_gpu_symbol(void *library, const char *name) {
    void *symbol = dlsym(library, name);
    if (symbol == NULL) {
        char line[300];
        snprintf(line, sizeof line, "device error: the CUDA driver (libcuda.so.1) lacks %s; a newer driver is needed", name);
        cairn_rt_trap(line);
    }
    return symbol;
}

static void cairn_gpu_start(void) {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        cairn_rt_trap("device error: this program runs device work on a GPU, and the CUDA driver (libcuda.so.1) "
                      "cannot be loaded on this machine; run it where an NVIDIA driver is installed, or build it "
                      "with --emulate to run its device work on host threads");
    }
#define CAIRN_CU(field, name) *(void **)&cu.field = cairn_gpu_symbol(library, name)
    CAIRN_CU(init, "cuInit");
    CAIRN_CU(device_get, "cuDeviceGet");
    CAIRN_CU(primary_retain, "cuDevicePrimaryCtxRetain");
    CAIRN_CU(set_current, "cuCtxSetCurrent");
    CAIRN_CU(module_load, "cuModuleLoadData");
    CAIRN_CU(module_function, "cuModuleGetFunction");
    CAIRN_CU(module_global, "cuModuleGetGlobal_v2");
    CAIRN_CU(alloc, "cuMemAlloc_v2");
    CAIRN_CU(alloc_managed, "cuMemAllocManaged");
    CAIRN_CU(release, "cuMemFree_v2");
    CAIRN_CU(set8, "cuMemsetD8_v2");
    CAIRN_CU(copy, "cuMemcpy");
    CAIRN_CU(to_device, "cuMemcpyHtoD_v2");
    CAIRN_CU(host_alloc, "cuMemHostAlloc");
    CAIRN_CU(host_device_pointer, "cuMemHostGetDevicePointer_v2");
    CAIRN_CU(launch, "cuLaunchKernel");
    CAIRN_CU(synchronize, "cuCtxSynchronize");
    CAIRN_CU(error_string, "cuGetErrorString");
#undef CAIRN_CU
    cairn_gpu_check("cuInit", cu.init(0));
    cu_device device;
    cairn_gpu_check("cuDeviceGet", cu.device_get(&device, 0));
    cairn_gpu_check("cuDevicePrimaryCtxRetain", cu.primary_retain(&cairn_gpu_context, device));
    cairn_gpu_check("cuCtxSetCurrent", cu.set_current(cairn_gpu_context));
    /* The PTX is JIT-compiled by the driver for the GPU present (it was built for the target named). */
    cairn_gpu_check("cuModuleLoadData", cu.module_load(&cairn_gpu_module, cairn_gpu_ptx));
    cairn_gpu_functions = calloc((size_t)(cairn_gpu_kernel_count > 0 ? cairn_gpu_kernel_count : 1), sizeof *cairn_gpu_functions);
    if (cairn_gpu_functions == NULL) cairn_rt_trap("allocation guard failed in the device runtime");
    /* The trap flag: host memory the device writes through its mapped address. */
    void *flag = NULL;
    cairn_gpu_check("cuMemHostAlloc", cu.host_alloc(&flag, sizeof(uint32_t), CU_HOST_DEVICEMAP));
    cairn_gpu_trap_flag = flag;
    *cairn_gpu_trap_flag = 0;
    cu_ptr flag_on_device = 0, slot = 0;
    size_t slot_size = 0;
    cairn_gpu_check("cuMemHostGetDevicePointer", cu.host_device_pointer(&flag_on_device, flag, 0));
    cairn_gpu_check("cuModuleGetGlobal(cairn_device_trap)",
                    cu.module_global(&slot, &slot_size, cairn_gpu_module, "cairn_device_trap"));
    if (slot_size != sizeof flag_on_device) cairn_rt_trap("device error: the module's trap flag has the wrong size");
    cairn_gpu_check("cuMemcpyHtoD", cu.to_device(slot, &flag_on_device, sizeof flag_on_device));
}

/* The calling thread bound to the program's context (driver calls act on the thread's current one). */
static void cairn_gpu_ready(void) {
    pthread_once(&cairn_gpu_once, cairn_gpu_start);
    cairn_gpu_check("cuCtxSetCurrent", cu.set_current(cairn_gpu_context));
}

static void cairn_gpu_remember(void *block) {
    if (cairn_gpu_block_count == cairn_gpu_block_room) {
        size_t room = cairn_gpu_block_room ? cairn_gpu_block_room * 2 : 16;
        void **grown = realloc(cairn_gpu_blocks, room * sizeof *grown);
        if (grown == NULL) cairn_rt_trap("allocation guard failed in the device runtime");
        cairn_gpu_blocks = grown;
        cairn_gpu_block_room = room;
    }
    cairn_gpu_blocks[cairn_gpu_block_count++] = block;
}

/* `buffer d:T[n]@device = zeroed` (`managed` for `@unified`): `count` zeroed elements of `size`
 * bytes in memory the driver gives out; NULL when the device has no room (the allocation guard
 * after the call then stops the program with its place). */
void *cairn_rt_gpu_alloc(uint64_t count, uint64_t size, int32_t managed) {
    if (size == 0) size = 1;
    if (count > (uint64_t)INT64_MAX / size) return NULL;
    size_t bytes = (size_t)(count * size);
    if (bytes == 0) bytes = 1; /* every owner holds a block of its own, even of no elements */
    pthread_mutex_lock(&cairn_gpu_lock);
    cairn_gpu_ready();
    cu_ptr block = 0;
    cu_result code = managed ? cu.alloc_managed(&block, bytes, CU_ATTACH_GLOBAL) : cu.alloc(&block, bytes);
    if (code == CU_OUT_OF_MEMORY) {
        pthread_mutex_unlock(&cairn_gpu_lock);
        return NULL;
    }
    cairn_gpu_check(managed ? "cuMemAllocManaged" : "cuMemAlloc", code);
    cairn_gpu_check("cuMemsetD8", cu.set8(block, 0, bytes));
    cairn_gpu_remember((void *)(uintptr_t)block);
    pthread_mutex_unlock(&cairn_gpu_lock);
    return (void *)(uintptr_t)block;
}

/* Called by `cairn_rt_free` for every released block: gives a device block back to the driver
 * and answers 1, or answers 0 for host memory. */
int cairn_device_release(void *block) {
    if (block == NULL) return 0;
    pthread_mutex_lock(&cairn_gpu_lock);
    for (size_t k = 0; k < cairn_gpu_block_count; k++) {
        if (cairn_gpu_blocks[k] != block) continue;
        cairn_gpu_blocks[k] = cairn_gpu_blocks[--cairn_gpu_block_count];
        cairn_gpu_ready();
        cairn_gpu_check("cuMemFree", cu.release((cu_ptr)(uintptr_t)block));
        if (cairn_gpu_block_count == 0) {
            free(cairn_gpu_blocks);
            cairn_gpu_blocks = NULL;
            cairn_gpu_block_room = 0;
        }
        pthread_mutex_unlock(&cairn_gpu_lock);
        return 1;
    }
    pthread_mutex_unlock(&cairn_gpu_lock);
    return 0;
}

/* `transfer(dst, src)` with device or unified memory on a side: `bytes` bytes, either way
 * (unified addressing lets the driver tell the sides apart), finished when this returns. */
void cairn_rt_gpu_copy(void *dst, const void *src, uint64_t bytes) {
    if (bytes == 0) return;
    pthread_mutex_lock(&cairn_gpu_lock);
    cairn_gpu_ready();
    cairn_gpu_check("cuMemcpy", cu.copy((cu_ptr)(uintptr_t)dst, (cu_ptr)(uintptr_t)src, (size_t)bytes));
    /* A device-to-device copy, or one from pageable memory, may return before it is done:
     * language §38 says a transfer returns once it ran. */
    cairn_gpu_check("cuCtxSynchronize", cu.synchronize());
    pthread_mutex_unlock(&cairn_gpu_lock);
}

/* Runs kernel `kernel` over indices 0..count, each thread running `per_lane` consecutive ones
 * (the kernel was made for that number), in blocks of `block` threads, with the environment
 * record `env` (`env_bytes` bytes: it holds only copies, device views among them) as its first
 * parameter, the count as its second and, for a device `reduce`, the address of the total's
 * cell (`cell`, else NULL) as its third. Returns once the kernel ran; a device guard that failed
 * stops the program here with its message. */
static void cairn_gpu_run(int32_t kernel, const void *env, uint64_t env_bytes, uint64_t count, int32_t block,
                          int32_t per_lane, const cu_ptr *cell) {
    if (count == 0) return;
    if (kernel < 0 || kernel >= cairn_gpu_kernel_count) cairn_rt_trap("device error: a launch of a kernel the module lacks");
    if (block < 32 || block > 1024) block = 256;
    if (per_lane < 1) per_lane = 1;
    uint64_t threads = (count + (uint64_t)per_lane - 1) / (uint64_t)per_lane;
    uint64_t blocks = (threads + (uint64_t)block - 1) / (uint64_t)block;
    if (blocks > 0x7fffffffu) cairn_rt_trap("device error: a region of more lanes than one launch can run (2^31 - 1 blocks)");
    pthread_mutex_lock(&cairn_gpu_lock);
    cairn_gpu_ready();
    if (cairn_gpu_functions[kernel] == NULL) {
        cairn_gpu_check("cuModuleGetFunction",
                        cu.module_function(&cairn_gpu_functions[kernel], cairn_gpu_module, cairn_gpu_kernels[kernel]));
    }
    cu_function function = cairn_gpu_functions[kernel];
    /* Not held while the kernel runs: a host thread releasing host memory asks the table. */
    pthread_mutex_unlock(&cairn_gpu_lock);
    /* The environment travels as the kernel's first parameter (at least 8 bytes: a smaller record
     * is padded, as the kernel's parameter is, `device.rs`). */
    uint64_t small[1] = {0};
    const void *env_arg = env;
    if (env_bytes < sizeof small) {
        memcpy(small, env, (size_t)env_bytes);
        env_arg = small;
    }
    uint64_t count_arg = count;
    void *params[3] = {(void *)env_arg, &count_arg, (void *)cell};
    cairn_gpu_check("cuLaunchKernel", cu.launch(function, (unsigned)blocks, 1, 1, (unsigned)block, 1, 1, 0, NULL, params,
                                                NULL));
    cairn_gpu_check("cuCtxSynchronize", cu.synchronize());
    uint32_t fired = *cairn_gpu_trap_flag;
    if (fired != 0) {
        if (fired > (uint32_t)cairn_gpu_message_count) cairn_rt_trap("device error: a device guard failed");
        cairn_rt_trap(cairn_gpu_messages[fired - 1]);
    }
}

/* A device region (`cairn_gpu_run` without a cell). */
void cairn_rt_gpu_launch(int32_t kernel, const void *env, uint64_t env_bytes, uint64_t count, int32_t block,
                         int32_t per_lane) {
    cairn_gpu_run(kernel, env, env_bytes, count, block, per_lane, NULL);
}

/* A device `reduce` (language §25, §36): its total starts as `identity` (`size` bytes) in a
 * device cell, the kernel's threads combine into the cell, and the total ends in `dest`. With
 * `dest_device`, `dest` is the element `out[k]` in device memory and is the cell itself (the
 * total stays on the device); else `dest` is host memory, the cell is allocated for the launch
 * and the total copied back. A reduction of no indices leaves the identity. */
void cairn_rt_gpu_fold(int32_t kernel, const void *env, uint64_t env_bytes, uint64_t count, int32_t block,
                       int32_t per_lane, void *dest, int32_t dest_device, const void *identity, uint64_t size) {
    pthread_mutex_lock(&cairn_gpu_lock);
    cairn_gpu_ready();
    cu_ptr cell = (cu_ptr)(uintptr_t)dest;
    if (!dest_device) {
        cu_result code = cu.alloc(&cell, (size_t)size);
        if (code == CU_OUT_OF_MEMORY) cairn_rt_trap("allocation guard failed: no device memory for a reduction's total");
        cairn_gpu_check("cuMemAlloc", code);
    }
    cairn_gpu_check("cuMemcpy", cu.copy(cell, (cu_ptr)(uintptr_t)identity, (size_t)size));
    pthread_mutex_unlock(&cairn_gpu_lock);
    cairn_gpu_run(kernel, env, env_bytes, count, block, per_lane, &cell);
    if (dest_device) return;
    pthread_mutex_lock(&cairn_gpu_lock);
    cairn_gpu_ready();
    cairn_gpu_check("cuMemcpy", cu.copy((cu_ptr)(uintptr_t)dest, cell, (size_t)size));
    cairn_gpu_check("cuCtxSynchronize", cu.synchronize());
    cairn_gpu_check("cuMemFree", cu.release(cell));
    pthread_mutex_unlock(&cairn_gpu_lock);
}
