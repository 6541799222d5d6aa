// memgrad bench: performance figures. Never used as assertions in tests; numbers vary by 20% from
// run to run on shared machines, so every figure is the median of several repetitions.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/alloc_counter.hpp"
#include "engine/blas.hpp"
#include "engine/blas_core.hpp"
#include "engine/threads.hpp"
#include "ops/ops.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/peak_flops.hpp"
#include "tools/trainer.hpp"

#include <sys/resource.h>

namespace memgrad::cli {
namespace {

const char* kHelp = R"(usage: memgrad bench ops [--threads N] [--json] [--quick]
       memgrad bench --model NAME --task TASK [--batch N] [--threads N] [--steps N] [--json]
                     [any `memgrad train` flag: model hyper-parameters, task settings]

--model: training steps of a model at its default (paper) dimensions: median ms per step split
into forward, backward and optimizer (min and max over the measured steps), steps/s, heap
allocations per steady-state step, and peak resident memory. The first 5 steps are warm-up
(200 with --shards above 1: their graphs vary more, so the tape's buffers take longer to
reach their largest shapes).
--profile: then as many steps again with the tape timing each op (engine/op_profile.hpp), and a
table of ms per step by op kind, forward and backward (profiled steps are not in the figures above).

ops: engine figures.
  tape overhead    ns per op to record (forward) and to record + run backward, on a chain of
                   tiny ops ([1]-shaped tensors, so the arithmetic is negligible)
  allocations      heap allocations per steady-state step of that chain (after warm-up)
  GEMM             GFLOP/s of memgrad::gemm (float32 and float64) at several square sizes,
                   against the machine's measured peak (an AVX-512 or AVX2 FMA loop on one core, times the
                   threads in use)
Every figure is the median of repeated measurements (min and max shown).
)";

using Clock = std::chrono::steady_clock;

