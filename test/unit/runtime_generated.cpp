// kiln/generated.h: the host helpers the generated code calls. Row spaces
// against eager reductions' shapes, row strides against direct offsets of
// random views, the launch planners' invariants (the kernels index their
// registers and rows by them), and the layout tests of the guards.
#include "runtime_reference.h"

#include <kiln/generated.h>

#include <cstring>
#include <random>

#if defined(KILN_TEST_FATBIN)
#include "launch_kernels_fatbin.h"
#endif

using namespace kiln;

namespace {

// row_space agrees with eager sum over the same dims: the same shape
// (kept and dropped) where eager accepts the dims, false where it raises
// for a repeated or out-of-range dim; non-adjacent dims, and a dim of a
// 0-d tensor, are not a row space (false) though eager reduces them.
TEST(GeneratedRowSpace, AgreesWithEagerSum) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 500; ++trial) {
    Dims shape;
    for (int i = 0, rank = int(rng() % 5); i < rank; ++i)
      shape.push_back(int64_t(rng() % 4));
    std::vector<int64_t> dims;
    for (int i = 0, nd = int(rng() % 3); i < nd; ++i)
      dims.push_back(int64_t(rng() % 9) - 4);
    RowSpace sp;
    Dims keep, drop;
    gen::ReduceGeom geo;
    bool ok;
    switch (dims.size()) {
    case 0: ok = gen::row_space(shape, {}, sp, keep, drop, geo); break;
    case 1: ok = gen::row_space(shape, {dims[0]}, sp, keep, drop, geo); break;
    default: ok = gen::row_space(shape, {dims[0], dims[1]}, sp, keep, drop, geo);
    }
    SCOPED_TRACE(shape.str() + " dims " + std::to_string(dims.size()) +
                 (dims.size() > 0 ? " " + std::to_string(dims[0]) : "") +
                 (dims.size() > 1 ? " " + std::to_string(dims[1]) : ""));
    // Eager: sum over one dim, or over two as nested sums (the higher dim
    // first, so the lower keeps its index).
    Tensor x = zeros(shape), kept, dropped;
    const int rank = shape.rank();
    auto norm = [&](int64_t d) { return d < 0 ? d + rank : d; };
    bool raised = false;
    try {
      if (dims.empty()) {
        dropped = sum(x);
      } else if (dims.size() == 1) {
        kept = sum(x, dims[0], true);
        dropped = sum(x, dims[0], false);
      } else {
        sum(x, dims[0]), sum(x, dims[1]); // raise when out of range
        int64_t a = norm(dims[0]), b = norm(dims[1]);
        if (a < b)
          std::swap(a, b);
        kept = sum(sum(x, a, true), b, true);
        dropped = sum(sum(x, a, false), b, false);
      }
    } catch (const Error &) {
      raised = true;
    }
    if (raised) {
      ASSERT_FALSE(ok);
      continue;
    }
    // Eager accepts dim 0 or -1 of a 0-d tensor; row_space declines it (the
    // guard fails and the call runs eagerly).
    const bool expect =
        (dims.empty() || rank > 0) &&
        (dims.size() < 2 || std::abs(norm(dims[0]) - norm(dims[1])) == 1);
    ASSERT_EQ(ok, expect) << "repeated or non-adjacent dims are no row space";
    if (!ok)
      continue;
    if (!dims.empty())
      ASSERT_EQ(keep.str(), kept.sizes().str());
    ASSERT_EQ(drop.str(), dropped.sizes().str());
    int64_t prod = 1;
    for (int d = 0; d < rank; ++d)
      prod *= shape[d];
    ASSERT_EQ(sp.outer * sp.R * sp.inner, prod);
    ASSERT_EQ(sp.rows, sp.outer * sp.inner);
    ASSERT_EQ(sp.rows, dropped.numel());
  }
}

// The element offset of t at index `idx` of `full` (t broadcast to it).
int64_t direct_offset(const Tensor &t, const Dims &full, const Dims &idx) {
  const int off = full.rank() - t.dim();
  int64_t o = 0;
  for (int d = off; d < full.rank(); ++d)
    if (t.sizes()[d - off] != 1)
      o += idx[d] * t.strides()[d - off];
  return o;
}

