// CUDA graphs for compiled regions (kiln/rt.h, graph_call): the kernels of
// one call captured once per key and replayed, as torch.compile's
// mode="reduce-overhead" does, with the replay guarded by the key instead of
// the fast path's host code.
#include "cuda_backend.h"
#include "cuda_util.cuh"

#include <kiln/autograd.h>
#include <kiln/rt.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kiln::rt {

namespace {

// Keys kept per function, and instances per key (a caller holding the
// outputs of earlier calls gets another). Past them a call runs the fast
// path plainly.
constexpr size_t kMaxKeys = 64, kMaxInstances = 4;

struct KeyHash {
  size_t operator()(const std::vector<uint64_t> &k) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t w : k)
      h = (h ^ w) * 1099511628211ull;
    return size_t(h);
  }
};

// What a replay puts in an output slot: memory of the graph's pool (the
// output of the captured call, held), a view of a tensor the call was given
// (an argument, or a slot's tensor written in place: found again through
// the key, which fixes their data pointers), or nothing.
struct Out {
  enum Kind { Undefined, Owned, Alias } kind = Undefined;
  Tensor held;     // Owned
  int holders = 0; // Owned: how many slots hold its storage
  int source = 0;  // Alias: index into arguments, then slots
  int64_t delta_bytes = 0; // Alias: from the source's data to the view's
  Dims sizes, strides;
  DType dtype = DType::f32;
};

// One captured call: its graph, its pool (the private stream's free list in
// the allocator) and what a replay hands back.
struct Instance {
  int device = 0;
  void *pool = nullptr; // the stream the capture ran on
  cudaGraphExec_t exec = nullptr;
  // Per output slot, what a replay hands back.
  std::vector<Out> outs;
  // Tensors (arguments, then the slots' incoming tensors) the call writes
  // in place: a replay moves their versions, as the fast path does.
  std::vector<int> written;
  uint64_t launches = 0; // kernels the call runs
  // Recorded by the graph's last node at the end of every replay: a replay
  // on another stream than the last one waits for it (one set of buffers
  // must not be run twice at once). The last stream is only compared, never
  // used: it may be destroyed by now.
  cudaEvent_t done = nullptr;
  void *last_stream = nullptr;

  // Free when the caller holds none of the outputs of its last replay.
  bool free() const {
    for (const Out &o : outs)
      if (o.kind == Out::Owned &&
          o.held.storage()->refs.load(std::memory_order_acquire) != o.holders)
        return false;
    return true;
  }
};

struct Entry {
  bool seen = false;  // the first call ran plainly
  bool plain = false; // this key is never replayed (a capture failed)
  std::vector<std::unique_ptr<Instance>> instances;
};

struct Impl {
  std::mutex mu;
  std::unordered_map<std::vector<uint64_t>, Entry, KeyHash> keys;
  bool full_logged = false;
  // Captures and replays so far. Keys that keep changing (x = f(x): each
  // result is a new address, hence a new key) would capture a graph every
  // few calls and replay each only a few times; past kChurnCaptures
  // captures with fewer than kChurnReplays replays each, no more are made
  // (the graphs there still replay).
  uint64_t captures = 0, replays = 0;
  bool churn = false;
};
constexpr uint64_t kChurnCaptures = 8, kChurnReplays = 4;

// Never destroyed (tensors and graphs may outlive static destruction).
Impl &impl_of(GraphCache &c) {
  void *p = c.impl.load(std::memory_order_acquire);
  if (p)
    return *static_cast<Impl *>(p);
  static std::mutex create;
  std::lock_guard<std::mutex> lock(create);
  p = c.impl.load(std::memory_order_acquire);
  if (!p) {
    p = new Impl;
    c.impl.store(p, std::memory_order_release);
  }
  return *static_cast<Impl *>(p);
}

void add_tensor(std::vector<uint64_t> &key, const Tensor &t) {
  if (!t.defined()) {
    key.push_back(~uint64_t(0));
    return;
  }
  key.push_back(uint64_t(t.dim()) | uint64_t(t.dtype()) << 8 |
                uint64_t(t.device().index) << 16);
  key.push_back(uint64_t(uintptr_t(t.data_ptr())));
  for (int d = 0; d < t.dim(); ++d) {
    key.push_back(uint64_t(t.sizes()[d]));
    key.push_back(uint64_t(t.strides()[d]));
  }
}

