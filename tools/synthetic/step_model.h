// A simulated data-parallel transformer training step, producing the records
// a PyTorch 2.x profiler would write for it: ATen operator trees on the main
// and autograd threads, runtime/driver launches with ac2g flows, kernels on a
// compute stream with queueing, NCCL all-reduce kernels on their own stream,
// H2D/D2H copies, memsets, allocator samples, forward->backward flows and
// ProfilerStep#N ranges on host and device.
//
// Times are integer nanoseconds; the host and GPU clocks advance by sampled
// costs (launch overheads, kernel durations from size and bandwidth), so the
// trace has realistic overlap, idle gaps and launch queueing.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "synthetic/synthetic_spec.h"
#include "synthetic/trace_event.h"

namespace stepscope::synth {

class StepModel {
 public:
  StepModel(const SyntheticSpec& spec, int rank);
  // Records point into the model's tables: it is neither copied nor moved.
  StepModel(const StepModel&) = delete;
  StepModel& operator=(const StepModel&) = delete;

  // Simulates the next step and appends its records in the order a profiler
  // would hand them out (host records by start, then their device records).
  void next_step(std::vector<TraceEvent>& out);

  int64_t start_ns() const { return start_ns_; }  // when profiling began
  int64_t now_ns() const { return host_ns_; }       // host clock after the last step
  int64_t host_pid() const { return host_pid_; }
  int64_t main_tid() const { return main_tid_; }
  int64_t autograd_tid() const { return bwd_tid_; }
  int device() const { return device_; }
  int compute_stream() const { return kComputeStream; }
  int nccl_stream() const { return kNcclStream; }

  static constexpr int kComputeStream = 7;
  static constexpr int kNcclStream = 28;

 private:
  struct Kernel {
    std::string name;
    KernelShape shape;
    bool driver_launch = false;  // launched through cuLaunchKernelEx (cuBLAS/cuDNN)
  };
  struct PendingBackward {
    std::string node;   // "AddmmBackward0"
    int64_t sequence;
    int64_t flow_id;
    int kind;           // which backward body to emit
  };

  uint64_t rand();
  int64_t jitter(int64_t ns, int pct);  // ns +- pct %

  // Host op tree.
  size_t open(EventType type, std::string_view name, const OpShape* shape = nullptr,
              int64_t sequence = -1, int64_t fwd_tid = -1);
  void close();
  void host_work(int64_t ns) { host_ns_ += ns; }
  // GPU work launched from the innermost open op.
  // Pieces of launch/copy/memset: the runtime call (next correlation id, inside
  // the innermost open op), its GPU activity, and the ac2g flow pair between them.
  TraceEvent runtime_event(EventType type, std::string_view name, int cbid);
  TraceEvent device_event(EventType type, std::string_view name, int stream, const TraceEvent& rt) const;
  void flow_start(const TraceEvent& rt);
  void flow_end(const TraceEvent& g);
  void launch(const Kernel& k, int64_t gpu_ns, int stream = kComputeStream,
              const CollectiveInfo* coll = nullptr);
  void copy(std::string_view name, int64_t bytes, double gbps, bool blocking);
  void memset(int64_t bytes);
  void alloc(int64_t bytes);
  void sync_all();

  int64_t flop_ns(double flops) const;    // tensor-core time at a sustained rate
  int64_t bytes_ns(double bytes) const;   // HBM-bound time

  // Building blocks (forward pushes backward work for later).
  int64_t forward_flow(size_t op_at);       // fwdbwd "s" at the op's start; returns its id
  std::string_view keep_name(std::string s);  // stable storage for generated names
  void view_chain(std::string_view op);  // a view op and its as_strided
  void fwd_linear(int which, std::vector<PendingBackward>& bwd);  // 0 qkv, 1 proj, 2 fc1, 3 fc2
  void fwd_layer_norm(std::vector<PendingBackward>& bwd);
  void fwd_elementwise(std::string_view op, const Kernel& k, int kind, std::string_view node,
                       std::vector<PendingBackward>& bwd);
  void fwd_attention(std::vector<PendingBackward>& bwd);
  void backward_node(const PendingBackward& p);
  void accumulate_grad();
  void all_reduce(const CollectiveInfo* bucket);
  void optimizer_step();

  const SyntheticSpec spec_;
  const int rank_;
  const int device_;
  uint64_t rng_;
  int64_t host_pid_, main_tid_, bwd_tid_;
  int64_t tid_ = 0;  // thread the host records go to
  int64_t start_ns_;
  int64_t host_ns_;
  int64_t stream_free_[2] = {0, 0};  // compute, nccl
  int64_t step_ = 0;

  int64_t next_external_ = 1;
  int64_t next_correlation_ = 1000;
  int64_t next_ev_idx_ = 0;
  int64_t next_sequence_ = 1;
  int64_t next_flow_ = 1;
  int64_t allocated_ = 0;
  int64_t reserved_ = 0;
  int64_t next_addr_ = 0x7f8a00000000;
  int64_t first_kernel_ns_ = -1;   // first compute-stream kernel of the step
  int64_t last_kernel_end_ = 0;

  std::vector<TraceEvent>* out_ = nullptr;
  std::vector<TraceEvent> device_out_;  // this step's device records
  std::vector<size_t> open_;            // indexes of open host ops in *out_

  // Shapes and kernels, built once from the spec.
  OpShape linear_shape_[4], mm_shape_[4], ln_shape_, add_shape_, sdpa_shape_, gelu_shape_, copy_shape_,
      empty_shape_, foreach_shape_, item_shape_, loss_shape_;
  Kernel gemm_[4], ln_fwd_, ln_bwd_, ln_gamma_, sdpa_fwd_, sdpa_bwd_, sdpa_dot_, gelu_fwd_, gelu_bwd_,
      add_, copy_kernel_, reduce_, foreach_[5], softmax_fwd_, softmax_bwd_, nll_fwd_, nll_bwd_,
      embed_fwd_, embed_bwd_, nccl_;
  std::string group_ranks_;
  std::vector<CollectiveInfo> buckets_;
  std::set<std::string> names_;  // node-based: views stay valid
};

}  // namespace stepscope::synth
