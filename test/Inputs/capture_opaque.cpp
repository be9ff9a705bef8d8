// Functions whose bodies the capture cannot see (they are in this other
// TU), for the graph-break tests of test/plugin/capture.
#include <kiln/kiln.h>

static int g_calls = 0;

void opaque_log(const kiln::Tensor &) { ++g_calls; }
int opaque_calls() { return g_calls; }
kiln::Tensor opaque_scale(const kiln::Tensor &x) { return x * 3.0; }