void destroy(Instance &in) {
  if (in.exec)
    cudaGraphExecDestroy(in.exec);
  in.exec = nullptr;
  if (in.done)
    cudaEventDestroy(in.done);
  in.done = nullptr;
  if (in.pool) {
    detail::cuda_pool_pin(in.pool, in.device, false);
    cudaStreamDestroy(static_cast<cudaStream_t>(in.pool));
    in.pool = nullptr;
  }
  cudaGetLastError();
}

// The view an Alias output is, over the tensor it was made from in this
// call; false if that tensor's storage does not hold it (the same address,
// but memory of another size).
bool alias_view(const Out &o, const Tensor &src, Tensor &view) {
  const Storage *s = src.storage();
  const int64_t esize = element_size(o.dtype);
  const int64_t byte = (static_cast<const char *>(src.data_ptr()) -
                        static_cast<const char *>(s->data)) + o.delta_bytes;
  if (byte % esize)
    return false;
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < o.sizes.rank(); ++d) {
    if (o.sizes[d] == 0)
      return false;
    int64_t span = (o.sizes[d] - 1) * o.strides[d];
    (span < 0 ? lo : hi) += span;
  }
  if (byte + lo * esize < 0 || byte + (hi + 1) * esize > int64_t(s->nbytes))
    return false;
  const_cast<Storage *>(s)->refs.fetch_add(1, std::memory_order_relaxed);
  view = Tensor::make(const_cast<Storage *>(s), byte / esize, o.sizes,
                      o.strides, o.dtype);
  return true;
}

// The outputs a replay hands back (before it launches: false if an alias
// cannot be made again, and the call runs plainly).
bool replay_outputs(const Instance &in, std::initializer_list<const Tensor *> tensors,
                    std::initializer_list<Tensor *> outs,
                    std::vector<Tensor> &result) {
  const size_t nargs = tensors.size();
  for (const Out &o : in.outs) {
    Tensor t;
    if (o.kind == Out::Owned)
      t = o.held;
    else if (o.kind == Out::Alias) {
      const Tensor &src = size_t(o.source) < nargs
                              ? *tensors.begin()[o.source]
                              : *outs.begin()[o.source - nargs];
      if (!alias_view(o, src, t))
        return false;
    }
    result.push_back(std::move(t));
  }
  return true;
}

void replay(GraphCache &c, Instance &in, std::initializer_list<const Tensor *> tensors,
            std::initializer_list<Tensor *> outs, std::vector<Tensor> &result,
            void *stream) {
  NvtxRange range(c.label);
  // Two replays of one instance must not overlap: its pool is one set of
  // buffers. On one stream the order is given; across streams, wait.
  if (in.last_stream != stream)
    detail::cuda_check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), in.done, 0),
                       c.label, "cudaStreamWaitEvent");
  detail::set_device(in.device, c.label);
  detail::cuda_check(cudaGraphLaunch(in.exec, static_cast<cudaStream_t>(stream)),
                     c.label, "cudaGraphLaunch");
  in.last_stream = stream;
  // Versions first: a slot's tensor written in place is what it holds
  // before the result replaces it.
  const size_t nargs = tensors.size();
  for (int w : in.written)
    bump_version(size_t(w) < nargs ? *tensors.begin()[w] : *outs.begin()[w - nargs]);
  size_t j = 0;
  for (Tensor *o : outs)
    *o = std::move(result[j++]);
  bump(kCompiled);
  bump(kGraphReplays);
  g_counters[kLaunches].fetch_add(in.launches, std::memory_order_relaxed);
}

} // namespace

