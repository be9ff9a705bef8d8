// The debug dump: per function, files people read (KIR, Graphviz, the
// plan, the generated code) and explain.json for tools.
#include "DebugDump.h"

#include "Files.h"

#include <kiln/passes/dot.h>
#include <kiln/passes/text.h>

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::plugin {

using json = nlohmann::ordered_json;

namespace {

constexpr llvm::StringLiteral kIndexMarker = "# Kiln debug dump of ";

json loc_json(const ir::Loc &l) {
  if (!l.valid())
    return nullptr;
  return json{{"file", l.file}, {"line", l.line}, {"column", l.col}};
}

json dtypes_json(const std::vector<DType> &dts) {
  json a = json::array();
  for (DType dt : dts)
    a.push_back(dtype_name(dt));
  return a;
}

// A name that is safe as one path component: `ns::f` -> `ns.f`.
std::string path_component(llvm::StringRef name) {
  std::string s;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      s += '.';
      ++i;
    } else {
      s += llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '_';
    }
  }
  if (s.empty() || s[0] == '.')
    s.insert(s.begin(), '_');
  if (s.size() > 120)
    s.resize(120);
  return s;
}

// Writes files under one folder, keeping the first error.
struct Writer {
  std::string error;

  void file(const llvm::Twine &path, llvm::StringRef data) {
    if (!error.empty())
      return;
    std::string p = path.str();
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(p))) {
      error = "cannot create '" + llvm::sys::path::parent_path(p).str() +
              "': " + ec.message();
      return;
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(p, ec, llvm::sys::fs::OF_None);
    if (ec) {
      error = "cannot write '" + p + "': " + ec.message();
      return;
    }
    os << data;
    os.close();
    if (os.has_error()) {
      error = "cannot write '" + p + "': " + os.error().message();
      os.clear_error();
    }
  }
};

// Graphviz for a KIR dump; "" when it does not parse (the .kir still
// tells the story).
std::string dot_of_kir(llvm::StringRef kir) {
  auto graphs = ir::parse_kir(kir, "dump.kir");
  if (!graphs) {
    llvm::consumeError(graphs.takeError());
    return "";
  }
  return graphs->empty() ? "" : ir::to_dot(graphs->front().graph);
}

// `dot -Tsvg -O` over every .dot file under `root`, then x.dot.svg ->
// x.svg. Best effort: without Graphviz, or when it fails, no .svg.
void render_svgs(llvm::StringRef root) {
  llvm::ErrorOr<std::string> dot = llvm::sys::findProgramByName("dot");
  if (!dot)
    return;
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(root, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".dot"))
      files.push_back(it->path());
  const std::optional<llvm::StringRef> quiet[] = {"", "", ""};
  for (size_t at = 0; at < files.size(); at += 200) {
    std::vector<llvm::StringRef> argv = {*dot, "-Tsvg", "-O"};
    for (size_t i = at; i < std::min(files.size(), at + 200); ++i)
      argv.push_back(files[i]);
    llvm::sys::ExecuteAndWait(*dot, argv, std::nullopt, quiet,
                              /*SecondsToWait=*/120);
  }
  for (const std::string &f : files) {
    std::string from = f + ".svg";
    if (llvm::sys::fs::exists(from))
      (void)llvm::sys::fs::rename(from, f.substr(0, f.size() - 4) + ".svg");
  }
}

std::string where(const DumpedFunction &f) {
  if (!f.loc.valid())
    return "";
  return " (" + llvm::sys::path::filename(f.loc.file).str() + ":" +
         std::to_string(f.loc.line) + ")";
}

std::string kernels_cu(const DumpedFunction &f, const DumpedPath &p) {
  std::string s = "// Kiln: the CUDA kernels of '" + p.code.user_name + "'" +
                  where(f) + ".\n";
  if (p.code.cuda.empty())
    return s + (f.options.eager_backend
                    ? "// None: backend=eager runs the graph with the eager "
                      "ops.\n"
                : f.cuda ? "// This fast path has no CUDA kernels.\n"
                         : "// None were generated: " + f.no_cuda_reason +
                               ".\n");
  return s + "// The comment on each line names the value it computes and "
             "where the source\n"
             "// writes it. nvcc compiles them in tu.cu, after shared helpers "
             "(vector\n"
             "// access, reductions); tu.cu is written when the compile emits "
             "code.\n\n" +
         p.code.cuda;
}

std::string host_cpp(const DumpedFunction &f, const DumpedPath &p) {
  return "// Kiln: the fast path of '" + p.code.user_name + "'" + where(f) +
         ": guards, kernel\n"
         "// launches, fused CPU loops. Compiled with the rest of this file's "
         "generated\n"
         "// host code, tu.host.cpp (written when the compile emits code), "
         "which defines\n"
         "// the helpers used here.\n\n" +
         p.code.host;
}