// row_strides is true exactly when each of [outer, R, inner] can be
// walked with one stride, and then its strides give every element's
// offset.
TEST(GeneratedRowStrides, RandomViewsMatchDirectOffsets) {
  std::mt19937 r(29);
  int walkable = 0, not_walkable = 0, outer_only = 0, others = 0;
  int plain_rows = 0, general_rows = 0; // row_bases_at's two paths, checked
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = 1 + int(r() % 4);
    Dims full;
    for (int d = 0; d < rank; ++d)
      full.push_back(1 + int64_t(r() % 3));
    // t: a sliced, maybe transposed view of a bigger tensor, maybe of
    // lower rank or with size-1 dims (broadcast against full).
    const int trank = rank - int(r() % 2);
    Dims ts;
    for (int d = 0; d < trank; ++d)
      ts.push_back(r() % 4 == 0 ? 1 : full[rank - trank + d]);
    Dims big;
    for (int d = 0; d < trank; ++d)
      big.push_back(ts[d] * 2 + 1);
    Tensor v = zeros(big);
    for (int d = 0; d < trank; ++d)
      v = v.slice(d, int64_t(r() % 2), big[d], 1 + int64_t(r() % 2))
              .slice(d, 0, ts[d]);
    if (trank > 1 && r() % 2 && ts[0] == ts[trank - 1])
      v = v.transpose(0, trank - 1);
    if (r() % 3 == 0)
      v = v.contiguous();
    const int64_t d0 = int64_t(r() % rank);
    const int64_t d1 = std::min<int64_t>(rank - 1, d0 + int64_t(r() % 2));
    RowSpace sp;
    Dims keep, drop;
    gen::ReduceGeom geo;
    ASSERT_TRUE(d0 == d1 ? gen::row_space(full, {d0}, sp, keep, drop, geo)
                         : gen::row_space(full, {d0, d1}, sp, keep, drop, geo));
    int64_t s[3];
    const bool ok = gen::row_strides(v, full, geo, s);
    SCOPED_TRACE(full.str() + " view " + v.sizes().str() + " strides " +
                 v.strides().str() + " dims " + std::to_string(d0) + ".." +
                 std::to_string(d1));

    // Brute force: each group's offsets, with the other groups at index
    // 0, must be affine in the group's linear index.
    const int lo[3] = {0, int(d0), int(d1) + 1}, hi[3] = {int(d0), int(d1) + 1, rank};
    bool affine = true, group_affine[3] = {true, true, true};
    int64_t step[3] = {0, 0, 0};
    for (int gi = 0; gi < 3; ++gi) {
      int64_t n = 1;
      for (int d = lo[gi]; d < hi[gi]; ++d)
        n *= full[d];
      for (int64_t lin = 0; lin < n; ++lin) {
        Dims idx;
        for (int d = 0; d < rank; ++d)
          idx.push_back(0);
        for (int64_t rest = lin, d = hi[gi] - 1; d >= lo[gi]; --d) {
          idx[int(d)] = rest % full[int(d)];
          rest /= full[int(d)];
        }
        const int64_t o = direct_offset(v, full, idx);
        if (lin == 1)
          step[gi] = o;
        if (o != lin * step[gi])
          affine = group_affine[gi] = false;
      }
    }
    ASSERT_EQ(ok, affine);
    // row_operand also walks outer dims one stride each cannot: true
    // exactly when R and inner can, and then row_bases and the R stride give
    // every element's offset (operand 1 of 2, operand 0 a contiguous full
    // output, as the host code fills them).
    RowStrides<2> st;
    Tensor out = zeros(full);
    ASSERT_TRUE(gen::row_operand(out, full, geo, st, 0));
    const bool any = gen::row_operand(v, full, geo, st, 1);
    ASSERT_EQ(any, group_affine[1] && group_affine[2]);
    ASSERT_EQ(st.nouter > 0, any && !group_affine[0]);
    // Only the operand that needs the walk takes it: the output's rows
    // are one stride apart whatever operand 1 is.
    ASSERT_FALSE(st.walk[0]);
    ASSERT_EQ(st.walk[1], st.nouter > 0);
    // Every element, through [outer, R, inner]: the index of full.
    auto each = [&](auto &&f) {
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t k = 0; k < sp.R; ++k)
          for (int64_t i = 0; i < sp.inner; ++i) {
            Dims idx;
            for (int d = 0; d < rank; ++d)
              idx.push_back(0);
            int64_t lin[3] = {o, k, i};
            for (int gi = 0; gi < 3; ++gi)
              for (int d = hi[gi] - 1; d >= lo[gi]; --d) {
                idx[d] = lin[gi] % full[d];
                lin[gi] /= full[d];
              }
            f(o, k, i, idx);
          }
    };
    if (any)
      each([&](int64_t o, int64_t k, int64_t i, const Dims &idx) {
        // One walk for both operands, and for each alone, gives each
        // element's offset.
        int64_t both[2] = {-1, -1}, one[2] = {-1, -1}, other[2] = {-1, -1};
        row_bases<0x3>(st, o, i, both);
        row_bases<0x2>(st, o, i, one);
        row_bases<0x1>(st, o, i, other);
        ASSERT_EQ(both[1] + k * st.s[1][1], direct_offset(v, full, idx));
        ASSERT_EQ(both[0] + k * st.s[0][1], direct_offset(out, full, idx));
        ASSERT_EQ(one[1], both[1]);
        ASSERT_EQ(one[0], -1) << "an operand not asked for is left alone";
        ASSERT_EQ(other[0], both[0]);
        // The kernels' entry, by row: the same (its plain-rows shortcut
        // included).
        int64_t at[2] = {-1, -1};
        row_bases_at<0x3>(sp, st, o * sp.inner + i, at);
        ASSERT_EQ(at[0], both[0]);
        ASSERT_EQ(at[1], both[1]);
      });
    if (any)
      (sp.inner == 1 && st.nouter == 0 ? plain_rows : general_rows)++;
    (any && !group_affine[0] ? outer_only : others)++;
    (ok ? walkable : not_walkable)++;
    if (ok)
      each([&](int64_t o, int64_t k, int64_t i, const Dims &idx) {
        ASSERT_EQ(o * s[0] + k * s[1] + i * s[2], direct_offset(v, full, idx));
      });
  }
  EXPECT_GT(walkable, 100);
  EXPECT_GT(not_walkable, 10) << "the views should include unwalkable ones";
  EXPECT_GT(outer_only, 5) << "and ones only row_operand walks";
  EXPECT_GT(plain_rows, 5) << "row_bases_at's plain-rows shortcut is checked";
  EXPECT_GT(general_rows, 5) << "and its general path";
}

