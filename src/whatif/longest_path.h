// The replay's sweep, shared by one rank's graph and the job graph: in
// topological order each node happens at the latest bound of its kept
// in-edges (source's out time + weight) plus its residual; a node without
// kept in-edges keeps its recorded time. `out_of(u, i)` gives source u's out
// time for in-edge i from the times set so far (a mark's time, GPU work's
// end, ...).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/saturating.h"

namespace stepscope::whatif {

template <class Graph, class OutOf>
void longest_path(const Graph& g, const std::vector<int64_t>& edge_w, const std::vector<int64_t>& residual,
                  int64_t dropped, uint32_t no_edge, OutOf out_of, std::vector<int64_t>& time,
                  std::vector<uint32_t>& binding) {
  time.assign(g.node_count(), 0);
  binding.assign(g.node_count(), no_edge);
  for (uint32_t v : g.order) {
    int64_t t = INT64_MIN;
    uint32_t bind = no_edge;
    for (uint32_t i = g.in_begin[v]; i < g.in_begin[v + 1]; ++i) {
      if (edge_w[i] == dropped) continue;
      const int64_t bound = analysis::saturating_add(out_of(g.edges[i].from, i), edge_w[i]);
      if (bind == no_edge || bound > t) {
        t = bound;
        bind = i;
      }
    }
    time[v] = bind == no_edge ? g.recorded_ns[v] : analysis::saturating_add(t, residual[v]);
    binding[v] = bind;
  }
}

}  // namespace stepscope::whatif