// "f (region 2, specialisation 1)" -> "region-2.1".
std::string path_folder(const DumpedPath &p, size_t index) {
  llvm::StringRef n = p.code.user_name;
  size_t at = n.rfind("(region ");
  if (at == llvm::StringRef::npos)
    return "path-" + std::to_string(index + 1);
  llvm::StringRef rest = n.drop_front(at + 8);
  std::string folder = "region-";
  for (char c : rest) {
    if (llvm::isDigit(c))
      folder += c;
    else if (c == ',')
      folder += '.';
    else if (c == ')')
      break;
  }
  return folder;
}

void write_path(Writer &w, const DumpedFunction &f, const DumpedPath &p,
                const std::string &dir) {
  w.file(dir + "/captured.kir", ir::print(p.captured));
  w.file(dir + "/captured.dot", ir::to_dot(p.captured));
  for (const auto &[pass, kir] : p.code.pass_dumps) {
    // "f32/01-infer-types": one folder per dtype.
    auto [dtype, step] = llvm::StringRef(pass).split('/');
    std::string base =
        dir + "/passes/" + path_component(dtype) + "/" + path_component(step);
    w.file(base + ".kir", kir);
    if (std::string dot = dot_of_kir(kir); !dot.empty())
      w.file(base + ".dot", dot);
  }
  for (const codegen::VariantGraph &g : p.code.graphs) {
    std::string base = dir + "/final/" + path_component(g.variant);
    w.file(base + ".kir", g.kir);
    w.file(base + ".dot", g.dot);
  }
  w.file(dir + "/plan.txt",
         p.code.plan.empty() ? "No kernel plan: backend=eager runs the graph "
                               "with the eager ops.\n"
                             : p.code.plan);
  if (!p.code.lowered.empty())
    w.file(dir + "/lowered.txt", p.code.lowered);
  w.file(dir + "/kernels.cu", kernels_cu(f, p));
  w.file(dir + "/host.cpp", host_cpp(f, p));
}

} // namespace

json explain_json(const DumpedFunction &f) {
  json j;
  j["function"] = f.name;
  j["location"] = loc_json(f.loc);
  j["status"] = f.compiled ? "compiled" : "eager";
  if (!f.compiled) {
    j["reason"] = f.reason;
    j["reason_location"] = loc_json(f.reason_loc);
  }

  const CompileOptions &o = f.options;
  j["options"] = {{"fullgraph", o.fullgraph},
                  {"disable", o.disable},
                  {"backend", o.eager_backend ? "eager" : "kiln"},
                  {"dtypes", dtypes_json(o.dtypes.empty()
                                             ? codegen::Options().dtypes
                                             : o.dtypes)},
                  {"unsafe_math", o.unsafe_math},
                  {"mode", o.autotune ? (o.cuda_graphs ? "max-autotune"
                                                       : "max-autotune-no-cudagraphs")
                           : o.cuda_graphs ? "reduce-overhead"
                                           : "default"},
                  {"backward", o.backward ? "compiled" : "eager"},
                  {"cuda", f.cuda}};

  // Several fast paths: their graphs one after the other, as KIR reads them.
  std::vector<ir::Graph> captured;
  for (const DumpedPath &p : f.paths)
    captured.push_back(p.captured);
  j["captured_graph"] = captured.empty() ? json() : json(ir::print(captured));
  json graphs = json::object();
  for (const DumpedPath &p : f.paths)
    for (const codegen::VariantGraph &g : p.code.graphs) {
      json &text = graphs[g.variant];
      text = text.is_null() ? g.kir : text.get<std::string>() + "\n" + g.kir;
    }
  j["graphs"] = std::move(graphs);

  json breaks = json::array();
  for (const GraphBreak &b : f.breaks)
    breaks.push_back({{"location", loc_json(b.loc)}, {"reason", b.reason}});
  j["graph_breaks"] = std::move(breaks);

  json paths = json::array(), kernels = json::array(), guards = json::array(),
       remarks = json::array();
  for (auto [pi, p] : llvm::enumerate(f.paths)) {
    const codegen::FunctionCode &c = p.code;
    paths.push_back(
        {{"name", c.user_name},
         {"symbol", c.symbol},
         {"folder", f.paths.size() == 1 ? "." : path_folder(p, pi)},
         // The compiled backward: what it saves beside the tensor arguments
         // (the bytes of each are its value's at run time), what it assumes.
         {"backward",
          {{"status", c.backward.status},
           {"gradients", c.backward.gradients},
           {"saves", c.backward.status == "compiled"
                         ? json(std::vector<std::string>{"the tensor arguments"})
                         : json::array()},
           {"saves_also", c.backward.saved},
           {"assumes", c.backward.assumptions}}}});
    for (const codegen::KernelInfo &k : c.kernels) {
      json ops = json::array();
      for (const codegen::KernelOp &op : k.ops)
        ops.push_back({{"op", op.op},
                       {"value", op.value},
                       {"location", loc_json(op.loc)}});
      json entry_points = json::array();
      for (const std::string &n : c.kernel_names)
        if (llvm::StringRef(n).starts_with(k.name + "_"))
          entry_points.push_back(n);
      kernels.push_back({{"name", k.name},
                         {"fast_path", c.user_name},
                         {"dtype", k.variant}, // the variant: "f32", "bf16_f32"
                         {"kind", k.product     ? "product"
                                 : k.reduction ? "reduction"
                                               : "pointwise"},
                         {"ops", std::move(ops)},
                         {"inputs", k.inputs},
                         {"outputs", k.outputs},
                         {"reads_bytes_per_element", k.reads_bytes_per_element},
                         {"writes_bytes_per_element", k.writes_bytes_per_element},
                         {"passes", k.passes},
                         {"runs", k.runs},
                         {"cuda_kernels", std::move(entry_points)}});
    }
    for (const codegen::GuardInfo &g : c.guards)
      guards.push_back({{"check", g.check},
                        {"message", g.message},
                        {"variants", g.variants},
                        {"fast_path", c.user_name}});
    for (const codegen::Remark &r : c.remarks)
      remarks.push_back({{"location", loc_json(r.loc)}, {"message", r.message}});
  }
  j["fast_paths"] = std::move(paths);
  j["kernels"] = std::move(kernels);
  j["guards"] = std::move(guards);
  j["remarks"] = std::move(remarks);
  return j;
}