// plan_cuda: whatever the shape, the launch covers every row once and
// every slot of a row, within what the chosen kernel can hold.
// The layout ops' check (kiln::gen::view_layout, before a compiled call's
// launches) agrees with the Tensor methods on random views of random
// layouts: the same sizes, strides and offset, and false exactly where the
// method raises; a layout op on a value a kernel wrote (dense_layout)
// agrees with the method on a contiguous tensor of that shape.
// A concatenation's result laid out as what its pieces' kernels read: the
// first layout of the same rank without a broadcast dim gives the order.
TEST(GeneratedEmptyOrdered, FollowsTheFirstFittingLayout) {
  const Device cpu = Device::cpu();
  // Heads split by a transpose: [B, H, T, D] over [B, T, H, D] memory.
  Layout heads = empty({2, 7, 3, 8}).transpose(1, 2).layout();
  Layout bcast = empty({7, 8}).expand({2, 3, 7, 8}).layout();
  Layout low = empty({7, 8}).layout();
  Tensor t = gen::empty_ordered({2, 3, 7, 16}, DType::f32, cpu,
                                {low, bcast, heads});
  EXPECT_EQ(t.sizes(), Dims({2, 3, 7, 16}));
  EXPECT_EQ(t.strides(), Dims({3 * 7 * 16, 16, 3 * 16, 1}));
  Tensor c = gen::empty_ordered({2, 3, 7, 16}, DType::f32, cpu, {low, bcast});
  EXPECT_TRUE(c.is_contiguous());
  // Size-1 dims do not count as broadcast, nor decide the order.
  Layout ones = empty({1, 3, 1, 4}).transpose(1, 3).layout();
  EXPECT_EQ(gen::empty_ordered({1, 4, 1, 3}, DType::f32, cpu, {ones}).strides()[1], 1);
}

// broadcast (the compiler's, sink-views): a tensor expanded to the shape
// it and the others broadcast to; shapes that do not broadcast fail the
// layout check (the original body then runs, and raises).
TEST(GeneratedViewLayout, BroadcastView) {
  Tensor b = empty({8}), x = empty({4, 8}), c = empty({4, 1}), y = empty({3, 8});
  Layout out;
  ASSERT_TRUE(gen::view_layout(ViewKind::Broadcast, b.layout(),
                               gen::broadcast_of({&b.sizes(), &x.sizes()}), out));
  EXPECT_EQ(out.sizes, (Dims{4, 8}));
  EXPECT_EQ(out.strides, (Dims{0, 1}));
  ASSERT_TRUE(gen::view_layout(ViewKind::Broadcast, c.layout(),
                               gen::broadcast_of({&c.sizes(), &b.sizes()}), out));
  EXPECT_EQ(out.sizes, (Dims{4, 8}));
  EXPECT_EQ(out.strides, (Dims{1, 0}));
  // The tensor of the work's shape: itself.
  ASSERT_TRUE(gen::view_layout(ViewKind::Broadcast, x.layout(),
                               gen::broadcast_of({&x.sizes(), &b.sizes()}), out));
  EXPECT_EQ(out.strides, x.strides());
  EXPECT_FALSE(gen::view_layout(ViewKind::Broadcast, x.layout(),
                                gen::broadcast_of({&x.sizes(), &y.sizes()}), out));
  Tensor v = gen::view(ViewKind::Broadcast, b, gen::broadcast_of({&b.sizes(), &x.sizes()}));
  EXPECT_EQ(v.sizes(), (Dims{4, 8}));
  EXPECT_EQ(v.storage(), b.storage());
}

TEST(GeneratedViewLayout, AgreesWithTheTensorMethods) {
  std::mt19937 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int raised = 0, viewed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Dims shape;
    for (int d = 0, r = int(pick(0, 4)); d < r; ++d)
      shape.push_back(pick(1, 4));
    Tensor t = empty(shape);
    // A random layout first: a transpose or a slice, or none.
    if (t.dim() >= 2 && pick(0, 2) == 0)
      t = t.transpose(0, t.dim() - 1);
    else if (t.dim() >= 1 && pick(0, 2) == 0)
      t = t.slice(0, 0, t.size(0), 2);
    const auto kind = static_cast<ViewKind>(pick(0, int(ViewKind::Contiguous)));
    std::vector<int64_t> args;
    const int64_t r = t.dim();
    switch (kind) {
    case ViewKind::View:
    case ViewKind::Reshape:
    case ViewKind::Expand:
      for (int d = 0, n = int(pick(0, 4)); d < n; ++d)
        args.push_back(pick(-1, 4));
      break;
    case ViewKind::Permute:
      for (int64_t d = 0; d < r + pick(-1, 1); ++d)
        args.push_back(pick(-r - 1, r));
      break;
    case ViewKind::Transpose:
      args = {pick(-r - 1, r), pick(-r - 1, r)};
      break;
    case ViewKind::Unsqueeze:
    case ViewKind::Squeeze:
      args = {pick(-r - 2, r + 1)};
      break;
    case ViewKind::Slice:
      args = {pick(-r - 1, r), pick(-5, 5), pick(-5, 5), pick(-1, 3)};
      break;
    case ViewKind::Contiguous:
      break;
    case ViewKind::Part: // the compiler's, no method: not picked
    case ViewKind::Piece: // split's and chunk's (runtime_join.cpp)
    case ViewKind::Broadcast: // the compiler's too (BroadcastView below)
      break;
    }
    // The generated code passes the arguments as a braced list.
    auto check = [&](const Layout &in, Layout &out) {
      switch (args.size()) {
      case 0: return gen::view_layout(kind, in, {}, out);
      case 1: return gen::view_layout(kind, in, {args[0]}, out);
      case 2: return gen::view_layout(kind, in, {args[0], args[1]}, out);
      case 3: return gen::view_layout(kind, in, {args[0], args[1], args[2]}, out);
      default:
        return gen::view_layout(kind, in, {args[0], args[1], args[2], args[3]}, out);
      }
    };
    if (args.size() > 4)
      args.resize(4);
    SCOPED_TRACE(std::string(view_name(kind)) + " of " + t.sizes().str() +
                 " strides " + t.strides().str());
    // On t's layout, and on a contiguous tensor of its shape (as a kernel
    // writes one: dense_layout).
    Tensor c = empty(t.sizes());
    for (const Tensor *src : {&t, &c}) {
      Layout got;
      const bool ok = check(src == &t ? t.layout() : gen::dense_layout(t.sizes()), got);
      Tensor v;
      try {
        v = src->apply_view(kind, args);
      } catch (const Error &) {
        EXPECT_FALSE(ok);
        ++raised;
        continue;
      }
      ASSERT_TRUE(ok);
      ++viewed;
      EXPECT_EQ(got.sizes, v.sizes());
      if (v.storage() == src->storage()) { // a view: its geometry
        EXPECT_EQ(got.strides, v.strides());
        EXPECT_EQ(got.offset, v.storage_offset());
      } else { // a copy (reshape, contiguous): contiguous
        EXPECT_EQ(got.strides, contiguous_strides(v.sizes()));
      }
    }
  }
  EXPECT_GT(raised, 100);
  EXPECT_GT(viewed, 300);
}

