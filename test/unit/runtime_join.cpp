// cat, stack, Tensor::split/chunk (kiln/join.h) and trunc_div, on both
// devices, against values written out by hand or computed with loops.
#include "runtime_test_util.h"

#include <kiln/join.h>

#include <cstdint>
#include <limits>

using kiln::Dims;
using kiln::Tensor;
using kt::values;

namespace {

class Join : public kt::DeviceTest {};

Tensor iota(Dims shape, kiln::DType dt, kiln::Device dev, double from = 0) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return (kiln::arange(n, kiln::f64) + from).view(shape).to(dt).to(dev);
}

TEST_P(Join, CatAlongEachDim) {
  // [2, 3] and [2, 2] along dim 1 (and -1): rows interleaved.
  Tensor a = iota({2, 3}, kiln::f32, dev()), b = iota({2, 2}, kiln::f32, dev(), 10);
  for (int64_t d : {1, -1}) {
    Tensor r = kiln::cat({a, b}, d);
    EXPECT_EQ(r.sizes(), (Dims{2, 5}));
    EXPECT_TRUE(r.is_contiguous());
    EXPECT_EQ(values(r), (std::vector<double>{0, 1, 2, 10, 11, 3, 4, 5, 12, 13}));
  }
  // Along dim 0, three tensors, one a transposed view (read through its
  // strides), one with no rows.
  Tensor t = iota({3, 2}, kiln::f32, dev(), 20).transpose(0, 1); // [2, 3]
  Tensor none = kiln::empty({0, 3}, kiln::f32, dev());
  Tensor r = kiln::cat({a, none, t}, 0);
  EXPECT_EQ(r.sizes(), (Dims{4, 3}));
  EXPECT_EQ(values(r),
            (std::vector<double>{0, 1, 2, 3, 4, 5, 20, 22, 24, 21, 23, 25}));
  // One tensor: a copy, not the tensor itself.
  Tensor one = kiln::cat({a}, 0);
  EXPECT_NE(one.data_ptr(), a.data_ptr());
  EXPECT_EQ(values(one), values(a));
}

TEST_P(Join, CatPiecesShareALaunch) {
  // A key cache grown by cat along the sequence dim: pieces whose rows are
  // whole 16-byte vectors, one of them a transposed view. On CUDA the copies
  // share launches, four pieces each: six pieces, two launches.
  std::vector<Tensor> pieces;
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t n = 8 * (i % 3 + 1);
    pieces.push_back(i == 2 ? iota({2, n, 3, 16}, kiln::bf16, dev(), 100 * i).transpose(1, 2)
                            : iota({2, 3, n, 16}, kiln::bf16, dev(), 100 * i));
  }
  kiln::reset_stats();
  Tensor r = kiln::cat(pieces, 2);
  if (dev().is_cuda())
    EXPECT_EQ(kiln::stats().kernel_launches, 2u);
  int64_t at = 0;
  for (const Tensor &p : pieces) {
    const int64_t n = p.size(2);
    EXPECT_EQ(values(r.slice(2, at, at + n)), values(p));
    at += n;
  }
  EXPECT_EQ(r.sizes(), (Dims{2, 3, at, 16}));
}

TEST_P(Join, CatPromotesAndSkipsEmpty1D) {
  // torch.cat promotes: i32 with f16 is f16, bf16 with f16 is f32.
  Tensor i = iota({2}, kiln::DType::i32, dev()), h = iota({3}, kiln::f16, dev(), 5);
  Tensor r = kiln::cat({i, h}, 0);
  EXPECT_EQ(r.dtype(), kiln::f16);
  EXPECT_EQ(values(r), (std::vector<double>{0, 1, 5, 6, 7}));
  EXPECT_EQ(kiln::cat({iota({1}, kiln::bf16, dev()), h}, 0).dtype(), kiln::f32);
  // A 1-D tensor of no elements takes no part in the shape rule (torch's
  // legacy rule), whatever the others' rank.
  Tensor legacy = kiln::empty({0}, kiln::f32, dev());
  Tensor m = iota({2, 2}, kiln::f32, dev());
  Tensor s = kiln::cat({legacy, m, legacy}, 1);
  EXPECT_EQ(s.sizes(), (Dims{2, 2}));
  EXPECT_EQ(values(s), values(m));
  EXPECT_EQ(kiln::cat({legacy, legacy}, 0).sizes(), (Dims{0}));
}