std::string DebugDump::write(llvm::StringRef main_file) const {
  llvm::SmallString<256> root(dir_);
  llvm::sys::fs::make_absolute(root);
  std::string tu_name = path_component(llvm::sys::path::filename(main_file));
  llvm::SmallString<256> final_dir(root);
  llvm::sys::path::append(final_dir, tu_name);
  // A file without annotated functions leaves no folder (but replaces the
  // dump of a version that had some).
  if (fns_.empty() && !llvm::sys::fs::exists(final_dir))
    return "";
  if (std::error_code ec = llvm::sys::fs::create_directories(root))
    return "cannot create '" + root.str().str() + "': " + ec.message();
  llvm::SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
          root + "/." + tu_name + ".tmp", tmp))
    return "cannot create a folder in '" + root.str().str() +
           "': " + ec.message();

  // Overloads share a name: their folders get a hash of the mangled name.
  llvm::StringMap<int> uses;
  for (const DumpedFunction &f : fns_)
    ++uses[path_component(f.name)];

  Writer w;
  size_t width = 8;
  for (const DumpedFunction &f : fns_)
    width = std::max(width, f.name.size());
  std::string index = (kIndexMarker + main_file + "\n").str();
  llvm::raw_string_ostream ix(index);
  ix << llvm::left_justify("# status", 10) << llvm::left_justify("function", width)
     << "  folder (why eager)\n";
  for (const DumpedFunction &f : fns_) {
    std::string folder = path_component(f.name);
    if (uses[folder] > 1)
      folder += "-" + Hasher().add(f.mangled).hex(8);
    ix << llvm::left_justify(f.compiled ? "compiled" : "eager", 10)
       << llvm::left_justify(f.name, width) << "  " << folder << "/";
    if (!f.compiled)
      ix << "  (" << f.reason << ")";
    ix << "\n";
    std::string dir = (tmp + "/" + folder).str();
    for (auto [pi, p] : llvm::enumerate(f.paths))
      write_path(w, f, p,
                 f.paths.size() == 1 ? dir : dir + "/" + path_folder(p, pi));
    w.file(dir + "/explain.json",
           explain_json(f).dump(2, ' ', false, json::error_handler_t::replace) +
               "\n");
  }
  if (tu_cuda_)
    w.file(tmp + "/tu.cu", *tu_cuda_);
  if (tu_host_)
    w.file(tmp + "/tu.host.cpp", *tu_host_);
  w.file(tmp + "/index.txt", index);
  if (w.error.empty())
    render_svgs(tmp);

  // Replace the previous dump of this file, and only a folder Kiln wrote.
  if (w.error.empty() && llvm::sys::fs::exists(final_dir)) {
    std::string old_index;
    if (!read_file((final_dir + "/index.txt").str(), old_index) ||
        !llvm::StringRef(old_index).starts_with(kIndexMarker))
      w.error = "'" + final_dir.str().str() +
                "' exists and is not a Kiln debug dump; not replaced";
    else if (std::error_code ec = llvm::sys::fs::remove_directories(final_dir))
      w.error = "cannot remove the previous dump '" + final_dir.str().str() +
                "': " + ec.message();
  }
  if (w.error.empty())
    if (std::error_code ec = llvm::sys::fs::rename(tmp, final_dir))
      w.error = "cannot rename '" + tmp.str().str() + "' to '" +
                final_dir.str().str() + "': " + ec.message();
  if (!w.error.empty())
    (void)llvm::sys::fs::remove_directories(tmp);
  return w.error;
}

} // namespace kiln::plugin