TEST(GeneratedPlanCuda, CoversRowsWithinTheKernelsLimits) {
  const int64_t sizes[] = {1, 3, 31, 32, 33, 255, 256, 1000, 1024, 1280, 4096,
                           5000, 5120, 16383, 16384, 65536, 1 << 20};
  int seen[5] = {};
  for (int64_t sms : {int64_t(1), int64_t(66), int64_t(132)})
    for (int V : {1, 2, 4, 8})
      for (int spt : {1, 2, 4, 8})
        for (int64_t rows : sizes)
          for (int64_t R : sizes)
            for (int vec : {0, 1})
            for (int ws : {0, 8})
            for (int exact : {0, 5}) {
              RowSpace sp;
              sp.rows = sp.outer = rows;
              sp.R = R;
              sp.vec = vec;
              unsigned grid = 0, block = 0;
              const gen::RedMode m =
                  gen::plan_cuda(sp, V, spt, sms, grid, block, false, false, ws, exact);
              SCOPED_TRACE("sms " + std::to_string(sms) + " V " + std::to_string(V) +
                           " slots " + std::to_string(spt) + " rows " +
                           std::to_string(rows) + " R " + std::to_string(R) +
                           " vec " + std::to_string(vec) + " warp slots " +
                           std::to_string(ws) + " exact " + std::to_string(exact));
              const int64_t slots = (R + V - 1) / V;
              ASSERT_GE(grid, 1u);
              seen[int(m)]++;
              switch (m) {
              case gen::RedMode::rows: {
                // 16-byte slots or element by element (rowsany): as given.
                ASSERT_EQ(sp.vec, vec);
                ASSERT_TRUE(sp.tpr >= 1 && sp.tpr <= 512 &&
                            (sp.tpr & (sp.tpr - 1)) == 0);
                ASSERT_EQ(block % unsigned(sp.tpr), 0u);
                // More slots than register_slots (warp_slots: f32's 8-slot
                // rows kernel) only for a warp holding a row, 16 bytes at a
                // time, among many rows.
                const bool warp_row = vec && sp.tpr == 32 && rows >= 2 * sms && slots > 32;
                // exact_slots: only a row that fills them at every thread,
                // 16 bytes at a time, among many rows.
                const bool exact_row = exact && vec && rows >= 2 * sms &&
                                       sp.vpt == exact && int64_t(sp.tpr) * exact == slots;
                const int64_t at = exact ? slots / exact : 0;
                if (exact && vec && rows >= 2 * sms && slots % exact == 0 &&
                    (at & (at - 1)) == 0 && at >= 32 && at <= 256 &&
                    slots > 32 * std::max(spt, ws) && std::min(4, spt) < exact)
                  ASSERT_TRUE(exact_row) << "a row filling exact_slots slots at a power "
                                            "of two of threads ran partly filled ones";
                ASSERT_LE(sp.vpt, exact_row  ? exact
                                  : warp_row ? std::max(spt, ws)
                                             : spt)
                    << "more slots than registers";
                ASSERT_GE(int64_t(sp.tpr) * sp.vpt, slots) << "row not covered";
                ASSERT_LE(block, 512u);
                // Groups of a warp or less: blocks of 256 threads, 128
                // element by element (gen::kRowsAnyBlock).
                if (sp.tpr <= 32)
                  ASSERT_EQ(block, vec ? 256u : gen::kRowsAnyBlock);
                // Past many short rows, a block for every group of rows.
                if (!(rows >= 2 * sms && slots <= 32))
                  ASSERT_EQ(int64_t(grid),
                            (rows + block / sp.tpr - 1) / (block / sp.tpr));
                // Groups smaller than a warp, or several rows a group, only
                // for many rows of at most 32 slots (groups of a warp's
                // lanes); several rows a group only with one slot a thread
                // (the one-slot kernel holds up to kRowsPerGroup rows), two
                // slots a thread where the kernels have them, four for f32
                // rows of 16 slots or more (gen::short_row_slots).
                ASSERT_TRUE(sp.rpg >= 1 && sp.rpg <= kRowsPerGroup);
                if (sp.tpr < 32 || sp.rpg > 1) {
                  ASSERT_LE(slots, 32);
                  ASSERT_GE(rows, 2 * sms);
                  ASSERT_EQ(block, vec ? 256u : gen::kRowsAnyBlock);
                  ASSERT_EQ(sp.vpt, slots <= 1 || spt < 2             ? 1
                                    : V == 4 && slots >= 16 && spt >= 4 ? 4
                                                                        : 2);
                  ASSERT_EQ(sp.rpg, sp.vpt == 1 ? kRowsPerGroup : 1);
                }
                break;
              }
              case gen::RedMode::loop:
                ASSERT_GT(slots, 512 * int64_t(spt))
                    << "a row that fits the rows kernel's registers, aligned "
                       "or not, is held there";
                ASSERT_EQ(block, unsigned(kLoopThreads));
                ASSERT_EQ(sp.tpr, kLoopThreads);
                ASSERT_LE(int64_t(grid), rows);
                ASSERT_EQ(sp.vec, vec) << "rows this short keep the 16-byte kernel";
                break;
              case gen::RedMode::split:
                ASSERT_EQ(block, 256u);
                ASSERT_EQ(int64_t(grid), rows * sp.splits);
                ASSERT_GE(sp.splits, 1);
                // No split without a tile of 256 slots to read.
                ASSERT_LE(int64_t(sp.splits - 1) * 256, slots);
                // A pass that only writes: a block per tile of each row.
                ASSERT_EQ(int64_t(gen::split_write_grid(sp, V)),
                          rows * ((R + 256 * V - 1) / (256 * V)));
                break;
              case gen::RedMode::cols:
              case gen::RedMode::colsreg:
              case gen::RedMode::colsplit:
                FAIL() << "column mode only where the host says the rows are "
                          "neighbours in memory";
              }
            }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
}

