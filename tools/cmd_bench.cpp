// memgrad bench: performance figures. Never used as assertions in tests; numbers vary by 20% from
// run to run on shared machines, so every figure is the median of several repetitions.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/alloc_counter.hpp"
#include "engine/blas.hpp"
#include "engine/blas_core.hpp"
#include "engine/small_gemm.hpp"
#include "engine/threads.hpp"
#include "ops/ops.hpp"
#include "tools/args.hpp"
#include "tools/commands.hpp"
#include "tools/gemm_candidates.hpp"
#include "tools/peak_flops.hpp"
#include "tools/trainer.hpp"

#include <sys/resource.h>
#include <time.h>
#include "engine/json_text.hpp"

namespace memgrad::cli {
namespace {

const char* kHelp = R"(usage: memgrad bench ops [--threads N] [--json] [--quick]
       memgrad bench --model NAME --task TASK [--batch N] [--threads N] [--steps N]
                     [--warmup N] [--profile] [--json]
                     [any `memgrad train` flag: model hyper-parameters, task settings]

--model: training steps of a model at its default (paper) dimensions: median ms per step split
into forward, backward and optimizer (min and max over the measured steps), steps/s, the median
CPU time per step of the whole process (all threads: on a shared machine, what the step cost
whoever else held the cores), the small-product kernels and OpenBLAS kernel family in use, heap
allocations per step, and peak resident memory.
--steps N: steps measured (default 20), after --warmup N steps left out of every figure
(default 1). The first step is the warm-up: before it the trainer runs the task's largest batch
forward and backward, without an update, to size its memory (Trainer::reserve_memory), so no
later step should allocate. Allocations are not a median, which would hide the few steps that
allocate: the largest count in one step, the mean, and how many steps allocated at all.
--profile: then as many steps again with the tape timing each op (engine/op_profile.hpp), and a
table of ms per step by op kind, forward and backward (profiled steps are not in the figures above).

ops: engine figures.
  tape overhead    ns per op to record (forward) and to record + run backward, on a chain of
                   tiny ops ([1]-shaped tensors, so the arithmetic is negligible); median [min, max]
  allocations      heap allocations per step of that chain after 3 warm-up steps
  GEMM             GFLOP/s of memgrad::gemm (float32 and float64) at several square sizes, median
                   and best of 5 timings of about 1 GFLOP each, against the measured peak: the best
                   of 18 runs of an AVX-512 or AVX2 FMA loop on one core (times the threads in
                   use), run before the first size and again after each. With one thread everything
                   runs pinned to one core and is timed in the thread's CPU time, so other
                   processes taking the core do not count. The fraction of peak compares best with
                   best; when a GEMM beats the peak anyway (a busy hyperthread sibling slowed the
                   loop), the peak is no ceiling: it is marked so and no fraction is printed.
  small products   float32 GFLOP/s of each library found (OpenBLAS; LIBXSMM when built; BLIS and
                   oneDNN when libblis4 / libdnnl2 are installed, loaded at run time) on the
                   products of a dmnc-late step: x W, g W^T and x^T g for rows 1-50 and weights of
                   64-256 x 264-1024, and the memory's batched products over 50 samples. BLIS picks
                   its kernels from the CPU (BLIS_ARCH_TYPE overrides; it prints the ones in use).
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

// Heap allocations of the measured steps (steps first_step, first_step + 1, ...). Not a median: a
// median hides the few steps that allocate, so it gives the largest count, the mean, how many steps
// allocated at all and the last one that did.
nlohmann::json alloc_json(const std::vector<uint64_t>& per_step, int64_t first_step) {
  uint64_t max = 0, total = 0;
  int64_t allocating = 0, last = -1;
  for (size_t i = 0; i < per_step.size(); ++i) {
    max = std::max(max, per_step[i]);
    total += per_step[i];
    if (per_step[i] == 0) continue;
    ++allocating;
    last = first_step + int64_t(i);
  }
  return {{"max", max},
          {"mean", per_step.empty() ? 0.0 : double(total) / double(per_step.size())},
          {"steps_allocating", allocating},
          {"steps", per_step.size()},
          {"total", total},
          {"last_allocating_step", last}};
}

// "0 in all 20 steps" or "max 12, mean 0.35, on 3 of 20 steps (the last: step 17)".
std::string alloc_text(const nlohmann::json& a) {
  char text[160];
  if (a["steps_allocating"].get<int64_t>() == 0)
    std::snprintf(text, sizeof text, "0 in all %lld steps", (long long)a["steps"].get<int64_t>());
  else
    std::snprintf(
        text, sizeof text, "max %llu, mean %.2f, on %lld of %lld steps (the last: step %lld)",
        (unsigned long long)a["max"].get<uint64_t>(), a["mean"].get<double>(),
        (long long)a["steps_allocating"].get<int64_t>(), (long long)a["steps"].get<int64_t>(),
        (long long)a["last_allocating_step"].get<int64_t>());
  return text;
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
  std::vector<uint64_t> allocs;
  constexpr int kWarmup = 3;  // the tape grows its slots on the first steps
  for (int rep = 0; rep < reps + kWarmup; ++rep) {
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
    const uint64_t a1 = heap_allocations();
    if (rep < kWarmup) continue;
    allocs.push_back(a1 - a0);
    fwd.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kLength);
    fwd_bwd.push_back(std::chrono::duration<double, std::nano>(t3 - t2).count() / kLength);
  }
  return {{"chain_length", kLength},
          {"forward_ns_per_op", to_json(stats(fwd))},
          {"forward_backward_ns_per_op", to_json(stats(fwd_bwd))},
          {"warmup_steps", kWarmup},
          {"allocs_per_step", alloc_json(allocs, kWarmup)}};
}

// Seconds of `work`: the thread's CPU time with one thread (time it ran, not time other processes
// held the core), wall time with more (the worker threads' CPU time is not the caller's).
template <class F>
double seconds_of(F&& work, int threads) {
  if (threads == 1) {
    const double t0 = thread_cpu_seconds();
    work();
    return thread_cpu_seconds() - t0;
  }
  const auto t0 = Clock::now();
  work();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// GFLOP/s of n x n x n products: `reps` timings (after one untimed) of about 1 GFLOP each.
template <class T>
Stats gemm_gflops(int64_t n, int reps, int threads) {
  const DType dt = sizeof(T) == 4 ? DType::f32 : DType::f64;
  Tensor a = Tensor::full(Shape{n, n}, dt, 0.5), b = Tensor::full(Shape{n, n}, dt, 0.25),
         c = Tensor::zeros(Shape{n, n}, dt);
  std::vector<double> rates;
  const int inner = std::max<int>(1, int(5e8 / double(n * n * n)));
  for (int rep = 0; rep < reps + 1; ++rep) {
    const double s = seconds_of(
        [&] {
          for (int i = 0; i < inner; ++i)
            gemm<T>(false, false, n, n, n, T(1), a.data<T>(), n, b.data<T>(), n, T(0), c.data<T>(),
                    n);
        },
        threads);
    if (rep > 0) rates.push_back(2.0 * double(n * n * n) * inner / s / 1e9);
  }
  return stats(rates);
}

// GEMM rates against the measured peak. The peak loop runs before the first size and again after
// every size, and the best of all its runs counts, so that one unlucky moment cannot lower it. The
// fractions compare best with best; if a GEMM still beats the peak, the peak was not a ceiling
// (another thread shared the core's FMA units while it ran) and no fraction is given.
nlohmann::json bench_gemm(int reps, int threads) {
  nlohmann::json sizes = nlohmann::json::array();
  double core32 = measure_core_peak_gflops(true), core64 = measure_core_peak_gflops(false);
  double best32 = 0, best64 = 0;
  std::vector<std::pair<Stats, Stats>> rates;
  for (int64_t n : {64, 128, 256, 512, 1024}) {
    rates.emplace_back(gemm_gflops<float>(n, reps, threads), gemm_gflops<double>(n, reps, threads));
    best32 = std::max(best32, rates.back().first.max);
    best64 = std::max(best64, rates.back().second.max);
    core32 = std::max(core32, measure_core_peak_gflops(true));
    core64 = std::max(core64, measure_core_peak_gflops(false));
  }
  const double peak32 = core32 * threads, peak64 = core64 * threads;
  const bool ceiling = peak32 > 0 && peak64 > 0 && best32 <= peak32 && best64 <= peak64;
  size_t i = 0;
  for (int64_t n : {64, 128, 256, 512, 1024}) {
    const auto& [s32, s64] = rates[i++];
    nlohmann::json row = {{"n", n}, {"f32_gflops", to_json(s32)}, {"f64_gflops", to_json(s64)}};
    row["f32_best_fraction_of_peak"] = ceiling ? nlohmann::json(s32.max / peak32) : nullptr;
    row["f64_best_fraction_of_peak"] = ceiling ? nlohmann::json(s64.max / peak64) : nullptr;
    sizes.push_back(row);
  }
  return {{"peak_f32_gflops", peak32},
          {"peak_f64_gflops", peak64},
          {"peak_is_ceiling", ceiling},
          {"peak_isa", core_peak_isa()},
          {"timing", threads == 1 ? "thread CPU time, pinned to one core" : "wall time"},
          {"sizes", sizes}};
}

// GFLOP/s of each library (tools/gemm_candidates.hpp) on the float32 products of a dmnc-late step
// at the paper's dimensions: for a weight W [K, N] and rows active samples, the forward x W, the
// backward's g W^T (LIBXSMM given W^T made beforehand, as the ops do once per backward pass) and
// x^T g, and the memory's batched products over 50 samples (one read head: [1, 64] keys against
// [16, 64] memory rows, and the [1, 16] weights reading them). Best of `reps` timings of about
// 0.2 ms of work each, in thread CPU time.
nlohmann::json bench_small_products(int reps) {
  const auto candidates = gemm_candidates();
  std::vector<float> x(64 * 1024, 0.5f), w(1024 * 1024, 0.25f), wt(1024 * 1024, 0.25f),
      c(1024 * 1024, 0.0f);
  auto best_rate = [&](double flops, auto&& call) {
    const int inner = std::max(1, int(4e7 / flops));
    double best = 0;
    for (int rep = 0; rep < reps + 1; ++rep) {
      const double t0 = thread_cpu_seconds();
      for (int i = 0; i < inner; ++i) call();
      const double s = thread_cpu_seconds() - t0;
      if (rep > 0 && s > 0) best = std::max(best, flops * inner / s / 1e9);
    }
    return best;
  };
  nlohmann::json names = nlohmann::json::array(), rows = nlohmann::json::array();
  for (const auto& cand : candidates) names.push_back(cand.name);
  struct Weight {
    int64_t k, n;  // x [rows, k] W [k, n]: LSTM input and recurrent weights, the interface, decoder
  };
  for (const char* product : {"x W", "g W^T", "x^T g"})
    for (const Weight wgt :
         {Weight{64, 512}, Weight{128, 512}, Weight{128, 264}, Weight{256, 1024}})
      for (int64_t r : {1, 10, 25, 50}) {
        nlohmann::json rates;
        const double flops = 2.0 * double(r * wgt.k * wgt.n);
        for (const auto& cand : candidates) {
          const std::string p = product;
          double rate;
          if (p == "x W")
            rate = best_rate(flops, [&] {
              cand.sgemm(false, false, r, wgt.n, wgt.k, x.data(), wgt.k, w.data(), wgt.n, 1.0f,
                         c.data(), wgt.n);
            });
          else if (p == "g W^T")
            rate = best_rate(flops, [&] {
              if (cand.reads_transposed_b)
                cand.sgemm(false, true, r, wgt.k, wgt.n, x.data(), wgt.n, w.data(), wgt.n, 1.0f,
                           c.data(), wgt.k);
              else
                cand.sgemm(false, false, r, wgt.k, wgt.n, x.data(), wgt.n, wt.data(), wgt.k, 1.0f,
                           c.data(), wgt.k);
            });
          else
            rate = best_rate(flops, [&] {
              cand.sgemm(true, false, wgt.k, wgt.n, r, x.data(), wgt.k, wt.data(), wgt.n, 1.0f,
                         c.data(), wgt.n);
            });
          rates[cand.name] = rate;
        }
        rows.push_back(
            {{"product", product}, {"rows", r}, {"k", wgt.k}, {"n", wgt.n}, {"gflops", rates}});
      }
  struct Batched {
    const char* product;
    bool tb;
    int64_t m, n, k;
  };
  for (const Batched bm : {Batched{"bmm keys . memory^T", true, 1, 16, 64},
                           Batched{"bmm weights . memory", false, 1, 64, 16}}) {
    constexpr int64_t kBatch = 50;
    nlohmann::json rates;
    const double flops = 2.0 * double(kBatch * bm.m * bm.n * bm.k);
    for (const auto& cand : candidates)
      rates[cand.name] = best_rate(flops, [&] {
        cand.batched(kBatch, false, bm.tb, bm.m, bm.n, bm.k, x.data(), w.data(), c.data());
      });
    rows.push_back({{"product", bm.product},
                    {"batch", kBatch},
                    {"m", bm.m},
                    {"n", bm.n},
                    {"k", bm.k},
                    {"gflops", rates}});
  }
  return {{"libraries", names},
          {"timing", "thread CPU time, best of " + std::to_string(reps)},
          {"shapes", rows}};
}

void print_small_products(const nlohmann::json& sp) {
  std::printf("\nsmall products of a dmnc-late step, float32 GFLOP/s (%s)\n",
              sp["timing"].get<std::string>().c_str());
  std::printf("  %-22s %5s %11s", "product", "rows", "K x N");
  for (const auto& name : sp["libraries"]) std::printf(" %16.16s", name.get<std::string>().c_str());
  std::printf("\n");
  for (const auto& row : sp["shapes"]) {
    char dims[32];
    if (row.contains("batch"))
      std::snprintf(dims, sizeof dims, "%lldx[%lld,%lld,%lld]", (long long)row["batch"],
                    (long long)row["m"], (long long)row["k"], (long long)row["n"]);
    else
      std::snprintf(dims, sizeof dims, "%lldx%lld", (long long)row["k"], (long long)row["n"]);
    std::printf("  %-22s %5s %11s", row["product"].get<std::string>().c_str(),
                row.contains("rows") ? std::to_string(row["rows"].get<int64_t>()).c_str() : "",
                dims);
    for (const auto& name : sp["libraries"])
      std::printf(" %16.1f", row["gflops"][name.get<std::string>()].get<double>());
    std::printf("\n");
  }
}

int bench_ops(const Args& args) {
  const int threads = threads_option(args);
  const int reps = args.has("quick") ? 3 : 15;
  // One thread: everything on the core we start on (see PinToCurrentCore).
  std::optional<PinToCurrentCore> pin;
  if (threads == 1) pin.emplace();
  nlohmann::json result = {{"threads", threads},
                           {"blas_core", blas_core_name()},
                           {"pinned_core", pin ? pin->core() : -1},
                           {"tape", bench_tape(reps)},
                           {"gemm_kernels", gemm_kernels_name()},
                           {"gemm", bench_gemm(std::max(3, reps / 3), threads)},
                           {"small_products", bench_small_products(args.has("quick") ? 1 : 3)}};
  if (args.has("json")) {
    std::cout << dump_json(result, 2) << "\n";
    return 0;
  }
  const auto& tape = result["tape"];
  std::printf("threads: %d\n\ntape overhead (chain of %d tiny ops, median [min, max] ns per op)\n",
              threads, int(tape["chain_length"]));
  for (const char* key : {"forward_ns_per_op", "forward_backward_ns_per_op"})
    std::printf("  %-28s %8.1f  [%.1f, %.1f]\n", key, double(tape[key]["median"]),
                double(tape[key]["min"]), double(tape[key]["max"]));
  std::printf("  heap allocations per step after %d warm-up steps: %s\n\n",
              int(tape["warmup_steps"]), alloc_text(tape["allocs_per_step"]).c_str());
  const auto& g = result["gemm"];
  std::printf(
      "GEMM GFLOP/s (memgrad::gemm: small products %s, OpenBLAS kernels %s; %s), median "
      "[best]\n",
      gemm_kernels_name(), blas_core_name(), g["timing"].get<std::string>().c_str());
  std::printf("measured peak (%s FMA loop, best of 18 runs of about 0.05 s): f32 %.1f, f64 %.1f",
              g["peak_isa"].get<std::string>().c_str(), double(g["peak_f32_gflops"]),
              double(g["peak_f64_gflops"]));
  const bool ceiling = g["peak_is_ceiling"].get<bool>();
  std::printf(ceiling ? "\n"
                      : "  -- NOT a ceiling: a GEMM ran faster (the core was shared while the peak "
                        "was measured), so no fraction is given\n");
  std::printf("  %6s %20s %8s %20s %8s\n", "n", "f32", "of peak", "f64", "of peak");
  for (const auto& s : g["sizes"]) {
    auto rate = [](const nlohmann::json& r) {
      char text[40];
      std::snprintf(text, sizeof text, "%.1f [%.1f]", double(r["median"]), double(r["max"]));
      return std::string(text);
    };
    auto fraction = [](const nlohmann::json& f) {
      char text[16];
      if (f.is_null()) return std::string("-");
      std::snprintf(text, sizeof text, "%.0f%%", 100 * double(f));
      return std::string(text);
    };
    std::printf("  %6d %20s %8s %20s %8s\n", int(s["n"]), rate(s["f32_gflops"]).c_str(),
                fraction(s["f32_best_fraction_of_peak"]).c_str(), rate(s["f64_gflops"]).c_str(),
                fraction(s["f64_best_fraction_of_peak"]).c_str());
  }
  print_small_products(result["small_products"]);
  return 0;
}

// CPU seconds of the whole process (every thread): unlike wall time, not lengthened by other
// processes holding the cores.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
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
                    {"backward_ms", e.backward_ms / n},
                    {"value_mib", e.value_bytes / n / (1024.0 * 1024.0)}});
  return rows;
}

