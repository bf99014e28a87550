# libFuzzer targets (ctest label fuzz). Every fuzz target compiles with these flags:
# ASan + UBSan, and -fno-sanitize-recover=all so undefined behaviour (a signed overflow, a
# misaligned load) aborts the run and fails the test instead of printing and going on.
# tests/fuzz-selftest/ proves it on a target that overflows.
set(GPULAB_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