// Column mode (rows that are neighbours in memory: a reduction over a dim
// that is not the innermost): taken whenever the host says the rows fit it
// and there are at least a sector's worth of neighbours along inner; its
// block holds sp.cols rows of sp.tpr threads, powers of two, within the
// 512 threads of its launch bounds and the 256 values of its reductions'
// shared memory, and its grid steps over every block of rows; rows that
// fit the threads' slots are held in registers (colsreg), the others
// re-read per pass (cols), or, when the blocks of rows would fill at most
// half the multiprocessors and the rows are at least 8 tiles long, split
// over blocks (colsplit: each split at least 4 tiles).
TEST(GeneratedPlanCuda, ColumnModeFitsItsBlockAndSharedMemory) {
  const int64_t sizes[] = {1, 3, 8, 33, 256, 1000, 4096, 16383, 16384, 1 << 20};
  int cols_seen = 0, split_seen = 0, reg_seen = 0;
  for (int64_t sms : {int64_t(1), int64_t(132)})
    for (int V : {2, 4, 8})
      for (int64_t inner : {int64_t(1), int64_t(4), int64_t(8), int64_t(16), int64_t(40)})
        for (int64_t outer : {int64_t(1), int64_t(7), int64_t(300)})
          for (int64_t R : sizes)
            for (bool columns : {false, true}) {
              RowSpace sp;
              sp.outer = outer;
              sp.inner = inner;
              sp.rows = outer * inner;
              sp.R = R;
              unsigned grid = 0, block = 0;
              const gen::RedMode m =
                  gen::plan_cuda(sp, V, 4, sms, grid, block, columns);
              SCOPED_TRACE("sms " + std::to_string(sms) + " V " + std::to_string(V) +
                           " rows " + std::to_string(sp.rows) + " inner " +
                           std::to_string(inner) + " R " + std::to_string(R));
              const int min_cols = std::max(8, 2 * V);
              const bool colmode = m == gen::RedMode::cols ||
                                   m == gen::RedMode::colsreg ||
                                   m == gen::RedMode::colsplit;
              ASSERT_EQ(colmode, columns && inner >= min_cols);
              if (!colmode) {
                ASSERT_EQ(sp.cols, 0);
                continue;
              }
              ++cols_seen;
              if (m == gen::RedMode::colsreg) {
                ++reg_seen;
                ASSERT_TRUE(sp.vpt >= 1 && sp.vpt <= 4) << "more slots than registers";
                ASSERT_GE(int64_t(sp.tpr) * sp.vpt * V, R) << "row not covered";
              } else {
                ASSERT_GT(R, int64_t(sp.tpr) * 4 * V) << "a row that fits is held";
              }
              ASSERT_TRUE(sp.cols >= min_cols && sp.cols <= 32 &&
                          (sp.cols & (sp.cols - 1)) == 0);
              ASSERT_TRUE(sp.tpr >= 1 && (sp.tpr & (sp.tpr - 1)) == 0);
              ASSERT_EQ(block, unsigned(sp.tpr * sp.cols));
              ASSERT_GE(block, 32u);
              ASSERT_LE(block, 512u);
              ASSERT_LE(block / 32 * unsigned(sp.cols), 256u) << "kiln_smem";
              ASSERT_GE(grid, 1u);
              const int64_t blocks = (sp.rows + sp.cols - 1) / sp.cols;
              const int64_t tiles = (R + int64_t(sp.tpr) * V - 1) / (int64_t(sp.tpr) * V);
              if (m == gen::RedMode::colsplit) {
                ++split_seen;
                ASSERT_LE(2 * blocks, sms);
                ASSERT_GE(sp.splits, 1);
                ASSERT_GE(tiles, 4 * int64_t(sp.splits)) << "a split of fewer than 4 tiles";
                ASSERT_EQ(int64_t(grid), blocks * sp.splits);
                continue;
              }
              ASSERT_FALSE(2 * blocks <= sms && tiles >= 8) << "few long columns are split";
              ASSERT_LE(int64_t(grid) * sp.cols, sp.rows + sp.cols - 1)
                  << "a block with no row";
            }
  EXPECT_GT(cols_seen, 100);
  EXPECT_GT(reg_seen, 20);
  EXPECT_GT(cols_seen - reg_seen, 20);
  EXPECT_GT(split_seen, 0);
}

