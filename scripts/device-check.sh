#!/usr/bin/env bash
# The device checks of issue 21, for a session that is lent a GPU machine, in two halves.
#
#   scripts/device-check.sh prepare   here, after `cargo build --release`: builds every device run
#                                     test (tests/run, `--emulate` in its flags) and the device bench
#                                     (bench/device/bandwidth.cairn) for a GPU into .device/, with
#                                     each test's expectations and the CUDA twins' source.
#   scripts/device-check.sh run       there (the device tool's `run`, carrying .device): runs each
#                                     test on the GPU against the expectations its emulated run is
#                                     held to in CI, then the bench beside the CUDA twins (built
#                                     there by nvcc), and prints one report (also .device/report).
#
# The GPU machine needs no Rust toolchain and no LLVM: the programs are built here, and carry
# their PTX; the driver JIT-compiles it for the GPU present. A test that the GPU build refuses
# (a device collector: no kernel yet) is listed as not built, never as passed.
set -u
cd "$(dirname "$0")/.."
dir=.device

prepare() {
    local cairn=target/release/cairn
    [ -x "$cairn" ] || { echo "build first: cargo build --release -p cairn_cli" >&2; exit 2; }
    rm -rf "$dir"
    mkdir -p "$dir/tests" "$dir/build"
    : > "$dir/not-built"
    for file in tests/run/*.cairn; do
        local flags target name record artifact
        flags=$(sed -n 's|^// flags: ||p' "$file" | head -1)
        case "$flags" in *--emulate*) ;; *) continue ;; esac
        target=$(printf '%s\n' "$flags" | grep -o 'sm_[0-9]*[af]\?' | head -1)
        name=$(basename "$file" .cairn)
        record=$("$cairn" build "$file" --device-target "$target" --out "$dir/build" --format json 2>&1 | head -1)
        artifact=$(printf '%s' "$record" | sed -n 's|.*"artifact":"\([^"]*\)".*|\1|p')
        if [ -n "$artifact" ] && [ -x "$artifact" ]; then
            cp "$artifact" "$dir/tests/$name"
            grep -E '^// (exit|stdout|stderr-contains|stdin|args):' "$file" > "$dir/tests/$name.expect"
        else
            printf '%s: %s\n' "$name" "$record" >> "$dir/not-built"
        fi
    done
    local record artifact
    record=$("$cairn" build bench/device/bandwidth.cairn --device-target sm_90 --out "$dir/build" --format json | head -1)
    artifact=$(printf '%s' "$record" | sed -n 's|.*"artifact":"\([^"]*\)".*|\1|p')
    [ -x "$artifact" ] || { echo "the device bench did not build: $record" >&2; exit 1; }
    cp "$artifact" "$dir/bandwidth"
    cp bench/device/twins.cu "$dir/"
    rm -rf "$dir/build"
    echo "prepared $(ls "$dir/tests" | grep -vc '\.expect$') device tests and the bench in $dir ($(du -sh "$dir" | cut -f1)); not built: $(wc -l < "$dir/not-built")"
}

# One test: runs it and compares exit status, standard output and stderr-contains lines.
check_test() {
    local program=$1 expect=$2 want_exit=0 want_out='' status out err stdin_file args=()
    want_exit=$(sed -n 's|^// exit: ||p' "$expect" | head -1)
    want_out=$(sed -n 's|^// stdout: ||p' "$expect")
    stdin_file=$(mktemp)
    sed -n 's|^// stdin: ||p' "$expect" > "$stdin_file"
    read -r -a args <<< "$(sed -n 's|^// args: ||p' "$expect" | head -1)"
    out=$(timeout 120 "$program" "${args[@]}" < "$stdin_file" 2> "$stdin_file.err")
    status=$?
    err=$(cat "$stdin_file.err")
    rm -f "$stdin_file" "$stdin_file.err"
    local verdict=pass why=''
    [ "$status" = "${want_exit:-0}" ] || { verdict=FAIL; why="exit $status, expected ${want_exit:-0}"; }
    [ "$out" = "$want_out" ] || { verdict=FAIL; why="$why; stdout [$out] expected [$want_out]"; }
    while IFS= read -r needle; do
        [ -z "$needle" ] && continue
        case "$err" in *"$needle"*) ;; *) verdict=FAIL; why="$why; stderr [$err] lacks [$needle]" ;; esac
    done <<< "$(sed -n 's|^// stderr-contains: ||p' "$expect")"
    printf '%-34s %s %s\n' "$(basename "$program")" "$verdict" "$why"
    [ "$verdict" = pass ]
}

run() {
    [ -d "$dir" ] || { echo "no $dir: run 'scripts/device-check.sh prepare' first and carry it" >&2; exit 2; }
    run_all > "$dir/report" 2>&1
    local status=$?
    cat "$dir/report"
    return $status
}

run_all() {
    local failed=0
        echo "== GPU"
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
        echo "== device run tests on the GPU (expectations of their emulated runs)"
        for expect in "$dir"/tests/*.expect; do
            check_test "${expect%.expect}" "$expect" || failed=$((failed + 1))
        done
        echo "not built for a GPU:"
        sed 's/^/  /' "$dir/not-built"
        echo "== bench: best of 20 per kernel, 3 alternating rounds (GB/s = bytes moved / time)"
        if nvcc -O3 -arch=sm_90 -o "$dir/twins" "$dir/twins.cu" 2> "$dir/nvcc.err"; then :; else
            echo "nvcc failed: $(head -5 "$dir/nvcc.err")"
        fi
        for round in 1 2 3; do
            "$dir/bandwidth" > "$dir/cairn.$round" || { echo "bandwidth failed: $(cat "$dir/cairn.$round")"; failed=$((failed + 1)); }
            [ -x "$dir/twins" ] && "$dir/twins" > "$dir/cuda.$round"
        done
        awk '
            FNR == 1 { side = FILENAME ~ /cairn/ ? "cairn" : "cuda" }
            NF == 3 { key = side SUBSEP $1; if (!(key in best) || $3 < best[key]) { best[key] = $3; bytes[$1] = $2 } }
            END {
                printf "%-10s %12s %12s %10s %14s\n", "kernel", "cairn GB/s", "CUDA GB/s", "cuda/cairn", "cairn/copy"
                split("copy saxpy transpose stencil sum", order, " ")
                for (k = 1; k <= 5; k++) {
                    n = order[k]; c = best["cairn" SUBSEP n]; t = best["cuda" SUBSEP n]; copy = best["cairn" SUBSEP "copy"]
                    printf "%-10s %12.1f %12.1f %10.3f %14.3f\n", n, c ? bytes[n] / c : 0, t ? bytes[n] / t : 0, \
                        (c && t) ? t / c : 0, (c && copy) ? (bytes[n] / c) / (bytes["copy"] / copy) : 0
                }
            }' "$dir"/cairn.* "$dir"/cuda.* 2>/dev/null
        echo "== $failed failed"
    [ "$failed" = 0 ]
}

case "${1:-}" in
prepare) prepare ;;
run) run ;;
*) echo "usage: scripts/device-check.sh prepare|run" >&2; exit 2 ;;
esac
