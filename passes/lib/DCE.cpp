// dce: drops nodes that no output depends on. Arguments always stay: they
// are the graph's signature.
#include <kiln/passes/passes.h>

#include "RewriteUtil.h"

namespace kiln::passes {

using namespace kiln::ir;

Graph dce(const Graph &g, const PassOptions &) {
  std::vector<bool> live(g.nodes.size(), false);
  for (NodeId o : g.outputs)
    live[o] = true;
  // Operands come before their users: one backward sweep finds them all.
  for (NodeId id = (NodeId)g.nodes.size() - 1; id >= 0; --id) {
    if (op_info(g.nodes[id].op).kind == OpKind::Argument)
      live[id] = true;
    if (live[id])
      for (NodeId o : g.nodes[id].operands)
        live[o] = true;
  }
  GraphBuilder b = builder_like(g);
  std::vector<NodeId> map(g.nodes.size(), -1);
  for (NodeId id = 0; id < (NodeId)g.nodes.size(); ++id)
    if (live[id])
      map[id] = copy_node(b, g.nodes[id], map);
  return finish(b, g, map);
}

} // namespace kiln::passes