// What column mode can walk: each operand's neighbouring rows neighbours
// in memory (inner stride 1) or one element (0).
TEST(GeneratedPlanCuda, ColumnsFitOnlyRowsThatAreNeighbours) {
  RowStrides<3> st;
  for (int op = 0; op < 3; ++op) {
    st.s[op][0] = 4096;
    st.s[op][1] = 64;
    st.s[op][2] = 1;
  }
  EXPECT_TRUE(gen::columns_fit(st));
  st.s[2][2] = 0; // broadcast along inner: a [T, 1] bias
  EXPECT_TRUE(gen::columns_fit(st));
  st.s[1][2] = 64; // a transposed operand: its rows are 64 apart
  EXPECT_FALSE(gen::columns_fit(st));
}

// The 16-byte loop kernel indexes within a row in 32 bits (a tile past the
// row's end included): longer rows go element by element (sp.vec = 0, the
// loopany kernel), with 64-bit offsets.
TEST(GeneratedPlanCuda, LoopRowsPastTwoToThe30GoElementByElement) {
  for (int64_t R : {(int64_t(1) << 30) - 4, int64_t(1) << 30, (int64_t(1) << 31) + 8,
                    int64_t(1) << 33}) {
    RowSpace sp;
    sp.rows = sp.outer = 1000;
    sp.R = R;
    sp.vec = 1;
    unsigned grid = 0, block = 0;
    ASSERT_EQ(gen::plan_cuda(sp, 4, 4, 132, grid, block), gen::RedMode::loop);
    EXPECT_EQ(sp.vec, R < (int64_t(1) << 30) ? 1 : 0) << R;
    if (sp.vec)
      EXPECT_LT(R + 2 * int64_t(kLoopThreads) * 4, int64_t(INT32_MAX));
  }
}

TEST(GeneratedPlanCpu, SplitsOnlyFewLongRowsIntoChunksThatCoverThem) {
  for (int64_t rows : {int64_t(1), int64_t(2), int64_t(63), int64_t(64), int64_t(1000)})
    for (int64_t R : {int64_t(1), int64_t(1000), int64_t(65535), int64_t(65536),
                      int64_t(65537), int64_t(1) << 20, int64_t(1) << 26}) {
      RowSpace sp;
      sp.rows = rows;
      sp.R = R;
      const bool by_rows = gen::plan_cpu(sp);
      SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(R));
      ASSERT_EQ(by_rows, rows >= 64 || R < 65536);
      if (by_rows)
        continue;
      ASSERT_TRUE(sp.splits >= 1 && sp.splits <= 256);
      ASSERT_GE(sp.chunk * sp.splits, R);
      ASSERT_LT(sp.chunk * (sp.splits - 1), R) << "an empty split";
    }
}

TEST(GeneratedLayout, DenseAlignedBlocksAndFits) {
  Tensor a = zeros({4, 6});
  EXPECT_TRUE(gen::dense(a, 24));
  EXPECT_FALSE(gen::dense(a, 48)) << "broadcast to a larger output";
  EXPECT_FALSE(gen::dense(a.transpose(0, 1), 24));
  EXPECT_FALSE(gen::dense(a.slice(1, 0, 3), 12));

  alignas(16) char buf[32];
  EXPECT_TRUE(gen::aligned(buf, 16));
  EXPECT_FALSE(gen::aligned(buf + 4, 16));
  EXPECT_TRUE(gen::aligned(buf + 4, 4));

  EXPECT_EQ(gen::blocks(0), 1u);
  EXPECT_EQ(gen::blocks(1), 1u);
  EXPECT_EQ(gen::blocks(256), 1u);
  EXPECT_EQ(gen::blocks(257), 2u);
  EXPECT_EQ(gen::blocks(int64_t(1) << 50), unsigned(INT32_MAX));
  EXPECT_EQ(gen::blocks(4096, 32), 128u);
  // A small call spreads over every multiprocessor (4096 threads on 132:
  // blocks of a warp); a large one keeps blocks of 256; never below a warp.
  EXPECT_EQ(gen::pointwise_block(int64_t(1) << 26, 132), 256u);
  EXPECT_EQ(gen::pointwise_block(256 * 132, 132), 256u);
  EXPECT_EQ(gen::pointwise_block(256 * 131, 132), 128u);
  EXPECT_EQ(gen::pointwise_block(22016, 132), 128u);
  EXPECT_EQ(gen::pointwise_block(4096, 132), 32u);
  EXPECT_EQ(gen::pointwise_block(1, 132), 32u);
  // Under 128 16-byte items per multiprocessor: an element per thread.
  EXPECT_TRUE(gen::pointwise_small(4096, 132));
  EXPECT_TRUE(gen::pointwise_small(128 * 132 - 1, 132));
  EXPECT_FALSE(gen::pointwise_small(128 * 132, 132));

  OffsetCalc<1> c;
  c.rank = 2;
  c.sizes[0] = 1 << 16;
  c.sizes[1] = 1 << 15;
  c.strides[0][0] = 1 << 15;
  c.strides[1][0] = 1;
  EXPECT_FALSE(gen::fits_u32(c, int64_t(1) << 31)) << "n past INT32_MAX";
  c.sizes[0] = 1 << 15;
  EXPECT_TRUE(gen::fits_u32(c, int64_t(1) << 30));
  c.strides[0][0] = int64_t(1) << 17; // a sliced view: offsets reach 2^32
  EXPECT_FALSE(gen::fits_u32(c, int64_t(1) << 30));
}