TEST_P(Join, CatRefusesWhatTorchRefuses) {
  Tensor a = iota({2, 3}, kiln::f32, dev());
  EXPECT_KILN_ERROR(kiln::cat({}, 0), "non-empty list");
  EXPECT_KILN_ERROR(kiln::cat({a, iota({2, 3, 1}, kiln::f32, dev())}, 0),
                    "same number of dimensions");
  EXPECT_KILN_ERROR(kiln::cat({a, iota({3, 3}, kiln::f32, dev())}, 1),
                    "must match except in dimension 1: expected size 2 but "
                    "got size 3 for tensor number 1");
  EXPECT_KILN_ERROR(kiln::cat({a, a}, 2), "out of range");
  EXPECT_KILN_ERROR(kiln::cat({a, a}, -3), "out of range");
  EXPECT_KILN_ERROR(kiln::cat({kiln::full({}, 1.0, kiln::f32, dev())}, 0),
                    "zero-dimensional");
  EXPECT_KILN_ERROR(kiln::cat({a, Tensor()}, 0), "undefined");
  if (dev().is_cuda())
    EXPECT_KILN_ERROR(kiln::cat({a, a.to(kiln::Device::cpu())}, 0),
                      "one device");
  // The shape rule compiled code checks says no exactly there.
  Dims out;
  const Dims ok[] = {Dims{2, 3}, Dims{0}, Dims{2, 4}};
  EXPECT_TRUE(kiln::gen::cat_shape(ok, 1, out));
  EXPECT_EQ(out, (Dims{2, 7}));
  const Dims bad[] = {Dims{2, 3}, Dims{3, 3}};
  EXPECT_FALSE(kiln::gen::cat_shape(bad, 1, out));
  EXPECT_TRUE(kiln::gen::cat_shape(bad, 0, out));
  EXPECT_EQ(out, (Dims{5, 3}));
  EXPECT_FALSE(kiln::gen::cat_shape({Dims{2}, Dims{}}, 0, out));
}

TEST_P(Join, Stack) {
  Tensor a = iota({2, 2}, kiln::f64, dev()), b = iota({2, 2}, kiln::f64, dev(), 10);
  Tensor r0 = kiln::stack({a, b}, 0);
  EXPECT_EQ(r0.sizes(), (Dims{2, 2, 2}));
  EXPECT_EQ(values(r0), (std::vector<double>{0, 1, 2, 3, 10, 11, 12, 13}));
  Tensor r2 = kiln::stack({a, b}, -1);
  EXPECT_EQ(r2.sizes(), (Dims{2, 2, 2}));
  EXPECT_EQ(values(r2), (std::vector<double>{0, 10, 1, 11, 2, 12, 3, 13}));
  // 0-d tensors stack into a vector.
  Tensor s = kiln::stack({kiln::full({}, 1.0, kiln::f32, dev()),
                          kiln::full({}, 2.0, kiln::f32, dev())});
  EXPECT_EQ(s.sizes(), (Dims{2}));
  EXPECT_EQ(values(s), (std::vector<double>{1, 2}));
  EXPECT_KILN_ERROR(kiln::stack({a, iota({2, 3}, kiln::f64, dev())}, 0),
                    "equal size");
  EXPECT_KILN_ERROR(kiln::stack({a, b}, 3), "out of range");
  EXPECT_KILN_ERROR(kiln::stack({}, 0), "non-empty list");
}

