// Calls the capture cannot see into (built without the plugin, in a TU of
// their own): each is a graph break in the fuzzer's functions.
#include <kiln/kiln.h>

static volatile int64_t g_seen = 0;

void fuzz_opaque_log(const kiln::Tensor &t) { g_seen = g_seen + t.numel(); }
kiln::Tensor fuzz_opaque_scale(const kiln::Tensor &t) { return t * 0.5; }