// Divisors and dividends where a multiply-and-shift division goes wrong
// if it is going to: 1, powers of two and their neighbours, primes, the
// largest 32-bit values; each against dividends at multiples of d and one
// either side, the largest 32-bit values, and random ones.
std::vector<std::pair<uint32_t, uint32_t>> u32div_cases() {
  std::vector<uint32_t> ds = {1, 2, 3, 5, 6, 7, 10, 12, 25, 32, 100, 127, 641,
                              1000, 4095, 4097, 65535, 65537, 1000003,
                              0x7fffffffu, 0x80000000u, 0x80000001u,
                              0xfffffffeu, 0xffffffffu};
  for (int s = 1; s < 32; ++s)
    for (int64_t k : {-1, 0, 1})
      ds.push_back(uint32_t((int64_t(1) << s) + k));
  std::mt19937 rng(17);
  for (int k = 0; k < 200; ++k)
    ds.push_back(std::max<uint32_t>(1, uint32_t(rng() >> (rng() % 32))));
  std::vector<std::pair<uint32_t, uint32_t>> cases;
  for (uint32_t d : ds) {
    for (uint32_t n : {0u, 1u, 2u, 0x7fffffffu, 0x80000000u, 0xfffffffeu,
                       0xffffffffu, d - 1, d, d + 1})
      cases.push_back({n, d});
    for (uint64_t m : {2ull, 3ull, 1000ull, 0xffffffffull / d})
      for (int64_t k : {-1, 0, 1}) {
        const uint64_t n = m * d + uint64_t(k);
        if (n <= 0xffffffffull)
          cases.push_back({uint32_t(n), d});
      }
    for (int k = 0; k < 50; ++k)
      cases.push_back({uint32_t(rng()), d});
  }
  return cases;
}

// kiln::U32Div is n / d for every divisor, at the edges above (the host's
// formula; the device's __umulhi in GeneratedDevice.U32Div).
TEST(KernelAbi, U32DivIsExactDivision) {
  for (auto [n, d] : u32div_cases())
    ASSERT_EQ(U32Div(d).div(n), n / d) << n << " / " << d;
  // Every dividend below 2^20 by every divisor below 2^10.
  for (uint32_t d = 1; d < 1024; ++d) {
    const U32Div u(d);
    for (uint32_t n = 0; n < (1u << 20); n += 1 + (n & 7))
      ASSERT_EQ(u.div(n), n / d) << n << " / " << d;
  }
  EXPECT_EQ(U32Div().div(12345u), 12345u) << "the default divides by 1";
  EXPECT_EQ(U32Div(0).div(7u), 7u) << "a size of 0 never divides: as 1";
}

// OffsetCalc's 32-bit index (the divisors) and 64-bit index (division)
// give the same offsets, and set_divisors follows the sizes.
TEST(KernelAbi, OffsetCalcIndexWidthsAgree) {
  Tensor a = zeros({7, 5, 3}).permute({2, 0, 1});
  Tensor b = zeros({5});
  OffsetCalc<3> c;
  Tensor out = zeros({3, 7, 5});
  rt::make_offset_calc(out.sizes(), {&out, &a, &b}, c);
  for (int64_t e = 0; e < 105; ++e) {
    int64_t o64[3];
    uint32_t o32[3];
    c.get(e, o64);
    c.get(uint32_t(e), o32);
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(int64_t(o32[k]), o64[k]) << "element " << e << " operand " << k;
  }
}

