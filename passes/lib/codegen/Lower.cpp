// lower_function: every variant's kernels and fast-path function, and the
// entry that dispatches on the dtype; then the passes over the result.
#include "Lower.h"

#include <algorithm>

namespace kiln::codegen {

low::Program lower_function(const FunctionSpec &spec,
                            const std::vector<Variant> &variants,
                            const Options &opts) {
  low::Program p;
  p.symbol = spec.symbol;
  p.user_name = spec.user_name;
  p.loc = spec.loc;
  p.args = spec.args;
  p.outputs = spec.graph.outputs.size();
  p.cuda = opts.cuda;
  // A graph of no kernels would replay nothing.
  p.cuda_graphs = opts.cuda_graphs && opts.cuda &&
                  std::any_of(variants.begin(), variants.end(),
                              [](const Variant &v) { return v.plan.launched() > 0; });
  p.autotune =
      opts.autotune && opts.cuda &&
      std::any_of(variants.begin(), variants.end(), [&](const Variant &v) {
        return std::any_of(v.plan.kernels.begin(), v.plan.kernels.end(),
                           [&](const sched::Kernel &k) {
                             return k.kind == sched::Kernel::Kind::Product &&
                                    ir::is_gemm(v.graph.node(k.product).op);
                           });
      });
  for (const Variant &v : variants)
    p.variants.push_back(lower_variant(spec, v, opts));
  p.entry = lower_entry(spec, variants, opts.backward);
  low::lower_caller_checks(spec, p);
  low::pair_sincos(p);
  return p;
}

} // namespace kiln::codegen
