#!/usr/bin/env bash
# The GPU check of p02-kernels and p02-coalescing in one go (a few minutes on
# an H200): configure and build both labs for the GPU it finds, run both
# programs, compute-sanitizer (memcheck and racecheck) on small sizes, and
# ncu --set basic on the transpose and matmul kernels. Every result lands in
# OUTDIR, one file per step, with the exit code next to it.
#   usage: labs/p02-kernels/gpu-check.sh OUTDIR
# (The issue asks for tools/gpu-check.sh; tools/ is outside this lab's folders.)
set -uo pipefail

out=${1:?usage: gpu-check.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$root/build/gpu-check"
mkdir -p "$out"
out=$(cd "$out" && pwd)

say() { printf 'gpu-check: %s\n' "$*" >&2; }

# The device, the driver and the date the numbers belong to.
{
  date -u '+%Y-%m-%d %H:%M UTC'
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
  nvidia-smi
  nvcc --version
} >"$out/device.txt" 2>&1
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
[ -n "$cc" ] || { say "no GPU found by nvidia-smi (see $out/device.txt)"; exit 77; }
say "GPU sm_$cc; building for it"

# Build for exactly this GPU: one architecture compiles fast.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES="$cc" \
  -DGPULAB_LABS="p02-kernels;p02-coalescing" -DGPULAB_BUILD_BENCH=OFF >"$out/configure.log" 2>&1 ||
  { say "configure failed: $out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1 || { say "build failed: $out/build.log"; exit 1; }
bin="$build/bin"

step() {  # step NAME COMMAND...: stdout to NAME.txt, stderr to NAME.err, exit code to NAME.rc
  local name=$1
  shift
  say "$name: $*"
  timeout 300 "$@" >"$out/$name.txt" 2>"$out/$name.err"
  local rc=$?
  echo "$rc" >"$out/$name.rc"
  say "$name: exit $rc"
}

step ctest ctest --test-dir "$build" --output-on-failure
step kernels-1024 "$bin/cuda-kernels" --n 1024
step kernels-1024-json "$bin/cuda-kernels" --n 1024 --json
step kernels-4096 "$bin/cuda-kernels" --n 4096 --kernels naive,tiled,rect64x16,micro2x2,micro4x4,micro8x8,micro8x8_lb,cublas
step kernels-4096-json "$bin/cuda-kernels" --n 4096 --json --kernels naive,tiled,micro4x4,micro8x8,cublas
step kernels-no-tail-guard "$bin/cuda-kernels" --no-tail-guard --kernels vec_add
step kernels-drop-second-sync "$bin/cuda-kernels" --drop-second-sync --kernels tiled --reps 20
step kernels-ptxas "$bin/cuda-kernels" ptxas
# The host-pointer pitfall: which call reports the fault, asynchronous launches against
# CUDA_LAUNCH_BLOCKING=1 (on a GPU with HMM/ATS the kernel may reach host memory and nothing fails).
step pitfall-host-pointer "$bin/cuda-kernels" --pitfall host-pointer
step pitfall-host-pointer-json "$bin/cuda-kernels" --pitfall host-pointer --json
step pitfall-host-pointer-blocking env CUDA_LAUNCH_BLOCKING=1 "$bin/cuda-kernels" --pitfall host-pointer
step coalescing "$bin/coalescing-bench"
step coalescing-json "$bin/coalescing-bench" --json

# Pictures from the measured runs, against the closest datasheet roof.
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) roof=h200 ;; *H100*) roof=h100 ;; *A100*) roof=a100 ;; *T4*) roof=t4 ;; *) roof=h200 ;;
esac
step plot-roofline "$bin/cuda-kernels" model --n 4096 --gpu "$roof" --plot "$out/roofline.svg" \
  --measured "$out/kernels-4096-json.txt"
step plot-stride "$bin/coalescing-bench" model --plot "$out/stride.svg" --measured "$out/coalescing-json.txt"

if command -v compute-sanitizer >/dev/null; then
  cs=(compute-sanitizer --error-exitcode 9)
  step sanitizer-kernels "${cs[@]}" "$bin/cuda-kernels" --n 256 --vec-n 100003 --reps 1 --warmup 0
  # Expected to report "Invalid __global__ write" from vec_add<false>: the real out-of-bounds write.
  step sanitizer-no-tail-guard "${cs[@]}" "$bin/cuda-kernels" --no-tail-guard --exact-alloc --kernels vec_add --reps 1
  # Expected to report shared-memory hazards in matmul_tiled<false>.
  step sanitizer-racecheck "${cs[@]}" --tool racecheck "$bin/cuda-kernels" --n 256 --drop-second-sync --kernels tiled --reps 1
  step sanitizer-coalescing "${cs[@]}" "$bin/coalescing-bench" --buffer-mb 4 --transpose-n 256 --reps 1 --warmup 0
else
  say "compute-sanitizer not on PATH: sanitizer steps skipped" | tee "$out/sanitizer-skipped.txt"
fi

if command -v ncu >/dev/null; then
  metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
  metrics+=,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
  metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
  metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  step ncu-transpose ncu --kernel-name regex:'transpose|copy_2d' --set basic --section WarpStateStats --metrics "$metrics" \
    --log-file "$out/ncu-transpose.log" "$bin/coalescing-bench" --only transpose --transpose-n 4096 --reps 1 --warmup 0
  step ncu-transpose-csv ncu --kernel-name regex:'transpose|copy_2d' --metrics "$metrics" --csv \
    --log-file "$out/ncu-transpose.csv" "$bin/coalescing-bench" --only transpose --transpose-n 4096 --reps 1 --warmup 0
  step ncu-matmul ncu --kernel-name regex:matmul --set basic --section WarpStateStats --metrics "$metrics" \
    --log-file "$out/ncu-matmul.log" "$bin/cuda-kernels" --n 1024 --reps 1 --warmup 0 --kernels naive,tiled,micro8x8
else
  say "ncu not on PATH: profiler steps skipped" | tee "$out/ncu-skipped.txt"
fi
say "done: $out"
