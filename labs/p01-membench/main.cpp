// membench: latency (pointer chase), bandwidth (STREAM), peak FLOP/s and the
// roofline of the machine it runs on, plus spec-sheet rooflines of accelerators.
#include <CLI/CLI.hpp>

#include "gpulab/cli.hpp"
#include "membench/app.hpp"
#include "membench/sizes.hpp"

namespace {

// A CLI11 option taking "4K", "256MiB", ... into a byte count.
CLI::Option* add_size(CLI::App& app, const std::string& flag, std::size_t& target,
                      const std::string& help) {
  return app
      .add_option_function<std::string>(
          flag,
          [&target, flag](const std::string& text) {
            const auto v = membench::parse_size(text);
            if (!v) throw CLI::ValidationError(flag, v.error().message);
            target = v.value();
          },
          help)
      ->default_str(target ? membench::format_size(target) : "auto");
}

}  // namespace

int main(int argc, char** argv) {
  membench::Options o;
  gpulab::CommonOptions common;
  CLI::App app{
      "membench: measure this machine's memory hierarchy (pointer-chase latency, STREAM "
      "bandwidth),\n"
      "its peak FLOP/s and its roofline, and compute accelerators' rooflines from their spec "
      "sheets."};
  app.add_option("part", o.part, "What to run: all, latency, bandwidth, peak, roofline, stride")
      ->capture_default_str();

  auto* lat = "Latency sweep";
  add_size(app, "--min", o.min_bytes, "Smallest chase buffer")->group(lat);
  add_size(app, "--max", o.max_bytes, "Largest chase buffer")->group(lat);
  app.add_option("--steps", o.steps, "Buffer sizes per doubling (1 = powers of two)")
      ->capture_default_str()
      ->group(lat);
  app.add_option("--loads", o.loads, "Dependent loads per repetition")
      ->capture_default_str()
      ->group(lat);
  app.add_option("--reps", o.reps, "Measured repetitions (the minimum is reported)")
      ->capture_default_str();
  app.add_flag("--sequential", o.sequential, "Chase lines in order (the prefetcher pitfall)")
      ->group(lat);
  app.add_flag("--small-pages", o.small_pages,
               "Do not advise huge pages (TLB misses join DRAM latency)")
      ->group(lat);
  app.add_flag("--counters", o.counters, "Cache references/misses per load via perf_event_open")
      ->group(lat);

  auto* bw = "Bandwidth, peak, roofline";
  app.add_option("--threads", o.threads, "Threads for the all-cores runs (default: every CPU)")
      ->check(CLI::Range(1, 4096))
      ->group(bw);
  app.add_option("--cpu", o.cpu, "Pin to this CPU (extra threads take the next ones)")
      ->check(CLI::NonNegativeNumber)
      ->group(bw);
  add_size(app, "--array", o.array_bytes,
           "Bytes per STREAM array (default: 4x the last-level cache)")
      ->group(bw);
  app.add_option("--ntimes", o.ntimes, "STREAM iterations per kernel (the first is dropped)")
      ->capture_default_str()
      ->group(bw);
  app.add_option("--peak-iterations", o.peak_iterations, "FMA kernel iterations per thread")
      ->capture_default_str()
      ->group(bw);
  app.add_option("--clock-ghz", o.clock_ghz, "Clock for the spec estimate (default: detected)")
      ->group(bw);
  app.add_option("--matmul-n", o.matmul_n, "Blocked matmul size N")
      ->capture_default_str()
      ->group(bw);
  app.add_option("--blocks", o.blocks, "Matmul block sizes")
      ->capture_default_str()
      ->delimiter(',')
      ->group(bw);
  app.add_option("--max-stride", o.max_stride, "Largest stride of the stride sweep (elements)")
      ->capture_default_str()
      ->group(bw);

  auto* spec = "Spec-sheet roofline (no measurement)";
  app.add_flag("--spec", o.spec, "Print only the accelerator table")->group(spec);
  app.add_option("--peak-tflops", o.peak_tflops, "Peak of a custom chip, TFLOP/s")->group(spec);
  app.add_option("--bandwidth-tbs", o.bandwidth_tbs, "Memory bandwidth of a custom chip, TB/s")
      ->group(spec);
  app.add_option("--ai", o.ai, "Arithmetic intensity to place, FLOP/byte")
      ->capture_default_str()
      ->group(spec);
  app.add_flag("--decode", o.decode, "Batch-1 LLM decode ceiling in tokens/s")->group(spec);
  app.add_option("--params-b", o.params_b, "Model parameters, billions")
      ->capture_default_str()
      ->group(spec);
  app.add_option("--bytes-per-param", o.bytes_per_param, "Bytes per weight (2 = fp16)")
      ->capture_default_str()
      ->group(spec);

  app.add_option("--plot", o.plot_dir,
                 "Write latency.svg and roofline.svg into this directory (gnuplot)");
  gpulab::add_json_flag(app, common);
  gpulab::add_quick_flag(app, common, "Small sizes: the whole run in seconds (tests, CI)");
  gpulab::add_seed_flag(app, common);

  return gpulab::run_program("membench", app, argc, argv, [&] {
    o.json = common.json;
    o.quick = common.quick;
    o.seed = common.seed;
    if (o.quick) membench::apply_quick(o);
    return membench::run(o);
  });
}
