#include "CompileRegions.h"

#include "Capture.h"
#include "Diag.h"
#include "Rewrite.h"

#include <kiln/passes/text.h>

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/Sema/Sema.h>

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>


using namespace clang;

namespace kiln::plugin {
namespace {

std::string tensor_header(ASTContext &ctx) {
  for (NamedDecl *nd :
       ctx.getTranslationUnitDecl()->lookup(&ctx.Idents.get("kiln")))
    if (auto *ns = dyn_cast<NamespaceDecl>(nd))
      for (NamedDecl *t : ns->getPrimaryContext()->lookup(&ctx.Idents.get("Tensor")))
        if (auto *rd = dyn_cast<CXXRecordDecl>(t))
          return to_ir_loc(ctx, rd->getLocation()).file;
  return "";
}

// --- What a rewritten function carries (mark_rewritten), as JSON.

llvm::json::Value loc_json(const ir::Loc &l) {
  return llvm::json::Array{l.file, int64_t(l.line), int64_t(l.col)};
}

ir::Loc loc_from(const llvm::json::Value *v) {
  ir::Loc l;
  if (const llvm::json::Array *a = v ? v->getAsArray() : nullptr; a && a->size() == 3) {
    l.file = (*a)[0].getAsString().value_or("").str();
    l.line = unsigned((*a)[1].getAsInteger().value_or(0));
    l.col = unsigned((*a)[2].getAsInteger().value_or(0));
  }
  return l;
}

// The graph is KIR (locations and names included: the one serialisation
// of a graph, kiln/passes/text.h); the rest of the spec is JSON around it.
llvm::json::Value spec_json(const codegen::FunctionSpec &s, bool eager) {
  llvm::json::Array args;
  for (codegen::ArgKind k : s.args)
    args.push_back(int64_t(k));
  llvm::json::Array checks;
  for (const codegen::CallerCheck &c : s.caller_checks)
    checks.push_back(llvm::json::Array{c.check, c.message});
  llvm::json::Array into;
  for (int i : s.into)
    into.push_back(int64_t(i));
  llvm::json::Array pins;
  for (const std::vector<DType> &dts : s.arg_dtypes) {
    llvm::json::Array names;
    for (DType d : dts)
      names.push_back(dtype_name(d));
    pins.push_back(std::move(names));
  }
  return llvm::json::Object{{"symbol", s.symbol},
                            {"arg_dtypes", std::move(pins)},
                            {"user", s.user_name},
                            {"eager", eager},
                            {"args", std::move(args)},
                            {"loc", loc_json(s.loc)},
                            {"graph", ir::print(s.graph)},
                            {"caller_checks", std::move(checks)},
                            {"into", std::move(into)}};
}

// Fails (with why) when the payload is not what spec_json wrote.
std::string spec_from_json(const llvm::json::Value &v,
                           codegen::FunctionSpec &s, bool &eager) {
  const llvm::json::Object *o = v.getAsObject();
  if (!o)
    return "not an object";
  s.symbol = o->getString("symbol").value_or("").str();
  s.user_name = o->getString("user").value_or("").str();
  eager = o->getBoolean("eager").value_or(false);
  s.loc = loc_from(o->get("loc"));
  if (const llvm::json::Array *a = o->getArray("args"))
    for (const llvm::json::Value &k : *a)
      s.args.push_back(codegen::ArgKind(k.getAsInteger().value_or(0)));
  if (const llvm::json::Array *a = o->getArray("caller_checks"))
    for (const llvm::json::Value &c : *a) {
      const llvm::json::Array *pair = c.getAsArray();
      if (!pair || pair->size() != 2)
        return "a caller check is not a pair";
      s.caller_checks.push_back(
          {(*pair)[0].getAsString().value_or("").str(),
           (*pair)[1].getAsString().value_or("").str()});
    }
  if (const llvm::json::Array *a = o->getArray("arg_dtypes"))
    for (const llvm::json::Value &names : *a) {
      s.arg_dtypes.emplace_back();
      if (const llvm::json::Array *n = names.getAsArray())
        for (const llvm::json::Value &d : *n)
          if (std::optional<DType> t =
                  ir::dtype_from_name(d.getAsString().value_or("")))
            s.arg_dtypes.back().push_back(*t);
    }
  if (const llvm::json::Array *a = o->getArray("into"))
    for (const llvm::json::Value &i : *a)
      s.into.push_back(int(i.getAsInteger().value_or(codegen::FunctionSpec::kNotInto)));
  std::optional<llvm::StringRef> kir = o->getString("graph");
  if (!kir)
    return "no graph";
  auto parsed = ir::parse_kir(*kir, "<precompiled header>");
  if (!parsed)
    return llvm::toString(parsed.takeError());
  if (parsed->size() != 1)
    return "not one graph";
  s.graph = std::move((*parsed)[0].graph);
  return ir::verify(s.graph);
}

} // namespace

CompileResult compile_regions(const CompileRequest &req, CompileMemory &mem) {
  CompileResult res;
  ASTContext &ctx = req.ctx;
  FunctionDecl *fd = req.fd;
  const std::string &name = req.name;
  res.tensor_header = tensor_header(ctx);
  for (const ParmVarDecl *p : fd->parameters())
    if (!pinned_dtypes(p).empty() &&
        !is_kiln_tensor(p->getType().getNonReferenceType()))
      req.diag.warning(WarningGroup::Attribute, p->getLocation(),
                       "kiln: [[kiln::dtype]] applies to a kiln::Tensor "
                       "parameter; '" + p->getNameAsString() +
                           "' is not one, so it is ignored");

  codegen::Options copts;
  if (!req.opts.dtypes.empty())
    copts.dtypes = req.opts.dtypes;
  copts.unsafe_math = req.opts.unsafe_math;
  copts.cuda_graphs = req.opts.cuda_graphs;
  copts.autotune = req.opts.autotune;
  copts.backward = req.opts.backward;
  copts.backward_args = req.opts.backward_args;
  copts.cuda = req.cuda;
  auto generate = [&](const codegen::FunctionSpec &spec, bool eager) {
    codegen::FunctionCode code;
    std::string err = guarded([&] {
      if (eager) {
        code = codegen::eager_function(spec);
        return;
      }
      // The combinations the dtype profile recorded for this fast path.
      if (req.profile)
        if (auto it = req.profile->by_symbol.find(spec.symbol);
            it != req.profile->by_symbol.end()) {
          codegen::FunctionSpec with = spec;
          with.observed_dtypes = it->second;
          code = codegen::compile_function(with, copts);
          return;
        }
      code = codegen::compile_function(spec, copts);
    });
    if (!err.empty()) {
      code = codegen::FunctionCode();
      code.error = "internal error in code generation (a Kiln bug, please "
                   "report it): " + err;
      code.error_loc = spec.loc;
    }
    return code;
  };

  std::vector<codegen::FunctionSpec> specs;
  auto dump = [&](const std::vector<codegen::FunctionSpec> &fs,
                  const std::vector<codegen::FunctionCode> &fc) {
    if (!req.args.dump)
      return;
    llvm::errs() << "// kiln-dump: rewrite " << name << "\n";
    fd->print(llvm::errs(), ctx.getPrintingPolicy());
    llvm::errs() << "\n";
    for (size_t i = 0; i < fs.size(); ++i)
      llvm::errs() << "// kiln-dump: graph " << fs[i].user_name << "\n"
                   << ir::print(fs[i].graph) << "// kiln-dump: plan "
                   << fs[i].user_name << "\n"
                   << fc[i].plan << "\n";
  };

  // A body rewritten already (a PCH built with the plugin): its fast paths
  // again, from what the rewrite stored; the body stays.
  if (is_rewritten(fd)) {
    llvm::Expected<llvm::json::Value> stored =
        llvm::json::parse(rewritten_payload(fd));
    const llvm::json::Array *fns =
        stored ? stored->getAsArray() : nullptr;
    if (!stored)
      llvm::consumeError(stored.takeError());
    if (!fns) {
      req.diag.error(fd->getLocation(), "kiln: the compiled form of '" + name +
                                            "' in this precompiled header is "
                                            "unreadable (a Kiln bug)");
      return res;
    }
    for (const llvm::json::Value &v : *fns) {
      codegen::FunctionSpec spec;
      bool eager = false;
      codegen::FunctionCode code;
      if (std::string why = spec_from_json(v, spec, eager);
          why.empty())
        code = generate(spec, eager);
      else
        code.error = "unreadable graph (" + why + ")";
      if (!code.error.empty()) {
        req.diag.error(fd->getLocation(),
                       "kiln: cannot generate again the fast path of '" + name +
                           "' from a precompiled header: " + code.error);
        return res;
      }
      res.graphs.push_back(spec.graph);
      res.codes.push_back(std::move(code));
      specs.push_back(std::move(spec));
    }
    dump(specs, res.codes);
    return res;
  }

  if (isa<CXXConstructorDecl, CXXDestructorDecl>(fd)) {
    req.problem(fd->getLocation(), "constructors and destructors are not "
                                   "supported yet");
    return res;
  }
  if (fd->isConsteval()) {
    req.problem(fd->getLocation(), "a consteval function never runs at run "
                                   "time: there is nothing to compile");
    return res;
  }

  PlanEnv env;
  env.original_bodies = &mem.bodies;
  env.original_inits = &mem.inits;
  env.instantiate = [&](const FunctionDecl *f) {
    req.sema.InstantiateFunctionDefinition(fd->getLocation(),
                                           const_cast<FunctionDecl *>(f),
                                           /*Recursive=*/false,
                                           /*DefinitionRequired=*/false,
                                           /*AtEndOfTU=*/false);
  };
  Stmt *original = fd->getBody();
  FunctionPlan plan;
  if (std::string err = guarded([&] { plan = plan_function(ctx, fd, original, env); });
      !err.empty()) {
    req.problem(fd->getLocation(), "internal error in the capture (a Kiln bug, "
                                   "please report it): " + err);
    return res;
  }
  if (plan.silent)
    return res; // clang reported the error
  if (!plan.fatal.empty()) {
    req.problem(plan.fatal_loc, plan.fatal);
    return res;
  }
  for (const Break &b : plan.breaks)
    res.breaks.push_back({b.loc, b.reason});
  if (req.opts.fullgraph && (!plan.breaks.empty() || !plan.splits.empty())) {
    std::vector<Break> all = plan.breaks;
    for (const Break &s : plan.splits)
      all.push_back({s.loc, s.reason + " (the function would be compiled as "
                                       "more than one graph)"});
    for (const Break &b : all)
      req.problem(b.loc, b.reason);
    return res;
  }

  // One fast path per specialisation of each region.
  const bool single = plan.breaks.empty() && plan.regions.size() == 1 &&
                      plan.regions[0].specs.size() == 1;
  const bool eager = req.opts.eager_backend;
  std::vector<std::vector<std::string>> symbols(plan.regions.size());
  std::vector<codegen::FunctionCode> codes;
  bool reported = false;
  for (const Region &r : plan.regions) {
    std::vector<std::string> syms;
    std::vector<codegen::FunctionSpec> rspecs;
    std::vector<codegen::FunctionCode> rcodes;
    SourceLocation at = r.stmts.front()->getBeginLoc();
    bool ok = true;
    for (auto [k, spec] : llvm::enumerate(r.specs)) {
      if (spec.graph.outputs.empty()) {
        syms.push_back("");
        continue;
      }
      codegen::FunctionSpec fs;
      fs.graph = spec.graph;
      for (const RegionInput &in : spec.inputs) {
        fs.args.push_back(in.kind);
        fs.arg_dtypes.push_back(in.kind == codegen::ArgKind::Tensor
                                    ? in.slot.pinned_dtypes()
                                    : std::vector<DType>{});
      }
      fs.user_name = name;
      if (!single) {
        fs.user_name += " (region " + std::to_string(r.index);
        if (r.specs.size() > 1)
          fs.user_name += ", specialisation " + std::to_string(k + 1);
        fs.user_name += ")";
      }
      fs.symbol = req.symbol(single ? spec.fingerprint
                                    : spec.fingerprint + "#" +
                                          std::to_string(r.index) + "." +
                                          std::to_string(k));
      fs.loc = to_ir_loc(ctx, single ? fd->getLocation() : at);
      fs.caller_checks = caller_checks(spec);
      for (const RegionOutput &o : spec.outputs) {
        int into = o.kind == RegionOutput::CopyInto
                       ? codegen::FunctionSpec::kInto
                       : codegen::FunctionSpec::kNotInto;
        for (auto [i, in] : llvm::enumerate(spec.inputs))
          if (into == codegen::FunctionSpec::kInto && !in.expr &&
              in.slot == o.slot)
            into = int(i);
        fs.into.push_back(into);
      }
      codegen::FunctionCode code = generate(fs, eager);
      if (!code.error.empty()) {
        llvm::StringRef why = code.error;
        why.consume_front("cannot compile '" + fs.user_name + "': ");
        SourceLocation where = req.source_loc(code.error_loc, at);
        if (single || req.opts.fullgraph)
          req.problem(where, why.str());
        else
          req.diag.warning(WarningGroup::EagerFallback, where,
                           "kiln: cannot compile region " +
                                      std::to_string(r.index) + " of '" +
                                      name + "': " + why.str() +
                                      "; it runs eagerly");
        reported = true;
        ok = false;
        break;
      }
      syms.push_back(fs.symbol);
      rspecs.push_back(std::move(fs));
      rcodes.push_back(std::move(code));
    }
    if (!ok)
      continue;
    symbols[r.index - 1] = std::move(syms);
    for (auto &s : rspecs)
      specs.push_back(std::move(s));
    for (auto &c : rcodes)
      codes.push_back(std::move(c));
  }
  if (codes.empty()) {
    if (!reported && !plan.breaks.empty())
      req.problem(plan.breaks.front().loc, plan.breaks.front().reason);
    else if (!reported && req.args.remarks)
      req.diag.remark(fd->getLocation(),
                      "kiln: '" + name + "' has no tensor ops to compile; it "
                      "runs as written",
                      name);
    return res;
  }

  RewriteRecord record;
  std::string err;
  if (std::string crash = guarded([&] {
        err = rewrite_function(req.sema, fd, plan, symbols, record);
      });
      !crash.empty())
    err = crash;
  if (!err.empty()) {
    req.problem(fd->getLocation(), "internal error in the rewrite (a Kiln bug, "
                                   "please report it): " + err);
    return res;
  }
  mem.bodies[fd] = original;
  for (auto [vd, init] : record.original_inits)
    mem.inits[vd] = init;
  llvm::json::Array stored;
  for (size_t i = 0; i < specs.size(); ++i)
    stored.push_back(spec_json(specs[i], eager));
  std::string payload;
  llvm::raw_string_ostream(payload) << llvm::json::Value(std::move(stored));
  mark_rewritten(ctx, fd, payload);

  dump(specs, codes);
  if (req.args.remarks) {
    for (const codegen::FunctionCode &c : codes)
      for (const codegen::Remark &r : c.remarks)
        req.diag.remark(req.source_loc(r.loc, fd->getLocation()),
                        "kiln: " + r.message, name);
    size_t compiled = 0;
    for (const auto &s : symbols)
      compiled += !s.empty();
    for (const Break &s : plan.splits)
      req.diag.remark(s.loc,
                      "kiln: '" + name + "' is compiled as two regions "
                      "from here: " + s.reason,
                      name);
    for (const Break &b : plan.breaks)
      if (!req.diag.shows(WarningGroup::GraphBreak)) // else a warning below
        req.diag.remark(b.loc, "kiln: graph break in '" + name + "': " +
                                   b.reason + "; compiled " +
                                   std::to_string(compiled) +
                                   (compiled == 1 ? " region" : " regions") +
                                   " around it",
                        name);
  }
  // Off unless asked for (-fplugin-arg-kiln-Wgraph-break); as an error
  // (-fplugin-arg-kiln-Werror=graph-break) it is "fullgraph" for every
  // function of the file.
  for (const Break &b : plan.breaks)
    req.diag.warning(WarningGroup::GraphBreak, b.loc,
                     "kiln: graph break in '" + name + "': " + b.reason +
                         "; it runs eagerly between compiled regions");
  for (const codegen::FunctionSpec &s : specs)
    res.graphs.push_back(s.graph);
  res.codes = std::move(codes);
  return res;
}

} // namespace kiln::plugin