void print_profile(const nlohmann::json& rows, double step_ms) {
  std::printf(
      "\n  op profile, per step (the timer itself adds to these; values: MiB of the\n"
      "  forward values its nodes take in the tape's arena, views none):\n");
  std::printf("  %-22s %8s %10s %10s %7s %10s\n", "op", "nodes", "fwd ms", "bwd ms", "% step",
              "values MiB");
  double fwd = 0, bwd = 0, mib = 0;
  for (const auto& r : rows) {
    const double f = r["forward_ms"], b = r["backward_ms"], v = r["value_mib"];
    fwd += f;
    bwd += b;
    mib += v;
    std::printf("  %-22s %8.0f %10.3f %10.3f %6.1f%% %10.2f\n", r["op"].get<std::string>().c_str(),
                double(r["nodes_per_step"]), f, b, 100.0 * (f + b) / step_ms, v);
  }
  std::printf("  %-22s %8s %10.3f %10.3f %7s %10.2f\n", "total", "", fwd, bwd, "", mib);
}

// --steps N and --warmup N, strictly: "5x" or "1e3" is a typo, not 5 or 1. The bound keeps the
// step counts below far from overflow.
int64_t parse_count(const char* flag, const std::string& text, int64_t min) {
  constexpr int64_t kMax = 1000000000;
  int64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || stop != end || n < min || n > kMax) {
    std::string message = flag;
    message += " expects a whole number from " + std::to_string(min) + " to 1000000000, got '";
    message += text;
    message += "'";
    throw UsageError(message);
  }
  return n;
}