TEST_P(Join, SplitAndChunkAreViews) {
  Tensor x = iota({2, 7}, kiln::f32, dev());
  std::vector<Tensor> p = x.split(3, 1);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].sizes(), (Dims{2, 3}));
  EXPECT_EQ(p[2].sizes(), (Dims{2, 1}));
  EXPECT_EQ(p[1].storage(), x.storage()); // a view
  EXPECT_EQ(values(p[1]), (std::vector<double>{3, 4, 5, 10, 11, 12}));
  EXPECT_EQ(values(p[2]), (std::vector<double>{6, 13}));
  // chunk: ceil(7 / 3) = 3 per piece; 4 chunks of 7 are 2, 2, 2, 1.
  EXPECT_EQ(x.chunk(3, -1).size(), 3u);
  std::vector<Tensor> c = x.chunk(4, -1);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[3].sizes(), (Dims{2, 1}));
  // torch: 6 elements in 4 chunks are 3 pieces of 2.
  EXPECT_EQ(iota({6}, kiln::f32, dev()).chunk(4).size(), 3u);
  // Empty dims: split gives the tensor, chunk `chunks` empty pieces.
  Tensor e = kiln::empty({0, 2}, kiln::f32, dev());
  EXPECT_EQ(e.split(2).size(), 1u);
  EXPECT_EQ(e.chunk(3).size(), 3u);
  EXPECT_KILN_ERROR(x.split(0, 1), "must be positive");
  EXPECT_KILN_ERROR(x.chunk(0, 1), "must be positive");
  EXPECT_KILN_ERROR(x.split(2, 2), "out of range");
  // Joining the pieces gives the tensor back.
  EXPECT_EQ(values(kiln::cat(p, 1)), values(x));
  // Each piece is the piece view (kiln/ops.def), which compiled code
  // checks before its launches: a piece past the last raises there, so the
  // call runs its eager body.
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t a[] = {1, i, 0, 3}, b[] = {-1, i, 4, 0};
    EXPECT_EQ(values(x.apply_view(kiln::ViewKind::Piece, a)), values(p[size_t(i)]));
    EXPECT_EQ(values(x.apply_view(kiln::ViewKind::Piece, b)), values(c[size_t(i)]));
  }
  const int64_t past[] = {1, 3, 0, 3}, past_chunk[] = {0, 3, 4, 0},
                empty_chunk[] = {0, 2, 3, 0}, empty_split[] = {0, 1, 0, 2};
  EXPECT_KILN_ERROR(x.apply_view(kiln::ViewKind::Piece, past),
                    "there is no piece 3: dim 1 of size 7 makes 3");
  // 2 rows in 4 chunks are 2 pieces of 1.
  EXPECT_KILN_ERROR(x.apply_view(kiln::ViewKind::Piece, past_chunk), "no piece 3");
  EXPECT_EQ(e.apply_view(kiln::ViewKind::Piece, empty_chunk).sizes(), (Dims{0, 2}));
  EXPECT_KILN_ERROR(e.apply_view(kiln::ViewKind::Piece, empty_split), "no piece 1");
}

TEST_P(Join, TruncDivRoundsTowardZero) {
  using L = std::numeric_limits<int64_t>;
  Tensor a = kiln::from_vector<int64_t>({7, -7, 7, -7, 5, L::min(), 3}, Dims{7})
                 .to(dev());
  Tensor b = kiln::from_vector<int64_t>({2, 2, -2, -2, 0, -1, 7}, Dims{7}).to(dev());
  Tensor q = kiln::trunc_div(a, b);
  EXPECT_EQ(q.dtype(), kiln::DType::i64);
  // C++'s `/`; 0 for a zero divisor; the most negative value / -1 wraps.
  EXPECT_EQ(q.to_vector<int64_t>(),
            (std::vector<int64_t>{3, -3, -3, 3, 0, L::min(), 0}));
  Tensor i32 = kiln::trunc_div(iota({4}, kiln::DType::i32, dev(), -2), 3);
  EXPECT_EQ(i32.dtype(), kiln::DType::i32);
  EXPECT_EQ(values(i32), (std::vector<double>{0, 0, 0, 0}));
  // Floats: trunc(a / b) (torch.div(rounding_mode="trunc")).
  Tensor f = kiln::trunc_div(
      kiln::from_vector<float>({7.5f, -7.5f, 1.0f}, Dims{3}).to(dev()), 2.0);
  EXPECT_EQ(values(f), (std::vector<double>{3, -3, 0}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Join, KT_DEVICES);

} // namespace