bool graph_call(GraphCache &c, std::initializer_list<const Tensor *> tensors,
                std::initializer_list<uint64_t> scalars,
                std::initializer_list<Tensor *> outs, FastPathRef fast_path) {
  if (!compiled_enabled() || force_guard_failure())
    return fast_path(); // which counts and logs the fallback
  // Every defined tensor on one CUDA device.
  int device = -1;
  auto on_one_gpu = [&](const Tensor &t) {
    if (!t.defined())
      return true;
    if (!t.device().is_cuda() || (device >= 0 && t.device().index != device))
      return false;
    device = t.device().index;
    return true;
  };
  for (const Tensor *t : tensors)
    if (!on_one_gpu(*t))
      return fast_path();
  for (Tensor *o : outs)
    if (!on_one_gpu(*o))
      return fast_path();
  if (device < 0 || autograd_records(tensors))
    return fast_path();
  void *stream = current_stream(device).handle;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capturing) !=
          cudaSuccess ||
      capturing != cudaStreamCaptureStatusNone) {
    cudaGetLastError();
    return fast_path(); // the caller's own capture records the kernels
  }

  std::vector<uint64_t> key;
  key.reserve(64);
  for (const Tensor *t : tensors)
    add_tensor(key, *t);
  for (Tensor *o : outs)
    add_tensor(key, *o);
  key.insert(key.end(), scalars.begin(), scalars.end());

  Impl &im = impl_of(c);
  std::unique_lock<std::mutex> lock(im.mu);
  auto it = im.keys.find(key);
  if (it == im.keys.end()) {
    if (im.keys.size() >= kMaxKeys) {
      if (!im.full_logged)
        log(kLogGraphs, "%s: %zu keys captured already: calls with new keys "
                        "run without a graph", c.label, kMaxKeys);
      im.full_logged = true;
      lock.unlock();
      return fast_path();
    }
    it = im.keys.emplace(std::move(key), Entry{}).first;
  }
  Entry &e = it->second;
  if (e.plain) {
    lock.unlock();
    return fast_path();
  }
  for (auto &in : e.instances)
    if (in->free()) {
      std::vector<Tensor> result;
      if (!replay_outputs(*in, tensors, outs, result)) {
        lock.unlock();
        return fast_path();
      }
      replay(c, *in, tensors, outs, result, stream);
      ++im.replays;
      return true;
    }
  if (!im.churn && im.captures >= kChurnCaptures &&
      im.replays < kChurnReplays * im.captures) {
    im.churn = true;
    log(kLogGraphs, "%s: %llu graphs captured and replayed %llu times: the "
                    "keys keep changing (a new input address per call, as in "
                    "x = f(x)?), so calls with new keys run without a graph",
        c.label, (unsigned long long)im.captures,
        (unsigned long long)im.replays);
  }
  if (im.churn) {
    lock.unlock();
    return fast_path();
  }
  if (!e.seen || e.instances.size() >= kMaxInstances) {
    // The first call with this key sets up what a capture must not (module
    // loading, cuBLASLt's heuristic); past the instances, plain calls.
    e.seen = true;
    lock.unlock();
    return fast_path();
  }

  // Capture on a private stream: what the call allocates is keyed to it in
  // the allocator, so its blocks are this graph's alone.
  auto in = std::make_unique<Instance>();
  in->device = device;
  in->pool = detail::cuda_stream_create(device);
  detail::cuda_pool_pin(in->pool, device, true);
  if (cudaError_t e = cudaEventCreateWithFlags(&in->done, cudaEventDisableTiming);
      e != cudaSuccess) {
    destroy(*in);
    detail::cuda_fail(e, c.label, "cudaEventCreateWithFlags");
  }
  std::vector<Tensor> slots_in;
  for (Tensor *o : outs)
    slots_in.push_back(*o);
  // The tensors the call was given, as replays find them again: the
  // arguments, then the slots' tensors.
  std::vector<const Tensor *> sources(tensors.begin(), tensors.end());
  for (const Tensor &t : slots_in)
    sources.push_back(&t);
  std::vector<uint32_t> versions;
  for (const Tensor *t : sources)
    versions.push_back(t->defined() ? t->storage()->version.load() : 0);
  const uint64_t launches0 = g_counters[kLaunches].load();
  cudaGraph_t graph = nullptr;
  bool ok = false;
  cudaError_t err = cudaSuccess;
  bool threw = false;
  {
    CudaStreamGuard on_pool(CudaStream{in->pool, device});
    if (cudaError_t e = cudaStreamBeginCapture(static_cast<cudaStream_t>(in->pool),
                                               cudaStreamCaptureModeRelaxed);
        e != cudaSuccess) {
      destroy(*in);
      detail::cuda_fail(e, c.label, "cudaStreamBeginCapture");
    }
    try {
      ok = fast_path();
      // The graph's last node: every replay records `done` as it ends.
      if (ok)
        detail::cuda_check(cudaEventRecordWithFlags(in->done,
                                                    static_cast<cudaStream_t>(in->pool),
                                                    cudaEventRecordExternal),
                           c.label, "cudaEventRecordWithFlags");
    } catch (...) {
      // A call CUDA does not allow in a capture (a synchronising one) ends
      // it with an error: then the call runs plainly below. Any other error
      // is the call's own.
      err = cudaStreamEndCapture(static_cast<cudaStream_t>(in->pool), &graph);
      if (graph)
        cudaGraphDestroy(graph);
      graph = nullptr;
      if (err == cudaSuccess) {
        destroy(*in);
        throw;
      }
      threw = true;
    }
    if (!threw)
      err = cudaStreamEndCapture(static_cast<cudaStream_t>(in->pool), &graph);
  }
  in->launches = g_counters[kLaunches].load() - launches0;
  // What the outputs are: the graph's own memory, or a view of a tensor
  // the call was given; anything else (memory the key does not fix) cannot
  // be handed back by a replay.
  const char *why = nullptr;
  if (err != cudaSuccess)
    why = cudaGetErrorString(err);
  for (Tensor *o : outs) {
    Out out;
    if (!o->defined()) {
    } else if (o->storage()->stream == in->pool && !o->storage()->external) {
      out.kind = Out::Owned;
      out.held = *o;
    } else {
      for (size_t k = 0; k < sources.size() && out.kind == Out::Undefined; ++k)
        if (sources[k]->defined() && sources[k]->storage() == o->storage()) {
          out.kind = Out::Alias;
          out.source = int(k);
          out.delta_bytes = static_cast<const char *>(o->data_ptr()) -
                            static_cast<const char *>(sources[k]->data_ptr());
          out.sizes = o->sizes();
          out.strides = o->strides();
          out.dtype = o->dtype();
        }
      if (out.kind == Out::Undefined)
        why = "an output is memory the call did not allocate nor was given";
    }
    in->outs.push_back(std::move(out));
  }
  for (Out &o : in->outs)
    if (o.kind == Out::Owned)
      for (const Out &p : in->outs)
        o.holders += p.kind == Out::Owned && p.held.storage() == o.held.storage();
  if (!ok && !why) {
    // A guard failed: nothing ran; the caller runs the original body, as
    // it will for every call with this key.
    if (graph)
      cudaGraphDestroy(graph);
    destroy(*in);
    e.plain = true;
    return false;
  }
  if (!why) {
    err = cudaGraphInstantiate(&in->exec, graph, 0);
    if (err != cudaSuccess)
      why = cudaGetErrorString(err);
  }
  if (graph)
    cudaGraphDestroy(graph);
  if (why) {
    // Captured work never runs: run the call plainly, from the slots as
    // they came, and never try this key again.
    cudaGetLastError();
    log(kLogGraphs, "%s: no CUDA graph for this call (%s): it and later calls "
                    "with the same key run without one", c.label, why);
    in->outs.clear();
    destroy(*in);
    e.plain = true;
    size_t j = 0;
    for (Tensor *o : outs)
      *o = slots_in[j++];
    lock.unlock();
    return fast_path();
  }
  for (size_t k = 0; k < sources.size(); ++k)
    if (sources[k]->defined() &&
        sources[k]->storage()->version.load() != versions[k])
      in->written.push_back(int(k));
  bump(kGraphCaptures);
  ++im.captures;
  log(kLogGraphs, "%s: captured a CUDA graph of %llu kernels (instance %zu "
                  "of this key, %zu keys)",
      c.label, (unsigned long long)in->launches, e.instances.size() + 1,
      im.keys.size());
  // The capture counted the call and its launches; the graph runs them now.
  detail::cuda_check(cudaGraphLaunch(in->exec, static_cast<cudaStream_t>(stream)),
                     c.label, "cudaGraphLaunch");
  in->last_stream = stream;
  e.instances.push_back(std::move(in));
  return true;
}

} // namespace kiln::rt
