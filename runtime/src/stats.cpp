// Counters and KILN_LOGS logging.
#include "detail.h"

#include <kiln/stats.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kiln {

bool rt::env_flag(const char *name) {
  const char *env = std::getenv(name);
  return env && *env && std::strcmp(env, "0") != 0;
}

static std::atomic<bool> g_fill_uninitialized{rt::env_flag("KILN_FILL_UNINITIALIZED")};
void set_fill_uninitialized(bool on) { g_fill_uninitialized.store(on); }
bool fill_uninitialized() { return g_fill_uninitialized.load(std::memory_order_relaxed); }

namespace rt {
std::atomic<uint64_t> g_counters[kNumCounters];

// KILN_LOGS is a comma list of guards, kernels, graphs, all.
static unsigned parse_log_mask(const char *env) {
  unsigned mask = 0;
  if (!env)
    return 0;
  std::string s(env);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos)
      comma = s.size();
    std::string tok = s.substr(pos, comma - pos);
    size_t b = tok.find_first_not_of(" \t"), e = tok.find_last_not_of(" \t");
    tok = b == std::string::npos ? "" : tok.substr(b, e - b + 1);
    if (tok == "guards")
      mask |= kLogGuards;
    else if (tok == "kernels")
      mask |= kLogKernels;
    else if (tok == "graphs")
      mask |= kLogGraphs;
    else if (tok == "all")
      mask |= kLogGuards | kLogKernels | kLogGraphs;
    else if (!tok.empty())
      std::fprintf(stderr,
                   "[kiln] KILN_LOGS: unknown kind '%s' (known: guards, "
                   "kernels, graphs, all)\n",
                   tok.c_str());
    pos = comma + 1;
  }
  return mask;
}

unsigned g_log_mask = parse_log_mask(std::getenv("KILN_LOGS"));

void log(LogKind k, const char *fmt, ...) {
  if (!log_enabled(k))
    return;
  char buf[1024];
  std::memcpy(buf, "[kiln] ", 7);
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf + 7, sizeof buf - 8, fmt, ap);
  va_end(ap);
  size_t len = 7 + (n < 0 ? 0 : size_t(n) < sizeof buf - 8 ? size_t(n)
                                                            : sizeof buf - 9);
  buf[len++] = '\n';
  // One write per line, so lines from several threads do not interleave.
  std::fwrite(buf, 1, len, stderr);
}
} // namespace rt

Stats stats() {
  Stats s;
  s.compiled_calls = rt::g_counters[rt::kCompiled].load();
  s.fallback_calls = rt::g_counters[rt::kFallback].load();
  s.guard_failures = rt::g_counters[rt::kGuardFailures].load();
  s.kernel_launches = rt::g_counters[rt::kLaunches].load();
  s.graph_captures = rt::g_counters[rt::kGraphCaptures].load();
  s.graph_replays = rt::g_counters[rt::kGraphReplays].load();
  s.gemm_autotuned = rt::g_counters[rt::kGemmAutotuned].load();
  s.gemm_autotune_cached = rt::g_counters[rt::kGemmAutotuneCached].load();
  return s;
}

void reset_stats() {
  for (auto &c : rt::g_counters)
    c.store(0);
}

} // namespace kiln
