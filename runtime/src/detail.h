// detail.h - host-side helpers shared by the runtime's source files.
#pragma once

#include <kiln/rt.h>
#include <kiln/tensor.h>

#include <cstdarg>
#include <cstddef>
#include <string>

namespace kiln::detail {

// printf-style formatting; fail() throws kiln::Error with the text.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// How many pieces Tensor::split(size) or chunk(chunks) (the other 0) cut a
// dim of extent n into (kiln/ops.def's piece view; positive sizes).
int64_t piece_count(int64_t n, int64_t chunks, int64_t size);

// Wraps a possibly negative dim into [0, rank); throws naming `fn`.
int wrap_dim(int d, int rank, const char *fn);

// 64-byte aligned host memory (nullptr for 0 bytes).
void *cpu_alloc(size_t nbytes);
void cpu_free(void *p);

// A new contiguous tensor (no fill), the allocation checked for `fn`.
Tensor empty_for(const char *fn, const Dims &shape, DType dt, Device dev);

// dst = convert(broadcast(src)) on dst's device; src must already be on
// that device. One kernel launch (none for an empty dst).
void copy_same_device(const Tensor &dst, const Tensor &src, const char *fn);
// The launch copy_same_device makes (false: nothing to copy). Checks that
// src broadcasts to dst.
struct CopyLaunch;
bool copy_launch(const Tensor &dst, const Tensor &src, const char *fn,
                 CopyLaunch &l);

// The OffsetCalc of make_offset_calc for any N: operand i's strides go to
// strides[d * n + i]. A null operand is a scalar (stride 0). Returns rank.
int fill_offset_calc(const Dims &out_sizes, const Tensor *const *operands,
                     int n, int64_t *sizes, int64_t *strides);

// True when two tensors share storage but differ in offset or strides (so
// an element-wise write to one may clobber unread elements of the other).
bool partially_overlaps(const Tensor &a, const Tensor &b);
// Throws when a tensor to be written has two elements at one address.
void check_no_internal_overlap(const Tensor &t, const char *fn);

} // namespace kiln::detail