// kiln/generated.cuh on the GPU (kernels in Inputs/launch_kernels.cu):
// row_reduce over warps' lanes and whole blocks, sum and argmax, and the
// vector loads and stores.
TEST(GeneratedDevice, RowReduceAndVectorAccess) {
  if (!cuda_available())
    GTEST_SKIP() << "no CUDA GPU: skipped";
#if !defined(KILN_TEST_FATBIN)
  GTEST_SKIP() << "built without nvcc: no test fatbin";
#else
  static rt::KernelModule m{kiln_test_fatbin, "test_module"};
  static rt::KernelRef reduce{&m, "kiln_test_row_reduce"};
  static rt::KernelRef f32x4{&m, "kiln_test_vec_f32x4"};
  static rt::KernelRef f64x2{&m, "kiln_test_vec_f64x2"};
  const Device d = Device::cuda(0);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  int rows = 37, R = 1000;
  std::vector<float> host(size_t(rows) * R);
  for (float &x : host)
    x = u(rng);
  Tensor in = from_vector(host, {rows, R}).to(d);
  for (int tpr : {1, 4, 32, 64, 256, 512}) {
    SCOPED_TRACE("threads per row " + std::to_string(tpr));
    const unsigned block = tpr <= 32 ? 256 : unsigned(tpr);
    const unsigned groups = block / unsigned(tpr);
    Tensor sums = full({rows}, std::nanf(""), f32, d);
    Tensor idx = full({rows}, -7, i64, d);
    const float *ip = in.data<const float>();
    float *sp = sums.data<float>();
    int64_t *xp = idx.data<int64_t>();
    void *args[] = {&ip, &sp, &xp, &rows, &R, &tpr};
    rt::launch(reduce, d, {(unsigned(rows) + groups - 1) / groups, 1, 1},
               {block, 1, 1}, args);
    std::vector<float> got = sums.to_vector<float>();
    std::vector<int64_t> got_idx = idx.to_vector<int64_t>();
    for (int r = 0; r < rows; ++r) {
      double want = 0;
      int64_t best = 0;
      for (int k = 0; k < R; ++k) {
        want += host[size_t(r) * R + k];
        if (host[size_t(r) * R + k] > host[size_t(r) * R + best])
          best = k;
      }
      ASSERT_NEAR(got[r], want, 1e-4) << "row " << r;
      ASSERT_EQ(got_idx[r], best) << "row " << r;
    }
  }

  int n = 1024;
  Tensor a = arange(n, f32, d), b = full({n}, std::nanf(""), f32, d);
  const float *ap = a.data<const float>();
  float *bp = b.data<float>();
  void *fargs[] = {&ap, &bp, &n};
  rt::launch(f32x4, d, {unsigned(n / 4 + 255) / 256, 1, 1}, {256, 1, 1}, fargs);
  std::vector<float> bf = b.to_vector<float>();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(bf[i], 2.0f * i) << i;
  Tensor a64 = arange(n, f64, d), b64 = full({n}, std::nan(""), f64, d);
  const double *a64p = a64.data<const double>();
  double *b64p = b64.data<double>();
  void *dargs[] = {&a64p, &b64p, &n};
  rt::launch(f64x2, d, {unsigned(n / 2 + 255) / 256, 1, 1}, {256, 1, 1}, dargs);
  std::vector<double> bd = b64.to_vector<double>();
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(bd[i], 2.0 * i) << i;
#endif
}

// The rows kernel holds a bool input's V bytes packed in 32-bit words
// (kiln::gen::Held<bool, V>); each element reads back as loaded, at every
// V a kernel can have (16 bytes over 1-, 2-, 4- and 8-byte elements).
TEST(GeneratedDevice, HeldBools) {
  if (!cuda_available())
    GTEST_SKIP() << "no CUDA GPU: skipped";
#if !defined(KILN_TEST_FATBIN)
  GTEST_SKIP() << "built without nvcc: no test fatbin";
#else
  static rt::KernelModule m{kiln_test_fatbin, "test_module_bools"};
  static rt::KernelRef k{&m, "kiln_test_held_bools"};
  const Device d = Device::cuda(0);
  int n = 4096;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> xs(static_cast<size_t>(n));
  for (float &x : xs)
    x = u(rng);
  Tensor b = from_vector(xs, {n}).to(d) > 0.3;
  for (int v : {2, 4, 8, 16}) {
    SCOPED_TRACE("V " + std::to_string(v));
    Tensor out = full({n}, -1, i32, d);
    const bool *bp = b.data<const bool>();
    int *op = out.data<int>();
    void *args[] = {&bp, &op, &n, &v};
    rt::launch(k, d, {unsigned(n / v + 127) / 128, 1, 1}, {128, 1, 1}, args);
    std::vector<int32_t> got = out.to_vector<int32_t>();
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(got[i], xs[i] > 0.3f ? 1 : 0) << "element " << i;
  }
#endif
}

// kiln::U32Div on the device: __umulhi gives what the host's formula
// gives, n / d, at the edge cases.
TEST(GeneratedDevice, U32Div) {
  if (!cuda_available())
    GTEST_SKIP() << "no CUDA GPU: skipped";
#if !defined(KILN_TEST_FATBIN)
  GTEST_SKIP() << "built without nvcc: no test fatbin";
#else
  static rt::KernelModule m{kiln_test_fatbin, "test_module_div"};
  static rt::KernelRef k{&m, "kiln_test_u32div"};
  const auto cases = u32div_cases();
  int count = int(cases.size());
  std::vector<int32_t> n, d;
  std::vector<U32Div> divs;
  for (auto [a, b] : cases) {
    n.push_back(int32_t(a));
    d.push_back(int32_t(b));
    divs.push_back(U32Div(b));
  }
  const Device dev = Device::cuda(0);
  Tensor tn = from_vector(n, {count}).to(dev), td = from_vector(d, {count}).to(dev);
  static_assert(sizeof(U32Div) == 8);
  std::vector<int64_t> packed(divs.size());
  std::memcpy(packed.data(), divs.data(), divs.size() * sizeof(U32Div));
  Tensor tdiv = from_vector(packed, {count}).to(dev);
  Tensor q = full({count}, -1, i32, dev);
  const void *np = tn.data_ptr(), *dp = td.data_ptr(), *vp = tdiv.data_ptr();
  void *qp = q.data_ptr();
  void *args[] = {&np, &dp, &vp, &qp, &count};
  rt::launch(k, dev, {unsigned(count + 255) / 256, 1, 1}, {256, 1, 1}, args);
  std::vector<int32_t> got = q.to_vector<int32_t>();
  for (size_t c = 0; c < cases.size(); ++c)
    ASSERT_EQ(uint32_t(got[c]), cases[c].first / cases[c].second)
        << cases[c].first << " / " << cases[c].second;
#endif
}

} // namespace
