// α-β cost of NCCL-style ring collectives and point-to-point sends, with the
// bottleneck link chosen by how the group is laid over nodes.
#pragma once

#include "model/cluster_spec.h"

namespace stepscope::model {

// A communicator: `size` ranks, `per_node` of them inside each node.
struct CommGroup {
  int size = 1;
  int per_node = 1;
};

// Bus bandwidth (B/s) of a ring over the group: NVLink inside one node; when
// the group spans nodes, min(NVLink, per_node × network per GPU), because each
// rank of a node drives its own NIC.
double ring_bus_bandwidth(const CommGroup& g, const ClusterSpec& c);

// Ring all-reduce of `bytes` per rank: 2(n-1)·α + 2(n-1)/n · bytes / busbw.
double all_reduce_seconds(double bytes, const CommGroup& g, const ClusterSpec& c);
// Reduce-scatter or all-gather (`bytes` = the full buffer): (n-1)·α + (n-1)/n · bytes / busbw.
double all_gather_seconds(double bytes, const CommGroup& g, const ClusterSpec& c);
double reduce_scatter_seconds(double bytes, const CommGroup& g, const ClusterSpec& c);
// All-to-all of `bytes` per rank (MoE token dispatch): each rank keeps 1/n
// and sends the rest, to the ranks of its node over NVLink and to the
// others through its own NIC, both at once.
double all_to_all_seconds(double bytes, const CommGroup& g, const ClusterSpec& c);
// One point-to-point transfer; inter_node picks the network, else NVLink.
double p2p_seconds(double bytes, bool inter_node, const ClusterSpec& c);

}  // namespace stepscope::model