struct Stats {
  double median, min, max;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

nlohmann::json to_json(const Stats& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

// One step of the chain benchmark: `length` tiny ops, then optionally backward.
Var chain(Var x, int length) {
  for (int i = 0; i < length; i += 2) {
    x = add_scalar(x, 1e-3);
    x = mul(x, x);  // two-input op: exercises input bookkeeping
  }
  return x;
}

nlohmann::json bench_tape(int reps) {
  constexpr int kLength = 1000;
  Tape tape;
  const Tensor start = Tensor::full(Shape{1}, DType::f32, 0.5);
  std::vector<double> fwd, fwd_bwd;
  uint64_t steady_allocs = 0;
  for (int rep = 0; rep < reps + 3; ++rep) {
    tape.reset();
    auto t0 = Clock::now();
    Var x = tape.input(start, true);
    Var y = chain(x, kLength);
    auto t1 = Clock::now();
    tape.reset();
    const uint64_t a0 = heap_allocations();
    auto t2 = Clock::now();
    x = tape.input(start, true);
    y = chain(x, kLength);
    tape.backward(y);
    auto t3 = Clock::now();
    const uint64_t allocs = heap_allocations() - a0;
    if (rep < 3) continue;  // warm-up: the tape grows its slots on the first steps
    steady_allocs = std::max(steady_allocs, allocs);
    fwd.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kLength);
    fwd_bwd.push_back(std::chrono::duration<double, std::nano>(t3 - t2).count() / kLength);
  }
  return {{"chain_length", kLength},
          {"forward_ns_per_op", to_json(stats(fwd))},
          {"forward_backward_ns_per_op", to_json(stats(fwd_bwd))},
          {"allocs_per_step", steady_allocs}};
}

template <class T>
Stats gemm_gflops(int64_t n, int reps) {
  const DType dt = sizeof(T) == 4 ? DType::f32 : DType::f64;
  Tensor a = Tensor::full(Shape{n, n}, dt, 0.5), b = Tensor::full(Shape{n, n}, dt, 0.25),
         c = Tensor::zeros(Shape{n, n}, dt);
  std::vector<double> rates;
  const int inner = std::max<int>(1, int(2e8 / double(n * n * n)));
  for (int rep = 0; rep < reps + 1; ++rep) {
    auto t0 = Clock::now();
    for (int i = 0; i < inner; ++i)
      gemm<T>(false, false, n, n, n, T(1), a.data<T>(), n, b.data<T>(), n, T(0), c.data<T>(), n);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (rep > 0) rates.push_back(2.0 * double(n * n * n) * inner / s / 1e9);
  }
  return stats(rates);
}

nlohmann::json bench_gemm(int reps, int threads) {
  nlohmann::json out = nlohmann::json::array();
  const double peak32 = measure_core_peak_gflops(true) * threads;
  const double peak64 = measure_core_peak_gflops(false) * threads;
  for (int64_t n : {64, 128, 256, 512, 1024}) {
    const Stats s32 = gemm_gflops<float>(n, reps), s64 = gemm_gflops<double>(n, reps);
    out.push_back({{"n", n},
                   {"f32_gflops", to_json(s32)},
                   {"f64_gflops", to_json(s64)},
                   {"f32_fraction_of_peak", peak32 > 0 ? s32.median / peak32 : 0.0},
                   {"f64_fraction_of_peak", peak64 > 0 ? s64.median / peak64 : 0.0}});
  }
  return {{"peak_f32_gflops", peak32}, {"peak_f64_gflops", peak64}, {"sizes", out}};
}

int bench_ops(const Args& args) {
  const int threads = threads_option(args);
  const int reps = args.has("quick") ? 3 : 15;
  nlohmann::json result = {{"threads", threads},
                           {"blas_core", blas_core_name()},
                           {"tape", bench_tape(reps)},
                           {"gemm", bench_gemm(std::max(3, reps / 3), threads)}};
  if (args.has("json")) {
    std::cout << result.dump(2) << "\n";
    return 0;
  }
  const auto& tape = result["tape"];
  std::printf("threads: %d\n\ntape overhead (chain of %d tiny ops, median [min, max] ns per op)\n",
              threads, int(tape["chain_length"]));
  for (const char* key : {"forward_ns_per_op", "forward_backward_ns_per_op"})
    std::printf("  %-28s %8.1f  [%.1f, %.1f]\n", key, double(tape[key]["median"]),
                double(tape[key]["min"]), double(tape[key]["max"]));
  std::printf("  %-28s %8d\n\n", "allocs_per_step (steady)", int(tape["allocs_per_step"]));
  const auto& g = result["gemm"];
  std::printf("GEMM GFLOP/s (median; OpenBLAS kernels: %s), measured peak: f32 %.1f, f64 %.1f\n",
              blas_core_name(), double(g["peak_f32_gflops"]), double(g["peak_f64_gflops"]));
  std::printf("  %6s %10s %8s %10s %8s\n", "n", "f32", "of peak", "f64", "of peak");
  for (const auto& s : g["sizes"])
    std::printf("  %6d %10.1f %7.0f%% %10.1f %7.0f%%\n", int(s["n"]),
                double(s["f32_gflops"]["median"]), 100 * double(s["f32_fraction_of_peak"]),
                double(s["f64_gflops"]["median"]), 100 * double(s["f64_fraction_of_peak"]));
  return 0;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Per op kind, per step: nodes, forward and backward ms.
nlohmann::json profile_json(const std::vector<OpProfile::Entry>& entries, int64_t steps) {
  nlohmann::json rows = nlohmann::json::array();
  const double n = double(steps);
  for (const OpProfile::Entry& e : entries)
    rows.push_back({{"op", e.op->name},
                    {"nodes_per_step", double(e.forward_count) / n},
                    {"forward_ms", e.forward_ms / n},
                    {"backward_ms", e.backward_ms / n}});
  return rows;
}

void print_profile(const nlohmann::json& rows, double step_ms) {
  std::printf("\n  op profile, per step (the timer itself adds to these):\n");
  std::printf("  %-22s %8s %10s %10s %7s\n", "op", "nodes", "fwd ms", "bwd ms", "% step");
  double fwd = 0, bwd = 0;
  for (const auto& r : rows) {
    const double f = r["forward_ms"], b = r["backward_ms"];
    fwd += f;
    bwd += b;
    std::printf("  %-22s %8.0f %10.3f %10.3f %6.1f%%\n", r["op"].get<std::string>().c_str(),
                double(r["nodes_per_step"]), f, b, 100.0 * (f + b) / step_ms);
  }
  std::printf("  %-22s %8s %10.3f %10.3f\n", "total", "", fwd, bwd);
}

// --steps N, strictly: "5x" or "1e3" is a typo, not 5 or 1. The bound keeps the step counts
// below far from overflow.
int64_t parse_steps(const std::string& text) {
  constexpr int64_t kMaxSteps = 1000000000;
  int64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || stop != end || n < 1 || n > kMaxSteps) {
    std::string message = "--steps expects a whole number from 1 to 1000000000, got '";
    message += text;
    message += "'";
    throw UsageError(message);
  }
  return n;
}

int bench_model(Words words) {
  // --steps and --profile are ours; everything else is a `memgrad train` flag.
  const auto steps_text = take_option(words, "steps");
  const int64_t steps = steps_text ? parse_steps(*steps_text) : 20;
  const bool profile = take_flag(words, "profile");
  nlohmann::json flags;
  RunConfig rc = parse_run_flags(words, nullptr, nullptr, &flags);
  // Run options bench sets itself or has no use for: refused rather than ignored.
  const auto options = flags["given"].get<std::vector<std::string>>();
  refuse_options(options, kRunOptions,
                 " is a `memgrad train` option; bench sets the number of steps with --steps");
  if (profile && rc.train.at("shards").get<int64_t>() > 1)
    throw UsageError("--profile times one tape: use it with --shards 1");
  const int threads = set_process_threads(flags["threads"].get<long>());
  // Warm-up steps, out of the figures. Batch shards' graphs vary more from step to step (each
  // shard's lengths), so their tape slots take longer to reach their steady sizes: dmnc-late's
  // still allocated after 60 steps, none after 200.
  const int64_t warmup = rc.train.at("shards").get<int64_t>() > 1 ? 200 : 5;
  rc.train["epochs"] = 0;
  rc.train["iterations"] = warmup + (profile ? 2 : 1) * steps;
  Trainer trainer(rc);
  reject_task_set_flags(options, trainer);
  std::vector<double> total, fwd, bwd, opt, allocs;
  for (int64_t step = 0; step < warmup + steps; ++step) {
    const uint64_t a0 = heap_allocations();
    const StepTiming t = trainer.train_step(step);
    const uint64_t a1 = heap_allocations();
    if (step < warmup) continue;
    fwd.push_back(t.forward_ms);
    bwd.push_back(t.backward_ms);
    opt.push_back(t.optimizer_ms);
    total.push_back(t.forward_ms + t.backward_ms + t.optimizer_ms);
    allocs.push_back(double(a1 - a0));
  }
  OpProfile ops;
  if (profile) {  // extra steps, kept out of the timings above
    trainer.tape().set_profile(&ops);
    for (int64_t step = warmup + steps; step < warmup + 2 * steps; ++step) trainer.train_step(step);
    trainer.tape().set_profile(nullptr);
  }
  const Stats st = stats(total);
  nlohmann::json out = {{"model", rc.model},
                        {"task", rc.task},
                        {"batch", trainer.batch_size()},
                        {"threads", threads},
                        {"parameters", trainer.model().params().count()},
                        {"steps_measured", steps},
                        {"ms_per_step", st.median},
                        {"ms_per_step_min", st.min},
                        {"ms_per_step_max", st.max},
                        {"forward_ms", stats(fwd).median},
                        {"backward_ms", stats(bwd).median},
                        {"optimizer_ms", stats(opt).median},
                        {"steps_per_s", 1000.0 / st.median},
                        {"allocs_per_step", stats(allocs).median},
                        {"shards", trainer.shards()},
                        {"tape_nodes", trainer.tape_nodes()},
                        {"peak_rss_mib", peak_rss_mib()}};
  if (profile) out["profile"] = profile_json(ops.sorted(), steps);
  if (flags["json"].get<bool>()) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("%s on %s, batch %lld, %d threads, %lld parameters, %lld tape nodes per step\n",
              rc.model.c_str(), rc.task.c_str(), (long long)trainer.batch_size(), threads,
              (long long)trainer.model().params().count(), (long long)trainer.tape_nodes());
  std::printf("  ms per step   %8.2f  [%.2f, %.2f]  (%.1f steps/s)\n", st.median, st.min, st.max,
              1000.0 / st.median);
  std::printf("  forward       %8.2f\n  backward      %8.2f\n  optimizer     %8.2f\n",
              double(out["forward_ms"]), double(out["backward_ms"]), double(out["optimizer_ms"]));
  std::printf("  allocations per steady-state step: %.0f\n  peak RSS: %.1f MiB\n",
              double(out["allocs_per_step"]), double(out["peak_rss_mib"]));
  if (profile) print_profile(out["profile"], st.median);
  return 0;
}

}  // namespace

int cmd_bench(const Words& words) {
  auto has = [&](const char* word) {
    return std::find(words.begin(), words.end(), word) != words.end();
  };
  // --model NAME or --model=NAME, as every flag (parse_run_flags reads both).
  const bool model_mode = has("--model") || std::any_of(words.begin(), words.end(), [](auto& w) {
                            return w.rfind("--model=", 0) == 0;
                          });
  if (model_mode) {
    if (has("--help")) {
      std::fputs(kHelp, stdout);
      return 0;
    }
    return bench_model(words);
  }
  // Without --model only `bench ops` is left: say what is missing rather than "unknown option".
  if (!has("ops") && !has("--help"))
    throw UsageError(
        "expected `memgrad bench ops` or `memgrad bench --model NAME --task TASK`: --model is "
        "missing (see --help)");
  Args args(words, {"json", "help", "quick"}, {"threads"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args.positional().size() == 1 && args.positional()[0] == "ops") return bench_ops(args);
  throw UsageError("expected `memgrad bench ops` or `memgrad bench --model NAME --task TASK`");
}

}  // namespace memgrad::cli
