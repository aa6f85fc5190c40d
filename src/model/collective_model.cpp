#include "model/collective_model.h"

#include <algorithm>

namespace stepscope::model {
namespace {

bool spans_nodes(const CommGroup& g) { return g.size > std::max(1, g.per_node); }

double step_latency(const CommGroup& g, const ClusterSpec& c) {
  return spans_nodes(g) ? c.gpu.network_latency_s : c.gpu.nvlink_latency_s;
}

}  // namespace

double ring_bus_bandwidth(const CommGroup& g, const ClusterSpec& c) {
  double nvlink = c.gpu.nvlink_achievable_Bps();
  if (!spans_nodes(g)) return nvlink;
  // NCCL builds one ring per NIC; each ring crosses every node boundary once,
  // so a node's `per_node` ranks push the ring through `per_node` NICs.
  return std::min(nvlink, std::max(1, g.per_node) * c.gpu.network_achievable_Bps());
}

double all_reduce_seconds(double bytes, const CommGroup& g, const ClusterSpec& c) {
  if (g.size <= 1 || bytes <= 0) return 0;
  double n = g.size;
  return 2 * (n - 1) * step_latency(g, c) + 2 * (n - 1) / n * bytes / ring_bus_bandwidth(g, c);
}

double all_gather_seconds(double bytes, const CommGroup& g, const ClusterSpec& c) {
  if (g.size <= 1 || bytes <= 0) return 0;
  double n = g.size;
  return (n - 1) * step_latency(g, c) + (n - 1) / n * bytes / ring_bus_bandwidth(g, c);
}

double reduce_scatter_seconds(double bytes, const CommGroup& g, const ClusterSpec& c) {
  return all_gather_seconds(bytes, g, c);
}

double all_to_all_seconds(double bytes, const CommGroup& g, const ClusterSpec& c) {
  if (g.size <= 1 || bytes <= 0) return 0;
  const double n = g.size, k = std::min(n, static_cast<double>(std::max(1, g.per_node)));
  const double in_node = (k - 1) / n * bytes / c.gpu.nvlink_achievable_Bps();
  const double across = n > k ? (n - k) / n * bytes / c.gpu.network_achievable_Bps() : 0;
  return (n - 1) * step_latency(g, c) + std::max(in_node, across);
}

double p2p_seconds(double bytes, bool inter_node, const ClusterSpec& c) {
  if (bytes <= 0) return 0;
  if (inter_node) return c.gpu.network_latency_s + bytes / c.gpu.network_achievable_Bps();
  return c.gpu.nvlink_latency_s + bytes / c.gpu.nvlink_achievable_Bps();
}

}  // namespace stepscope::model
