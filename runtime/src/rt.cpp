// The host half of kiln/rt.h: CPU launches, guards, broadcasting and offset
// calculators. (rt::launch and multiprocessor_count live with the CUDA
// code: cuda/launch.cu, or no_cuda/cuda_absent.cpp.)
#include "detail.h"

#include <kiln/rt.h>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace kiln::rt {

void cpu_launch(const char *name, int64_t n, int64_t grain,
                void (*body)(int64_t begin, int64_t end, void *ctx),
                void *ctx) {
  NvtxRange range(name);
  bump(kLaunches);
  if (log_enabled(kLogKernels))
    log(kLogKernels, "cpu %s n=%lld", name, (long long)n);
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(n / grain, omp_get_max_threads());
  if (chunks <= 1 || omp_in_parallel()) {
    body(0, n, ctx);
    return;
  }
  // Even chunks: each holds at least n / chunks >= grain elements.
#pragma omp parallel for num_threads(int(chunks)) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c)
    body(c * n / chunks, (c + 1) * n / chunks, ctx);
}

bool guard_failed(const char *function, const char *reason) {
  bump(kGuardFailures);
  bump(kFallback);
  if (log_enabled(kLogGuards))
    log(kLogGuards, "%s: guard failed: %s", function, reason);
  return false;
}

void note_dtypes(const char *symbol, const char *function,
                 std::initializer_list<const char *> names,
                 std::initializer_list<const Tensor *> tensors) {
  static const char *const path = std::getenv("KILN_DTYPE_PROFILE");
  if (!path || !*path)
    return;
  std::string line = symbol;
  auto name = names.begin();
  for (const Tensor *t : tensors) {
    if (!t->defined()) // the definedness guard comes first; never here
      return;
    line += std::string(" ") + *name++ + "=" + dtype_name(t->dtype());
  }
  line += std::string(" # ") + function + "\n";
  static std::mutex mu;
  static std::set<std::string> written;
  static bool read = false;
  std::lock_guard<std::mutex> lock(mu);
  if (!read) { // what earlier runs recorded: not again
    read = true;
    if (FILE *f = std::fopen(path, "r")) {
      char buf[4096];
      while (std::fgets(buf, sizeof buf, f))
        written.insert(buf);
      std::fclose(f);
    }
  }
  if (!written.insert(line).second)
    return;
  // One write of the whole line to a file opened for appending: lines of
  // processes sharing the file do not interleave.
  int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && ::write(fd, line.data(), line.size()) ==
                           ssize_t(line.size());
  if (fd >= 0)
    ::close(fd);
  if (!ok)
    std::fprintf(stderr, "[kiln] KILN_DTYPE_PROFILE: cannot append to '%s'\n",
                 path);
  else if (log_enabled(kLogGuards))
    log(kLogGuards, "%s: recorded its arguments' dtypes in %s", function, path);
}

bool broadcast_shapes(std::initializer_list<const Dims *> shapes, Dims &out) {
  int rank = 0;
  for (const Dims *s : shapes)
    rank = std::max(rank, s->rank());
  Dims r;
  r.resize(rank, 1);
  for (const Dims *s : shapes) {
    int lead = rank - s->rank();
    for (int i = 0; i < s->rank(); ++i) {
      int64_t v = (*s)[i], &o = r[lead + i];
      if (v == 1 || v == o)
        continue;
      if (o != 1)
        return false;
      o = v;
    }
  }
  out = r;
  return true;
}

bool broadcasts_to(const Dims &src, const Dims &dst) {
  Dims b;
  return broadcast_shapes({&dst, &src}, b) && b == dst;
}

bool reduced_shape(const Dims &in, std::initializer_list<int64_t> dims,
                   bool keepdim, bool nonempty, Dims &out) {
  const int rank = in.rank(), r = rank > 0 ? rank : 1;
  bool reduced[kMaxRank] = {};
  int64_t extent = 1;
  for (int64_t d : dims) {
    if (d < -r || d >= r)
      return false;
    int k = int(d < 0 ? d + r : d);
    if (rank > 0 && !reduced[k]) {
      reduced[k] = true;
      extent *= in[k];
    }
  }
  Dims o;
  if (dims.size() == 0) {
    for (int i = 0; i < rank; ++i)
      extent *= in[i];
    if (keepdim)
      o.resize(rank, 1);
  } else {
    for (int i = 0; i < rank; ++i)
      if (!reduced[i] || keepdim)
        o.push_back(reduced[i] ? 1 : in[i]);
  }
  if (nonempty && extent == 0)
    return false;
  out = o;
  return true;
}

bool norm_shapes(const Dims &x, std::initializer_list<const Dims *> params) {
  if (x.rank() == 0)
    return false;
  for (const Dims *p : params)
    if (p->rank() != 1 || (*p)[0] != x[x.rank() - 1])
      return false;
  return true;
}

