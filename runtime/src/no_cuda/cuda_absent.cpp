// The CUDA side of a CPU-only libkiln_rt (built without nvcc): there is no
// GPU to use, and every request for one says so.
#include "../attention_impl.h"
#include "../cuda_backend.h"
#include "../detail.h"
#include "../gemm_impl.h"
#include "../reduce_programs.h"

#include <kiln/attention.h>
#include <kiln/rt.h>

namespace kiln::detail {

static const char *const kWhy =
    "no CUDA GPU support: libkiln_rt was built without CUDA";

int cuda_device_count_cached() { return 0; }

void check_cuda_device(Device d, const char *fn) {
  fail("%s: %s (%s requested)", fn, kWhy, d.str().c_str());
}

void *cuda_alloc(size_t, int device, void *, const char *fn) {
  fail("%s: %s (cuda:%d requested)", fn, kWhy, device);
}

// Nothing was ever allocated on a GPU.
void cuda_free(void *, size_t, int, void *) {}
size_t cuda_memory_in_use(int) { return 0; }
void cuda_pool_pin(void *, int, bool) {}
void set_cuda_memory_limit_bytes(size_t, int device) {
  fail("kiln::set_cuda_memory_limit: %s (cuda:%d requested)", kWhy, device);
}

void cuda_memcpy(void *, Device dst_dev, const void *, Device src_dev,
                 size_t) {
  fail("kiln::Tensor::to: %s (copy from %s to %s)", kWhy,
       src_dev.str().c_str(), dst_dev.str().c_str());
}

void cuda_copy_2d(void *, size_t, const void *, size_t, size_t, size_t,
                  int device, const char *fn) {
  fail("%s: %s (cuda:%d requested)", fn, kWhy, device);
}

void cuda_synchronize(int device) {
  fail("kiln::synchronize: %s (cuda:%d requested)", kWhy, device);
}

void *cuda_stream_create(int device) {
  fail("kiln::create_cuda_stream: %s (cuda:%d requested)", kWhy, device);
}
void cuda_stream_destroy(void *, int device) {
  fail("kiln::destroy_cuda_stream: %s (cuda:%d requested)", kWhy, device);
}
void cuda_stream_synchronize(void *, int device) {
  fail("kiln::synchronize: %s (cuda:%d requested)", kWhy, device);
}

void cuda_pointwise(const PwLaunch &l) {
  fail("kiln::%s: %s", op_name(l.op), kWhy);
}

void cuda_copy(const CopyLaunch &) { fail("kiln::Tensor::copy_: %s", kWhy); }
void cuda_copy_many(std::span<const CopyLaunch>) {
  fail("kiln::cat: %s", kWhy);
}

void cuda_fill(void *, DType, double, int64_t, int device, bool) {
  fail("kiln::full: %s (cuda:%d requested)", kWhy, device);
}

void cuda_reduce(const ReduceLaunch &l) {
  fail("kiln::%s: %s (cuda:%d requested)", reduce_kind_name(l.kind), kWhy,
       l.device);
}

void cuda_gemm(const rt::GemmArgs &, Device dev) {
  fail("kiln::rt::gemm: %s (%s requested)", kWhy, dev.str().c_str());
}

void cuda_attention(const AttnArgs &a) {
  fail("kiln::scaled_dot_product_attention: %s (%s requested)", kWhy,
       a.device.str().c_str());
}

bool cudnn_attention(const AttnArgs &) { return false; }

bool cuda_decode_attention(const DecodeArgs &) { return false; }

} // namespace kiln::detail

namespace kiln {

// The setting is kept (and read back) as in a CUDA build; no attention
// runs on CUDA here.
static AttentionBackend g_attention_backend = AttentionBackend::Auto;
void set_attention_backend(AttentionBackend b) { g_attention_backend = b; }
AttentionBackend attention_backend() { return g_attention_backend; }
bool cudnn_attention_available() { return false; }

} // namespace kiln

namespace kiln::rt {

void launch(KernelRef &k, Device dev, Dim3, Dim3, void **, unsigned) {
  detail::fail("kiln::rt::launch: cannot launch kernel %s of %s on %s: %s",
               k.name,
               k.module ? k.module->label : "?", dev.str().c_str(),
               detail::kWhy);
}

bool module_runs_on(KernelModule &, Device, const char *) { return false; }

const char *module_load_error(const KernelModule &) { return detail::kWhy; }

// No GPU, no graphs: every call runs its fast path (on the CPU).
bool graph_call(GraphCache &, std::initializer_list<const Tensor *>,
                std::initializer_list<uint64_t>, std::initializer_list<Tensor *>,
                FastPathRef fast_path) {
  return fast_path();
}

int multiprocessor_count(Device dev) {
  detail::fail("kiln::rt::multiprocessor_count: %s (%s requested)",
               detail::kWhy, dev.str().c_str());
}

} // namespace kiln::rt
