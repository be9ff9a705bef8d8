// kiln/passes/text.h - KIR, the text form of the graph IR.
//
//   # a comment
//   graph @sin_plus_cos(%x: f32[*], %y: f32[s0, 4], %alpha: f64) {
//     # assume: s0 == s1
//     %a: f32[*] = sin %x                 loc("app.cpp":5:14)
//     %3: f32[*] = cos %a                 loc("app.cpp":6:9) name("p.first")
//     %two: f64 = const 2.0
//     %b: f32[*] = mul %a, %two
//     %c: f32[*] = add %b, 1.0
//     %s: f32[s0, 1] = sum %y {dims=[-1], keepdim=true}
//     return %c, %s
//   }
//
// Every field of a node is in the text (ir::Node::value_fields and
// origin_fields), so that parse(print(g)) is g up to node order (arguments
// come first in the text), and KIR is the one serialisation of a graph:
// kiln-opt, the plugin's precompiled-header payload and symbol
// fingerprints. After a node (or argument) come its source location
// `loc("file":line:col)` and, where `%name` cannot carry the user's name
// (not an identifier, or not unique), `name("...")`. (`# check:` lines,
// Graph::checks, are printed for the reader and not read back.)
//
// A type is `<dtype>[dims]` for a tensor (`[*]` unknown rank, `[]` rank 0,
// dims are extents or symbols `s<N>`) or a bare f64 / i64 / b8 for a weak
// host scalar. Header arguments become Input / ScalarInput nodes. Node types
// may be omitted (type inference fills them); the printer always prints
// them, and parse(print(g)) prints as g. Operands are values or numeric
// literals (a literal becomes a Constant node: f64 when written with `.`,
// an exponent, inf or nan, else i64). Reductions, composites and
// reduce_size take attributes after the operands: `{dims=[...]}` (the dims
// reduced, negative from the end, `[]` for all) and optionally
// `keepdim=true|false` (default false); other ops take none. Statements end
// at a newline or `;`.
// `# assume: <relation>` inside a graph body is Graph::assumptions.
#pragma once

#include <kiln/passes/ir.h>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::ir {

std::string to_string(const Shape &s); // "[*]", "[]", "[s0, 4]"
std::string to_string(const Type &t);  // "f32[s0, 4]", "f64"
// A Constant node's value as KIR writes it ("2.0", "-0.0", "nan", "3").
std::string constant_text(const Node &n);
// The attributes of a reduction, composite or reduce_size node as KIR
// writes them ("{dims=[-1], keepdim=true}"); "" for other ops.
std::string attributes_text(const Node &n);

// The name the printer gives each node: `%name` when the name is a unique
// identifier in the graph, else `%<n>`, n being the node id when the
// arguments are the graph's first nodes (in general: the position of the
// node's definition in the printed text).
std::vector<std::string> value_names(const Graph &g);

struct PrintOptions {
  bool locations = true; // loc(...) of nodes and arguments
  // The user's value names (`%name`, `name("...")`); false: every value is
  // `%<n>`. Without both, the text is what the graph computes (the plugin's
  // fingerprint of a graph: renaming or moving code keeps it).
  bool names = true;
};
std::string print(const Graph &g, const PrintOptions &opts = {});
std::string print(llvm::ArrayRef<Graph> graphs); // separated by blank lines

// A graph as parsed, with where each node came from in the text.
struct TextPos {
  unsigned line = 0, col = 0; // 1-based; col counts bytes
};
struct ParsedGraph {
  Graph graph;
  std::vector<TextPos> node_pos; // per node: its `%name` (or header arg)
  std::vector<bool> typed;       // per node: the text gave its type
};

// Parses one or more graphs. On malformed input the error's message is a
// clang-style diagnostic: "file:line:col: error: <message>", the source line
// and a caret (see format_diagnostic).
llvm::Expected<std::vector<ParsedGraph>> parse_kir(llvm::StringRef text,
                                                   llvm::StringRef filename);

// "file:line:col: error: message\n<source line>\n<caret>\n". `text` is the
// whole source (may be empty: then no source line is shown).
std::string format_diagnostic(llvm::StringRef filename, llvm::StringRef text,
                              unsigned line, unsigned col,
                              llvm::StringRef message);

} // namespace kiln::ir
