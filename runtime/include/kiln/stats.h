// kiln/stats.h - runtime counters and logging switches.
//
// kiln::stats() tells whether compiled code really ran: every call of a
// [[kiln::compile]] function counts as compiled or fallback, every failed
// guard is counted, and every kernel Kiln runs (an eager op, a fused CUDA
// kernel or a fused CPU loop) counts as one launch.
#pragma once

#include <kiln/export.h>
#include <atomic>
#include <cstdint>

KILN_API_BEGIN
namespace kiln {

struct Stats {
  uint64_t compiled_calls = 0; // calls that took the compiled path
  uint64_t fallback_calls = 0; // calls that ran the original (eager) body
  uint64_t guard_failures = 0; // guards that failed (each leads to a fallback)
  uint64_t kernel_launches = 0; // kernels run: eager ops, fused kernels, fused loops
  // mode=reduce-overhead (kiln/rt.h, graph_call): graphs captured, and calls
  // served by replaying one (each also a compiled call; its kernels count
  // as launches, as they run).
  uint64_t graph_captures = 0;
  uint64_t graph_replays = 0;
  // GEMM autotuning (kiln/matmul.h, set_gemm_autotune): products of a new
  // kind whose cuBLASLt algorithms were timed, and those whose choice was
  // read from the on-disk cache instead.
  uint64_t gemm_autotuned = 0;
  uint64_t gemm_autotune_cached = 0;
};
Stats stats();
void reset_stats();

// Turns every compiled function's fast path off (false) or on again, at run
// time: calls then run the original body, counted as fallback calls (not
// guard failures). For timing eager against compiled in one program, and
// for debugging, like torch._dynamo's `disable`.
inline std::atomic<bool> g_compiled_enabled{true};
inline void set_compiled_enabled(bool on) {
  g_compiled_enabled.store(on, std::memory_order_relaxed);
}
inline bool compiled_enabled() {
  return g_compiled_enabled.load(std::memory_order_relaxed);
}

// Makes every compiled function's guards fail (true): each call runs the
// original body, counted as a guard failure and a fallback, and logged
// under KILN_LOGS=guards. For checking that the fallback path gives eager's
// results everywhere (the test suites run once this way). Off by default;
// KILN_FORCE_GUARD_FAILURE=1 in the environment turns it on at start-up.
namespace rt {
bool env_flag(const char *name); // set, not empty and not "0"
}
inline std::atomic<bool> g_force_guard_failure{
    rt::env_flag("KILN_FORCE_GUARD_FAILURE")};
inline void set_force_guard_failure(bool on) {
  g_force_guard_failure.store(on, std::memory_order_relaxed);
}
inline bool force_guard_failure() {
  return g_force_guard_failure.load(std::memory_order_relaxed);
}

// Fills the memory of every new tensor (kiln::empty, every eager op's and
// every compiled kernel's outputs) before handing it out: NaN for floating
// dtypes, -12345 for integers, true for bool. An element a kernel forgets to
// write then cannot pass for a right answer; the test harnesses turn it on.
// The fills are not counted in kernel_launches.
// Off by default (a fill per allocation); KILN_FILL_UNINITIALIZED=1 in the
// environment turns it on at start-up. Like PyTorch's
// torch.utils.deterministic.fill_uninitialized_memory.
void set_fill_uninitialized(bool on);
bool fill_uninitialized();

namespace rt {
enum Counter {
  kCompiled,
  kFallback,
  kGuardFailures,
  kLaunches,
  kGraphCaptures,
  kGraphReplays,
  kGemmAutotuned,
  kGemmAutotuneCached,
  kNumCounters
};
extern std::atomic<uint64_t> g_counters[kNumCounters];
inline void bump(Counter c) { g_counters[c].fetch_add(1, std::memory_order_relaxed); }
// The fast path was switched off by set_compiled_enabled(false).
inline bool disabled_fallback() {
  bump(kFallback);
  return false;
}

// KILN_LOGS=guards,kernels,graphs (comma separated; "all" for everything), read
// once at start-up. Logs go to stderr.
enum LogKind : unsigned { kLogGuards = 1, kLogKernels = 2, kLogGraphs = 4 };
extern unsigned g_log_mask;
inline bool log_enabled(LogKind k) { return (g_log_mask & k) != 0; }
void log(LogKind k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
} // namespace rt
} // namespace kiln
KILN_API_END