template <int N>
void make_offset_calc(const Dims &out_sizes,
                      std::initializer_list<const Tensor *> operands,
                      OffsetCalc<N> &calc) {
  if (int(operands.size()) != N)
    detail::fail("kiln::rt::make_offset_calc: %d operands given for an "
                 "OffsetCalc<%d>",
                 int(operands.size()), N);
  calc.rank = detail::fill_offset_calc(out_sizes, operands.begin(), N,
                                       calc.sizes, &calc.strides[0][0]);
  calc.set_divisors();
}

#define KILN_INSTANTIATE(N)                                                    \
  template KILN_EXPORT void make_offset_calc<N>(                               \
      const Dims &, std::initializer_list<const Tensor *>, OffsetCalc<N> &);
KILN_INSTANTIATE(1)
KILN_INSTANTIATE(2)
KILN_INSTANTIATE(3)
KILN_INSTANTIATE(4)
KILN_INSTANTIATE(5)
KILN_INSTANTIATE(6)
KILN_INSTANTIATE(7)
KILN_INSTANTIATE(8)
KILN_INSTANTIATE(9)
KILN_INSTANTIATE(10)
KILN_INSTANTIATE(11)
KILN_INSTANTIATE(12)
KILN_INSTANTIATE(13)
KILN_INSTANTIATE(14)
KILN_INSTANTIATE(15)
KILN_INSTANTIATE(16)
KILN_INSTANTIATE(17)
KILN_INSTANTIATE(18)
KILN_INSTANTIATE(19)
KILN_INSTANTIATE(20)
KILN_INSTANTIATE(21)
KILN_INSTANTIATE(22)
KILN_INSTANTIATE(23)
KILN_INSTANTIATE(24)
KILN_INSTANTIATE(25)
KILN_INSTANTIATE(26)
KILN_INSTANTIATE(27)
KILN_INSTANTIATE(28)
KILN_INSTANTIATE(29)
KILN_INSTANTIATE(30)
KILN_INSTANTIATE(31)
KILN_INSTANTIATE(32)
static_assert(kMaxPointwiseOperands == 32,
              "instantiate make_offset_calc up to kMaxPointwiseOperands");
#undef KILN_INSTANTIATE

} // namespace kiln::rt

namespace kiln::detail {

int fill_offset_calc(const Dims &out_sizes, const Tensor *const *operands,
                     int n, int64_t *sizes, int64_t *strides) {
  int rank = out_sizes.rank();
  // Operand strides aligned to the output's dims (broadcast dims: 0).
  int64_t st[kMaxRank][kMaxPointwiseOperands] = {};
  if (n > kMaxPointwiseOperands)
    fail("kiln::rt::make_offset_calc: %d operands, at most %d", n,
         kMaxPointwiseOperands);
  for (int i = 0; i < n; ++i) {
    const Tensor *t = operands[i];
    if (!t) // a scalar operand: never advances
      continue;
    if (!t->defined())
      fail("kiln::rt::make_offset_calc: operand %d is undefined", i);
    int lead = rank - t->dim();
    if (lead < 0)
      fail("kiln::rt::make_offset_calc: operand %d of shape %s does not "
           "broadcast to %s",
           i, t->sizes().str().c_str(), out_sizes.str().c_str());
    for (int d = lead; d < rank; ++d) {
      int64_t s = t->sizes()[d - lead];
      if (s == out_sizes[d])
        st[d][i] = t->strides()[d - lead];
      else if (s != 1)
        fail("kiln::rt::make_offset_calc: operand %d of shape %s does not "
             "broadcast to %s",
             i, t->sizes().str().c_str(), out_sizes.str().c_str());
    }
  }
  // Walk the dims in the memory order of operand 0, the output (as
  // TensorIterator does): a strided output (a piece of a concatenation laid
  // out as its input, say) is then written in long runs, and an input of
  // the same order read so. A contiguous output keeps the logical order.
  // (An insertion sort, stable: ties keep the logical order.)
  int order[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    int k = d;
    if (n > 0 && operands[0])
      for (; k > 0 && std::abs(st[order[k - 1]][0]) < std::abs(st[d][0]); --k)
        order[k] = order[k - 1];
    order[k] = d;
  }
  // Drop size-1 dims; merge a dim into the one outside it when every
  // operand steps over the inner dim exactly once per outer step.
  int r = 0;
  for (int k = 0; k < rank; ++k) {
    const int d = order[k];
    if (out_sizes[d] == 1)
      continue;
    if (r > 0) {
      bool mergeable = true;
      for (int i = 0; i < n && mergeable; ++i)
        mergeable = strides[(r - 1) * n + i] == st[d][i] * out_sizes[d];
      if (mergeable) {
        sizes[r - 1] *= out_sizes[d];
        for (int i = 0; i < n; ++i)
          strides[(r - 1) * n + i] = st[d][i];
        continue;
      }
    }
    sizes[r] = out_sizes[d];
    for (int i = 0; i < n; ++i)
      strides[r * n + i] = st[d][i];
    ++r;
  }
  return r;
}

} // namespace kiln::detail
