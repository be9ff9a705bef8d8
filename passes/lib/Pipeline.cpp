// The pass registry and the default pipeline.
#include <kiln/passes/passes.h>

#include "RewriteUtil.h"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

// The default order, in one list. Simplification enables folding and
// folding enables simplification (and both leave duplicates for cse), so
// that group repeats until nothing changes.
constexpr llvm::StringLiteral kDefaultPipeline =
    "infer-types,fuse-attention,decompose,infer-types,(fold-constants,"
    "simplify,cse),sink-views,sink-cat,(fold-constants,simplify,cse),welford,cse,"
    "infer-types,dce";

using PassFn = llvm::Expected<Graph> (*)(const Graph &, const PassOptions &);

template <Graph (*F)(const Graph &, const PassOptions &)>
llvm::Expected<Graph> infallible(const Graph &g, const PassOptions &o) {
  return F(g, o);
}

struct Registered {
  llvm::StringLiteral name;
  PassFn run;
};
const Registered kPasses[] = {
    {"infer-types", infer_types},
    {"fuse-attention", fuse_attention},
    {"decompose", decompose},
    {"cse", infallible<cse>},
    {"dce", infallible<dce>},
    {"fold-constants", infallible<fold_constants>},
    {"simplify", simplify},
    {"sink-cat", sink_cat},
    {"sink-views", sink_views},
    {"welford", welford},
    {"autodiff", autodiff},
};

PassFn find_pass(llvm::StringRef name) {
  for (const Registered &p : kPasses)
    if (p.name == name)
      return p.run;
  return nullptr;
}

struct Step {
  llvm::SmallVector<llvm::StringRef, 4> passes;
  bool repeat = false; // a `(...)` group: run to a fixed point
};

llvm::Error list_error(llvm::StringRef list, const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "pass list '" + list + "': " + what);
}

llvm::Expected<std::vector<Step>> parse_list(llvm::StringRef list) {
  std::vector<Step> steps;
  llvm::StringRef rest = list.trim();
  while (!rest.empty()) {
    Step step;
    llvm::StringRef body;
    if (rest.consume_front("(")) {
      size_t close = rest.find(')');
      if (close == llvm::StringRef::npos)
        return list_error(list, "missing ')'");
      body = rest.take_front(close);
      rest = rest.drop_front(close + 1).ltrim();
      step.repeat = true;
      if (!rest.empty() && !rest.consume_front(","))
        return list_error(list, "expected ',' after ')'");
    } else {
      auto [head, tail] = rest.split(',');
      body = head;
      rest = tail;
    }
    llvm::SmallVector<llvm::StringRef, 8> names;
    body.split(names, ',');
    for (llvm::StringRef name : names) {
      name = name.trim();
      if (name.contains('('))
        return list_error(list, "groups do not nest");
      if (!find_pass(name)) {
        std::string known;
        for (const Registered &p : kPasses)
          known += (known.empty() ? "" : ", ") + p.name.str();
        return list_error(list,
                          "unknown pass '" + name + "' (known: " + known + ")");
      }
      step.passes.push_back(name);
    }
    steps.push_back(std::move(step));
    rest = rest.ltrim();
  }
  return steps;
}

// The fixed point of a `(...)` group: nodes that compute the same (their
// value fields; names and locations do not count).
bool same_graph(const Graph &a, const Graph &b) {
  if (a.nodes.size() != b.nodes.size() || a.outputs != b.outputs ||
      a.checks.size() != b.checks.size())
    return false;
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (!same_value(a.nodes[i], b.nodes[i]))
      return false;
  return true;
}

llvm::Expected<Graph> run_one(llvm::StringRef name, Graph g,
                              const PassOptions &opts, AfterEach after_each) {
  llvm::Expected<Graph> out = find_pass(name)(g, opts);
  if (!out)
    return out.takeError();
  std::string problem = verify(*out);
  if (!problem.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "internal error: pass '" + name.str() +
            "' produced an invalid graph: " + problem);
  if (after_each)
    after_each(name, *out);
  return out;
}

} // namespace

llvm::StringRef default_pipeline() { return kDefaultPipeline; }

std::vector<llvm::StringRef> pass_names() {
  std::vector<llvm::StringRef> names;
  for (const Registered &p : kPasses)
    names.push_back(p.name);
  return names;
}

llvm::Expected<Graph> run_passes(const Graph &g, llvm::StringRef list,
                                 const PassOptions &opts,
                                 AfterEach after_each) {
  llvm::Expected<std::vector<Step>> steps = parse_list(list);
  if (!steps)
    return steps.takeError();
  Graph cur = g;
  for (const Step &step : *steps) {
    int rounds = step.repeat ? std::max(1, opts.max_fixpoint_rounds) : 1;
    for (int round = 0; round < rounds; ++round) {
      Graph before = cur;
      for (llvm::StringRef name : step.passes) {
        llvm::Expected<Graph> out =
            run_one(name, std::move(cur), opts, after_each);
        if (!out)
          return out.takeError();
        cur = std::move(*out);
      }
      if (same_graph(before, cur))
        break;
    }
  }
  return cur;
}

llvm::Expected<Graph> run_pipeline(const Graph &g, const PassOptions &opts,
                                   AfterEach after_each) {
  return run_passes(g, default_pipeline(), opts, after_each);
}

} // namespace kiln::passes