int bench_model(Words words) {
  // --steps, --warmup and --profile are ours; everything else is a `memgrad train` flag.
  const auto steps_text = take_option(words, "steps");
  const int64_t steps = steps_text ? parse_count("--steps", *steps_text, 1) : 20;
  const auto warmup_text = take_option(words, "warmup");
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
  const int64_t warmup = warmup_text ? parse_count("--warmup", *warmup_text, 0) : 1;
  rc.train["epochs"] = 0;
  rc.train["iterations"] = warmup + (profile ? 2 : 1) * steps;
  Trainer trainer(rc);
  reject_task_set_flags(options, trainer);
  std::vector<double> total, fwd, bwd, opt, cpu;
  std::vector<uint64_t> allocs;
  for (int64_t step = 0; step < warmup + steps; ++step) {
    const uint64_t a0 = heap_allocations();
    const double c0 = process_cpu_seconds();
    const StepTiming t = trainer.train_step(step);
    const double c1 = process_cpu_seconds();
    const uint64_t a1 = heap_allocations();
    if (step < warmup) continue;
    cpu.push_back(1e3 * (c1 - c0));
    fwd.push_back(t.forward_ms);
    bwd.push_back(t.backward_ms);
    opt.push_back(t.optimizer_ms);
    total.push_back(t.forward_ms + t.backward_ms + t.optimizer_ms);
    allocs.push_back(a1 - a0);
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
                        {"cpu_ms_per_step", stats(cpu).median},
                        {"gemm_kernels", gemm_kernels_name()},
                        {"blas_core", blas_core_name()},
                        {"warmup_steps", warmup},
                        {"allocs_per_step", alloc_json(allocs, warmup)},
                        {"shards", trainer.shards()},
                        {"tape_nodes", trainer.tape_nodes()},
                        {"arena_mib", double(trainer.arena_high_water()) / (1 << 20)},
                        {"released_mib", double(trainer.released_bytes()) / (1 << 20)},
                        {"peak_rss_mib", peak_rss_mib()}};
  if (profile) out["profile"] = profile_json(ops.sorted(), steps);
  if (flags["json"].get<bool>()) {
    std::cout << dump_json(out, 2) << "\n";
    return 0;
  }
  std::printf("%s on %s, batch %lld, %d threads, %lld parameters, %lld tape nodes per step\n",
              rc.model.c_str(), rc.task.c_str(), (long long)trainer.batch_size(), threads,
              (long long)trainer.model().params().count(), (long long)trainer.tape_nodes());
  std::printf("  ms per step   %8.2f  [%.2f, %.2f]  (%.1f steps/s)\n", st.median, st.min, st.max,
              1000.0 / st.median);
  std::printf(
      "  CPU ms per step %6.2f  (all threads; what the step cost when the machine is shared)\n",
      double(out["cpu_ms_per_step"]));
  std::printf("  small products: %s; OpenBLAS kernels: %s\n", gemm_kernels_name(),
              blas_core_name());
  std::printf("  forward       %8.2f\n  backward      %8.2f\n  optimizer     %8.2f\n",
              double(out["forward_ms"]), double(out["backward_ms"]), double(out["optimizer_ms"]));
  std::printf("  heap allocations per step after %lld warm-up steps: %s\n  peak RSS: %.1f MiB\n",
              (long long)warmup, alloc_text(out["allocs_per_step"]).c_str(),
              double(out["peak_rss_mib"]));
  std::printf(
      "  tape arenas: %.1f MiB written in one step at most; the last step released %.1f "
      "MiB of values no backward reads\n",
      double(out["arena_mib"]), double(out["released_mib"]));
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
