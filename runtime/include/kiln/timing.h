// kiln/timing.h - timing device work, for benchmarks and examples.
//
// CUDA work is timed with events on the runtime's stream, so the numbers
// are device time between two points of the stream, not host time; CPU
// work with the steady clock.
#pragma once

#include <kiln/export.h>
#include <kiln/tensor.h>

#include <cstddef>
#include <functional>
#include <vector>

KILN_API_BEGIN
namespace kiln {

// Runs fn() `warmup` times, then `reps` times `calls` back-to-back calls,
// and returns the milliseconds of each of the `reps` batches divided by
// `calls` (the time per call). calls = 1 times single calls; a larger
// `calls` measures the steady-state cost of small calls.
std::vector<double> time_calls(Device dev, const std::function<void()> &fn,
                               int warmup, int reps, int calls = 1);

// The median of `ms` (ms is reordered).
double median(std::vector<double> ms);

// Device-to-device copy bandwidth in bytes per second, counting bytes read
// plus bytes written, as the median of `reps` copies of `bytes` bytes.
double copy_bandwidth(Device dev, size_t bytes, int reps = 20);

// Microseconds per launch of an empty kernel, back to back: the floor of
// a call that runs one kernel.
double bare_launch_us(Device dev, int reps = 20);

} // namespace kiln
KILN_API_END
