#include "synthetic/step_model.h"

#include <algorithm>
#include <string>

namespace stepscope::synth {
namespace {

// Sustained rates of an H200-class GPU, used only to give kernels plausible
// durations (bf16 tensor-core GEMM, HBM streaming, NCCL ring bus bandwidth).
constexpr double kFlopsPerNs = 6.0e5;    // 600 TFLOP/s
constexpr double kHbmBytesPerNs = 3.2e3;  // 3.2 TB/s
constexpr double kNcclBusBytesPerNs = 1.6e2;  // 160 GB/s bus bandwidth
constexpr int64_t kUs = 1000;

std::string dims(std::initializer_list<std::initializer_list<int64_t>> shapes) {
  std::string s = "[";
  bool first = true;
  for (const auto& shape : shapes) {
    if (!first) s += ", ";
    first = false;
    s += "[";
    bool f2 = true;
    for (int64_t d : shape) {
      if (!f2) s += ", ";
      f2 = false;
      s += std::to_string(d);
    }
    s += "]";
  }
  return s + "]";
}

std::string repeat(std::string_view item, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += item;
  }
  return s + "]";
}

OpShape shape(std::string input_dims, std::string input_strides, int n_inputs,
              std::string_view type = "\"c10::BFloat16\"") {
  return OpShape{std::move(input_dims), repeat(type, n_inputs), std::move(input_strides),
                 repeat("\"\"", n_inputs)};
}

KernelShape kshape(int gx, int gy, int bx, int regs, int smem, double bps, double wps, int occ) {
  KernelShape k;
  k.grid[0] = gx;
  k.grid[1] = gy;
  k.block[0] = bx;
  k.registers = regs;
  k.shared_memory = smem;
  k.blocks_per_sm = bps;
  k.warps_per_sm = wps;
  k.occupancy_pct = occ;
  return k;
}

// Backward bodies, by the forward op that queued them.
enum BackwardKind { kLinearBwd0, kLinearBwd1, kLinearBwd2, kLinearBwd3, kLayerNormBwd, kAddBwd, kGeluBwd,
                    kAttentionBwd, kEmbeddingBwd, kLossBwd };

}  // namespace

StepModel::StepModel(const SyntheticSpec& spec, int rank)
    : spec_(spec), rank_(rank), device_(rank % 8) {
  rng_ = spec.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank) * 0xBF58476D1CE4E5B9ull + 1;
  host_pid_ = 2100 + 37 * rank;
  main_tid_ = host_pid_;
  bwd_tid_ = host_pid_ + 29;
  tid_ = main_tid_;
  // A monotonic-clock start about 59 days after boot, staggered per rank.
  start_ns_ = 5094256015000000ll + rank * 1733ll + static_cast<int64_t>(rand() % 5000);
  host_ns_ = start_ns_ + 150 * kUs;

  const int64_t m = static_cast<int64_t>(spec.micro_batch) * spec.seq;
  const int64_t d = spec.hidden;
  const int64_t b = spec.micro_batch, s = spec.seq;
  const int64_t outs[4] = {3 * d, d, 4 * d, d};
  const int64_t ins[4] = {d, d, d, 4 * d};
  const char* gemm_names[4] = {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
                               "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN",
                               "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
                               "nvjet_sm90_tst_64x128_64x8_2x1_v_bz_NTN"};
  for (int i = 0; i < 4; ++i) {
    linear_shape_[i] = shape(dims({{b, s, ins[i]}, {outs[i], ins[i]}, {outs[i]}}),
                             dims({{s * ins[i], ins[i], 1}, {ins[i], 1}, {1}}), 3);
    mm_shape_[i] = shape(dims({{m, ins[i]}, {ins[i], outs[i]}}), dims({{ins[i], 1}, {1, ins[i]}}), 2);
    gemm_[i] = Kernel{gemm_names[i], kshape(static_cast<int>(outs[i] / 128), static_cast<int>(m / 256), 384, 168,
                                             213120, 1.0, 12.0, 0),
                      true};
  }
  ln_shape_ = OpShape{dims({{b, s, d}, {d}, {d}, {d}, {}}),
                      "[\"c10::BFloat16\", \"\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
                      dims({{s * d, d, 1}, {}, {1}, {1}, {}}), "[\"\", \"[" + std::to_string(d) + "]\", \"\", \"\", \"1e-05\"]"};
  add_shape_ = OpShape{dims({{b, s, d}, {b, s, d}, {}}), "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
                       dims({{s * d, d, 1}, {s * d, d, 1}, {}}), "[\"\", \"\", \"1\"]"};
  sdpa_shape_ = shape(dims({{b, 32, s, d / 32}, {b, 32, s, d / 32}, {b, 32, s, d / 32}}),
                      dims({{s * 3 * d, d / 32, 3 * d, 1}, {s * 3 * d, d / 32, 3 * d, 1}, {s * 3 * d, d / 32, 3 * d, 1}}), 3);
  gelu_shape_ = OpShape{dims({{b, s, 4 * d}}), "[\"c10::BFloat16\"]", dims({{s * 4 * d, 4 * d, 1}}), "[\"\"]"};
  copy_shape_ = OpShape{dims({{b, s}, {b, s}, {}}), "[\"long int\", \"long int\", \"Scalar\"]",
                        dims({{s, 1}, {s, 1}, {}}), "[\"\", \"\", \"True\"]"};
  empty_shape_ = OpShape{"[[], [], [], [], [], []]", "[\"ScalarList\", \"Scalar\", \"Scalar\", \"\", \"Scalar\", \"\"]",
                         "[[], [], [], [], [], []]", "[\"[" + std::to_string(b) + ", " + std::to_string(s) + "]\", \"4\", \"0\", \"\", \"False\", \"\"]"};
  foreach_shape_ = OpShape{"[[[" + std::to_string(d) + ", " + std::to_string(d) + "]], []]",
                           "[\"TensorList\", \"Scalar\"]", "[[[" + std::to_string(d) + ", 1]], []]", "[\"\", \"0.9\"]"};
  item_shape_ = OpShape{"[[]]", "[\"float\"]", "[[]]", "[\"\"]"};
  loss_shape_ = OpShape{dims({{m, spec.vocab}, {m}}), "[\"float\", \"long int\"]", dims({{spec.vocab, 1}, {1}}),
                        "[\"\", \"\"]"};

  const int grid_m = static_cast<int>(std::max<int64_t>(1, m * d / 4096));
  ln_fwd_ = {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, false>"
             "(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, "
             "c10::BFloat16*)",
             kshape(static_cast<int>(m), 1, 128, 32, 0, 8.0, 32.0, 94)};
  ln_bwd_ = {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, "
             "float, false>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, "
             "c10::BFloat16 const*, c10::BFloat16*, int)",
             kshape(static_cast<int>(m), 1, 128, 40, 256, 8.0, 32.0, 88)};
  ln_gamma_ = {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16, float, "
               "32u, 32u, 256u, false, true, false>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, "
               "float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
               kshape(static_cast<int>(d / 32), 1, 256, 64, 8448, 1.939394, 15.515152, 48)};
  sdpa_fwd_ = {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
               kshape(static_cast<int>(s / 128), 32, 384, 168, 164096, 0.969697, 11.636364, 0), true};
  sdpa_bwd_ = {"cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0",
               kshape(static_cast<int>(s / 64), 32, 512, 128, 198656, 0.969697, 15.515152, 0), true};
  sdpa_dot_ = {"void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*, void const*, void*, void*, "
               "unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, "
               "unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, float)",
               kshape(static_cast<int>(s / 4), 32, 128, 30, 0, 7.757576, 31.030304, 90)};
  gelu_fwd_ = {"void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
               "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::"
               "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl("
               "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::"
               "operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
               kshape(grid_m * 4, 1, 128, 28, 0, 8.0, 32.0, 91)};
  gelu_bwd_ = {"void at::native::vectorized_elementwise_kernel<8, at::native::GeluBackwardCUDAKernelImpl("
               "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::"
               "operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, "
               "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
               "{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, "
               "c10::BFloat16)#1}, std::array<char*, 3ul>)",
               kshape(grid_m * 4, 1, 128, 32, 0, 8.0, 32.0, 89)};
  add_ = {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
          "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
          kshape(grid_m, 1, 128, 24, 0, 8.0, 32.0, 93)};
  copy_kernel_ = {"void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda("
                  "at::TensorIteratorBase&)::{lambda(float)#1}, std::array<char*, 2ul> >(int, "
                  "at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
                  "std::array<char*, 2ul>)",
                  kshape(grid_m, 1, 128, 20, 0, 8.0, 32.0, 92)};
  reduce_ = {"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<"
             "c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()("
             "at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >("
             "at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::"
             "sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, "
             "float)#1}>, unsigned int, c10::BFloat16, 4, 4>)",
             kshape(static_cast<int>(d / 32), 8, 512, 40, 16, 3.878788, 62.060608, 77)};
  const char* foreach_names[5] = {"BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>",
                                  "BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>",
                                  "PointwiseOpScalarFunctor<float, 3, 3, 0>, std::multiplies<float>",
                                  "UnaryOpFunctor<float, 2, 1, 1>, at::native::Sqrt<float>",
                                  "PointwiseOpScalarListFunctor<float, 3, 3, 0>, std::divides<float>"};
  const char* foreach_meta[5] = {"TensorListMetadata<1>", "TensorListMetadata<2>", "TensorListMetadata<3>",
                                 "TensorListMetadata<2>", "TensorListScalarListMetadata<float, 3>"};
  for (int i = 0; i < 5; ++i) {
    std::string meta = std::string("at::native::(anonymous namespace)::") + foreach_meta[i];
    std::string fn = std::string("at::native::(anonymous namespace)::") + foreach_names[i];
    foreach_[i] = {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<" + meta + ", " + fn +
                       " >(" + meta + ", " + fn + ")",
                   kshape(320, 1, 512, 32, 0, 2.424242, 38.787880, 61)};
  }
  softmax_fwd_ = {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
                  "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
                  kshape(static_cast<int>(m), 1, 1024, 38, 0, 1.939394, 62.060608, 96)};
  softmax_bwd_ = {"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
                  "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, "
                  "float const*, long)",
                  kshape(static_cast<int>(m), 1, 1024, 30, 0, 1.939394, 62.060608, 95)};
  nll_fwd_ = {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>"
              "(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)",
              kshape(1, 1, 32, 24, 2048, 0.007576, 0.007576, 1)};
  nll_bwd_ = {"void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>"
              "(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)",
              kshape(1, 1, 32, 24, 0, 0.007576, 0.007576, 1)};
  embed_fwd_ = {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, "
                "2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::"
                "TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned "
                "int>, int, int, unsigned int, unsigned int, long)",
                kshape(grid_m, 1, 128, 30, 0, 8.0, 32.0, 86)};
  embed_bwd_ = {"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, "
                "long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)",
                kshape(static_cast<int>(d / 32), 1, 1024, 42, 4224, 1.939394, 62.060608, 70)};
  nccl_ = {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           kshape(24, 1, 640, 96, 87568, 0.181818, 3.636364, 0)};

  group_ranks_ = "[";
  for (int r = 0; r < spec.ranks; ++r) group_ranks_ += (r ? ", " : "") + std::to_string(r);
  group_ranks_ += "]";
  // Gradient buckets: a few layers of parameters each, as DDP fuses them.
  const int64_t layer_params = 12 * d * d + 13 * d;
  for (int l = 0; l < spec.layers; l += spec.bucket_layers) {
    int n = std::min(spec.bucket_layers, spec.layers - l);
    buckets_.push_back(CollectiveInfo{"allreduce", layer_params * n, spec.ranks, "BFloat16", &group_ranks_});
  }
  buckets_.push_back(CollectiveInfo{"allreduce", static_cast<int64_t>(spec.vocab) * d + 2 * d, spec.ranks,
                                    "BFloat16", &group_ranks_});
}

uint64_t StepModel::rand() {
  // splitmix64: tiny, fast and the same on every platform.
  uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t StepModel::jitter(int64_t ns, int pct) {
  if (ns <= 0 || pct <= 0) return std::max<int64_t>(ns, 1);
  int64_t span = ns * pct / 100;
  if (span == 0) return ns;
  return std::max<int64_t>(1, ns - span + static_cast<int64_t>(rand() % static_cast<uint64_t>(2 * span + 1)));
}

int64_t StepModel::flop_ns(double flops) const { return static_cast<int64_t>(flops / kFlopsPerNs) + 3 * kUs; }
int64_t StepModel::bytes_ns(double bytes) const {
  return static_cast<int64_t>(bytes / kHbmBytesPerNs) + 2 * kUs;
}

size_t StepModel::open(EventType type, std::string_view name, const OpShape* shape, int64_t sequence,
                       int64_t fwd_tid) {
  TraceEvent e;
  e.type = type;
  e.name = name;
  e.pid = host_pid_;
  e.tid = tid_;
  e.ts_ns = host_ns_;
  e.external_id = next_external_++;
  e.ev_idx = next_ev_idx_++;
  e.sequence = sequence;
  e.fwd_tid = fwd_tid;
  e.shape = shape;
  out_->push_back(e);
  open_.push_back(out_->size() - 1);
  host_ns_ += jitter(2 * kUs, 50);
  return out_->size() - 1;
}

void StepModel::close() {
  host_ns_ += jitter(kUs, 60);
  TraceEvent& e = (*out_)[open_.back()];
  e.dur_ns = host_ns_ - e.ts_ns;
  open_.pop_back();
  host_ns_ += jitter(kUs / 2, 80);
}

TraceEvent StepModel::runtime_event(EventType type, std::string_view name, int cbid) {
  TraceEvent rt;
  rt.type = type;
  rt.name = name;
  rt.cbid = cbid;
  rt.pid = host_pid_;
  rt.tid = tid_;
  rt.ts_ns = host_ns_;
  rt.external_id = (*out_)[open_.back()].external_id;
  rt.correlation = next_correlation_++;
  return rt;
}

TraceEvent StepModel::device_event(EventType type, std::string_view name, int stream, const TraceEvent& rt) const {
  TraceEvent g;
  g.type = type;
  g.host = false;
  g.name = name;
  g.pid = device_;
  g.tid = stream;
  g.external_id = rt.external_id;
  g.correlation = rt.correlation;
  g.device = device_;
  g.stream = stream;
  return g;
}

void StepModel::flow_start(const TraceEvent& rt) {
  TraceEvent s;
  s.type = EventType::kFlowStart;
  s.flow_category = "ac2g";
  s.pid = host_pid_;
  s.tid = tid_;
  s.ts_ns = rt.ts_ns;
  s.correlation = rt.correlation;
  out_->push_back(s);
}

void StepModel::flow_end(const TraceEvent& g) {
  TraceEvent f;
  f.type = EventType::kFlowEnd;
  f.host = false;
  f.flow_category = "ac2g";
  f.pid = device_;
  f.tid = g.tid;
  f.ts_ns = g.ts_ns;
  f.correlation = g.correlation;
  device_out_.push_back(f);
}

void StepModel::launch(const Kernel& k, int64_t gpu_ns, int stream, const CollectiveInfo* coll) {
  TraceEvent rt = k.driver_launch ? runtime_event(EventType::kDriver, "cuLaunchKernelEx", 652)
                                  : runtime_event(EventType::kRuntime, "cudaLaunchKernel", 211);
  rt.dur_ns = jitter(k.driver_launch ? 6 * kUs : 4 * kUs, 40);
  out_->push_back(rt);
  flow_start(rt);

  int64_t& free = stream_free_[stream == kComputeStream ? 0 : 1];
  int64_t start = std::max(rt.ts_ns + jitter(3 * kUs, 30), free + jitter(kUs, 90));
  if (coll) start = std::max(start, stream_free_[0]);  // gradients of the bucket are ready
  TraceEvent g = device_event(EventType::kKernel, k.name, stream, rt);
  g.kernel = &k.shape;
  g.collective = coll;
  g.ts_ns = start;
  g.dur_ns = jitter(gpu_ns, 6);
  free = g.ts_ns + g.dur_ns;
  device_out_.push_back(g);
  flow_end(g);
  if (stream == kComputeStream) {
    if (first_kernel_ns_ < 0) first_kernel_ns_ = g.ts_ns;
    last_kernel_end_ = std::max(last_kernel_end_, free);
  }
  host_ns_ += rt.dur_ns + jitter(kUs, 50);
}

void StepModel::copy(std::string_view name, int64_t bytes, double gbps, bool blocking) {
  TraceEvent rt = runtime_event(EventType::kRuntime, "cudaMemcpyAsync", 41);
  TraceEvent g = device_event(EventType::kMemcpy, name, kComputeStream, rt);
  g.ts_ns = std::max(rt.ts_ns + jitter(4 * kUs, 30), stream_free_[0] + jitter(kUs, 90));
  g.dur_ns = static_cast<int64_t>(static_cast<double>(bytes) / gbps) + jitter(2 * kUs, 30);
  g.bytes = bytes;
  stream_free_[0] = g.ts_ns + g.dur_ns;
  last_kernel_end_ = std::max(last_kernel_end_, stream_free_[0]);
  // A blocking copy (D2H of a scalar) waits for everything queued before it.
  rt.dur_ns = blocking ? stream_free_[0] - rt.ts_ns + jitter(3 * kUs, 30) : jitter(5 * kUs, 40);
  out_->push_back(rt);
  flow_start(rt);
  device_out_.push_back(g);
  flow_end(g);
  host_ns_ += rt.dur_ns + jitter(kUs, 50);
}

// Kineto writes no ac2g flow for memsets.
void StepModel::memset(int64_t bytes) {
  TraceEvent rt = runtime_event(EventType::kRuntime, "cudaMemsetAsync", 51);
  rt.dur_ns = jitter(4 * kUs, 40);
  out_->push_back(rt);
  TraceEvent g = device_event(EventType::kMemset, "Memset (Device)", kComputeStream, rt);
  g.ts_ns = std::max(rt.ts_ns + jitter(3 * kUs, 30), stream_free_[0] + jitter(kUs, 90));
  g.dur_ns = bytes_ns(static_cast<double>(bytes)) / 2 + 600;
  g.bytes = bytes;
  stream_free_[0] = g.ts_ns + g.dur_ns;
  last_kernel_end_ = std::max(last_kernel_end_, stream_free_[0]);
  device_out_.push_back(g);
  host_ns_ += rt.dur_ns + jitter(kUs, 50);
}

void StepModel::alloc(int64_t bytes) {
  allocated_ += bytes;
  if (allocated_ > reserved_) reserved_ = (allocated_ / (2 << 20) + 1) * (2 << 20);
  TraceEvent e;
  e.type = EventType::kMemory;
  e.pid = host_pid_;
  e.tid = tid_;
  e.ts_ns = host_ns_;
  e.bytes = bytes;
  e.total_allocated = allocated_;
  e.total_reserved = reserved_;
  e.device = device_;
  e.ev_idx = next_ev_idx_++;
  if (bytes > 0) next_addr_ += (bytes + 511) / 512 * 512;
  e.addr = next_addr_;
  out_->push_back(e);
  host_ns_ += jitter(kUs / 2, 60);
}

int64_t StepModel::forward_flow(size_t op_at) {
  // Kineto links a forward op to its backward node with a "fwdbwd" flow.
  TraceEvent fs;
  fs.type = EventType::kFlowStart;
  fs.flow_category = "fwdbwd";
  fs.pid = host_pid_;
  fs.tid = tid_;
  fs.ts_ns = (*out_)[op_at].ts_ns;
  fs.correlation = next_flow_++;
  out_->push_back(fs);
  return fs.correlation;
}

std::string_view StepModel::keep_name(std::string s) {
  auto [it, added] = names_.insert(std::move(s));
  return *it;
}

void StepModel::view_chain(std::string_view op) {
  // Views launch nothing but still cost host time: op -> aten::as_strided
  // (aten::t and aten::narrow go through one more level, as ATen dispatches them).
  open(EventType::kCpuOp, op);
  if (op == "aten::t") open(EventType::kCpuOp, "aten::transpose");
  if (op == "aten::narrow") open(EventType::kCpuOp, "aten::slice");
  open(EventType::kCpuOp, "aten::as_strided");
  close();
  if (op == "aten::t" || op == "aten::narrow") close();
  close();
}

void StepModel::fwd_linear(int which, std::vector<PendingBackward>& bwd) {
  const int64_t d = spec_.hidden;
  const int64_t ins[4] = {d, d, d, 4 * d};
  const int64_t outs[4] = {3 * d, d, 4 * d, d};
  const int64_t in = ins[which], out = outs[which];
  const int64_t m = static_cast<int64_t>(spec_.micro_batch) * spec_.seq;
  int64_t seq = next_sequence_++;
  size_t at = open(EventType::kCpuOp, "aten::linear", &linear_shape_[which], seq);
  const int64_t flow = forward_flow(at);
  view_chain("aten::t");
  view_chain("aten::view");
  open(EventType::kCpuOp, "aten::addmm", &mm_shape_[which]);
  alloc(m * out * 2);
  launch(gemm_[which], flop_ns(2.0 * m * in * out));
  close();
  view_chain("aten::view");
  close();
  bwd.push_back({"AddmmBackward0", seq, flow, kLinearBwd0 + which});
}

void StepModel::fwd_layer_norm(std::vector<PendingBackward>& bwd) {
  const int64_t m = static_cast<int64_t>(spec_.micro_batch) * spec_.seq;
  int64_t seq = next_sequence_++;
  size_t at = open(EventType::kCpuOp, "aten::layer_norm", &ln_shape_, seq);
  const int64_t flow = forward_flow(at);
  open(EventType::kCpuOp, "aten::native_layer_norm", &ln_shape_);
  open(EventType::kCpuOp, "aten::empty", &empty_shape_);
  alloc(m * spec_.hidden * 2);
  close();
  launch(ln_fwd_, bytes_ns(4.0 * m * spec_.hidden));
  close();
  close();
  bwd.push_back({"NativeLayerNormBackward0", seq, flow, kLayerNormBwd});
}

void StepModel::fwd_elementwise(std::string_view op, const Kernel& k, int kind, std::string_view node,
                                std::vector<PendingBackward>& bwd) {
  const int64_t m = static_cast<int64_t>(spec_.micro_batch) * spec_.seq;
  int64_t width = kind == kGeluBwd ? 4 * spec_.hidden : spec_.hidden;
  int64_t seq = next_sequence_++;
  size_t at = open(EventType::kCpuOp, op, kind == kGeluBwd ? &gelu_shape_ : &add_shape_, seq);
  const int64_t flow = forward_flow(at);
  alloc(m * width * 2);
  launch(k, bytes_ns(6.0 * m * width));
  close();
  bwd.push_back({std::string(node), seq, flow, kind});
}

void StepModel::fwd_attention(std::vector<PendingBackward>& bwd) {
  const double b = spec_.micro_batch, s = spec_.seq, d = spec_.hidden;
  int64_t seq = next_sequence_++;
  size_t at = open(EventType::kCpuOp, "aten::scaled_dot_product_attention", &sdpa_shape_, seq);
  const int64_t flow = forward_flow(at);
  // q, k, v are views of the fused projection: split, then view + transpose each.
  open(EventType::kCpuOp, "aten::split");
  for (int i = 0; i < 3; ++i) view_chain("aten::narrow");
  close();
  for (int i = 0; i < 3; ++i) {
    view_chain("aten::view");
    view_chain("aten::transpose");
  }
  open(EventType::kCpuOp, "aten::_scaled_dot_product_cudnn_attention", &sdpa_shape_);
  open(EventType::kCpuOp, "aten::empty_strided");
  alloc(static_cast<int64_t>(b * s * d * 2));
  close();
  host_work(jitter(12 * kUs, 30));  // cuDNN graph cache lookup
  launch(sdpa_fwd_, flop_ns(2.0 * b * s * s * d));  // causal: half of 4*b*s^2*d
  close();
  close();
  bwd.push_back({"ScaledDotProductCudnnAttentionBackward0", seq, flow, kAttentionBwd});
}

void StepModel::backward_node(const PendingBackward& p) {
  const int64_t m = static_cast<int64_t>(spec_.micro_batch) * spec_.seq;
  const int64_t d = spec_.hidden;
  std::string_view wrapper = keep_name("autograd::engine::evaluate_function: " + p.node);
  std::string_view node = keep_name(p.node);
  open(EventType::kCpuOp, wrapper, nullptr, p.sequence, 1);
  size_t at = open(EventType::kCpuOp, node, nullptr, p.sequence, 1);
  TraceEvent ff;
  ff.type = EventType::kFlowEnd;
  ff.flow_category = "fwdbwd";
  ff.pid = host_pid_;
  ff.tid = tid_;
  ff.ts_ns = (*out_)[at].ts_ns;
  ff.correlation = p.flow_id;
  out_->push_back(ff);
  switch (p.kind) {
    case kLinearBwd0:
    case kLinearBwd1:
    case kLinearBwd2:
    case kLinearBwd3: {
      int w = p.kind - kLinearBwd0;
      const int64_t ins[4] = {d, d, d, 4 * d};
      const int64_t outs[4] = {3 * d, d, 4 * d, d};
      view_chain("aten::t");
      open(EventType::kCpuOp, "aten::mm", &mm_shape_[w]);
      alloc(m * ins[w] * 2);
      launch(gemm_[(w + 1) % 4], flop_ns(2.0 * m * ins[w] * outs[w]));
      close();
      view_chain("aten::t");
      open(EventType::kCpuOp, "aten::mm", &mm_shape_[w]);
      alloc(ins[w] * outs[w] * 2);
      launch(gemm_[(w + 2) % 4], flop_ns(2.0 * m * ins[w] * outs[w]));
      close();
      open(EventType::kCpuOp, "aten::sum", &mm_shape_[w]);
      launch(reduce_, bytes_ns(2.0 * m * outs[w]));
      close();
      view_chain("aten::view");
      alloc(-m * outs[w] * 2);  // the forward output is released
      alloc(-m * ins[w] * 2);   // and the incoming gradient
      break;
    }
    case kLayerNormBwd:
      open(EventType::kCpuOp, "aten::native_layer_norm_backward", &ln_shape_);
      alloc(m * d * 2);
      launch(ln_bwd_, bytes_ns(6.0 * m * d));
      launch(ln_gamma_, bytes_ns(4.0 * m * d));
      close();
      alloc(-m * d * 2);
      break;
    case kAddBwd:
      host_work(jitter(3 * kUs, 40));
      break;
    case kGeluBwd:
      open(EventType::kCpuOp, "aten::gelu_backward", &gelu_shape_);
      alloc(m * 4 * d * 2);
      launch(gelu_bwd_, bytes_ns(6.0 * m * 4 * d));
      close();
      alloc(-m * 4 * d * 2);
      break;
    case kAttentionBwd: {
      const double s = spec_.seq, b = spec_.micro_batch;
      open(EventType::kCpuOp, "aten::_scaled_dot_product_cudnn_attention_backward", &sdpa_shape_);
      alloc(3 * m * d * 2);
      launch(sdpa_dot_, bytes_ns(4.0 * m * d));
      launch(sdpa_bwd_, flop_ns(5.0 * b * s * s * d));
      close();
      alloc(-m * d * 2);
      break;
    }
    case kEmbeddingBwd:
      open(EventType::kCpuOp, "aten::embedding_dense_backward");
      memset(static_cast<int64_t>(spec_.vocab) * d * 2);
      launch(embed_bwd_, bytes_ns(4.0 * m * d));
      close();
      break;
    case kLossBwd:
      open(EventType::kCpuOp, "aten::nll_loss_backward", &loss_shape_);
      open(EventType::kCpuOp, "aten::zero_");
      open(EventType::kCpuOp, "aten::fill_");
      launch(add_, bytes_ns(4.0 * m * spec_.vocab));
      close();
      close();
      launch(nll_bwd_, 4 * kUs);
      close();
      open(EventType::kCpuOp, "aten::_log_softmax_backward_data", &loss_shape_);
      launch(softmax_bwd_, bytes_ns(8.0 * m * spec_.vocab));
      close();
      break;
    default:
      break;
  }
  close();
  close();
}

void StepModel::accumulate_grad() {
  open(EventType::kCpuOp, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad");
  open(EventType::kCpuOp, "torch::autograd::AccumulateGrad");
  open(EventType::kCpuOp, "aten::detach");
  open(EventType::kCpuOp, "detach");
  close();
  close();
  close();
  close();
}

void StepModel::all_reduce(const CollectiveInfo* info) {
  const double bytes = static_cast<double>(info->nelems) * 2;
  const double n = spec_.ranks;
  int64_t ns = static_cast<int64_t>(bytes * 2 * (n - 1) / std::max(1.0, n) / kNcclBusBytesPerNs) + 18 * kUs;
  open(EventType::kCpuOp, "record_param_comms");
  (*out_)[open_.back()].collective = info;
  open(EventType::kUserAnnotation, "nccl:all_reduce");
  launch(nccl_, ns, kNcclStream, info);
  close();
  close();
}

void StepModel::optimizer_step() {
  open(EventType::kUserAnnotation, "Optimizer.step#AdamW.step");
  int64_t gpu_begin = std::max(host_ns_, stream_free_[0]);
  const char* ops[5] = {"aten::_foreach_mul_", "aten::_foreach_add_", "aten::_foreach_addcmul_",
                        "aten::_foreach_sqrt", "aten::_foreach_addcdiv_"};
  const double params = 12.0 * spec_.hidden * spec_.hidden * spec_.layers;
  const TraceEvent opt = (*out_)[open_.back()];
  for (int i = 0; i < 5; ++i) {
    open(EventType::kCpuOp, ops[i], &foreach_shape_);
    // fp32 master weights and moments: about 16 bytes moved per parameter,
    // in four launches as multi_tensor_apply splits the tensor list.
    for (int c = 0; c < 4; ++c) launch(foreach_[i], bytes_ns(params * 16 / 4));
    close();
  }
  close();
  TraceEvent g;
  g.type = EventType::kGpuUserAnnotation;
  g.host = false;
  g.name = "Optimizer.step#AdamW.step";
  g.pid = device_;
  g.tid = kComputeStream;
  g.ts_ns = std::max(gpu_begin, opt.ts_ns + 5 * kUs);
  g.dur_ns = std::max<int64_t>(1, stream_free_[0] - g.ts_ns);
  g.external_id = opt.external_id;
  device_out_.push_back(g);
}

void StepModel::sync_all() { host_ns_ = std::max({host_ns_, stream_free_[0], stream_free_[1]}) + jitter(4 * kUs, 30); }

void StepModel::next_step(std::vector<TraceEvent>& out) {
  out_ = &out;
  device_out_.clear();
  first_kernel_ns_ = -1;
  last_kernel_end_ = 0;
  const int64_t m = static_cast<int64_t>(spec_.micro_batch) * spec_.seq;
  const int64_t d = spec_.hidden;
  const int64_t step_number = spec_.first_step + step_++;
  std::string_view step_name = keep_name("ProfilerStep#" + std::to_string(step_number));

  tid_ = main_tid_;
  size_t step_at = open(EventType::kUserAnnotation, step_name);
  // Data loading: host work, then the batch goes to the GPU.
  open(EventType::kUserAnnotation, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  host_work(jitter(rank_ % 4 == 3 ? 900 * kUs : 300 * kUs, 40));  // one rank reads slower: skew
  close();
  for (int i = 0; i < 2; ++i) {
    open(EventType::kCpuOp, "aten::to", &copy_shape_);
    open(EventType::kCpuOp, "aten::_to_copy", &copy_shape_);
    open(EventType::kCpuOp, "aten::empty_strided", &empty_shape_);
    alloc(m * 8);
    close();
    open(EventType::kCpuOp, "aten::copy_", &copy_shape_);
    copy("Memcpy HtoD (Pinned -> Device)", m * 8, 25.0, false);
    close();
    close();
    close();
  }
  open(EventType::kUserAnnotation, "Optimizer.zero_grad#AdamW.zero_grad");
  host_work(jitter(40 * kUs, 30));
  close();

  // Forward.
  std::vector<PendingBackward> bwd;
  {
    int64_t seq = next_sequence_++;
    int64_t flow = forward_flow(open(EventType::kCpuOp, "aten::embedding", nullptr, seq));
    bwd.push_back({"EmbeddingBackward0", seq, flow, kEmbeddingBwd});
  }
  open(EventType::kCpuOp, "aten::index_select");
  alloc(m * d * 2);
  launch(embed_fwd_, bytes_ns(4.0 * m * d));
  close();
  close();
  std::vector<size_t> layer_marks;
  for (int l = 0; l < spec_.layers; ++l) {
    layer_marks.push_back(bwd.size());
    fwd_layer_norm(bwd);
    fwd_linear(0, bwd);
    fwd_attention(bwd);
    fwd_linear(1, bwd);
    fwd_elementwise("aten::add", add_, kAddBwd, "AddBackward0", bwd);
    fwd_layer_norm(bwd);
    fwd_linear(2, bwd);
    fwd_elementwise("aten::gelu", gelu_fwd_, kGeluBwd, "GeluBackward0", bwd);
    fwd_linear(3, bwd);
    fwd_elementwise("aten::add", add_, kAddBwd, "AddBackward0", bwd);
  }
  layer_marks.push_back(bwd.size());
  fwd_layer_norm(bwd);
  fwd_linear(1, bwd);  // the LM head (kept square here to bound the trace size)
  {
    int64_t seq = next_sequence_++;
    int64_t flow = forward_flow(open(EventType::kCpuOp, "aten::cross_entropy_loss", &loss_shape_, seq));
    bwd.push_back({"LogSoftmaxBackward0", seq, flow, kLossBwd});
  }
  open(EventType::kCpuOp, "aten::log_softmax", &loss_shape_);
  launch(softmax_fwd_, bytes_ns(8.0 * m * spec_.vocab));
  close();
  open(EventType::kCpuOp, "aten::nll_loss_nd", &loss_shape_);
  launch(nll_fwd_, 5 * kUs);
  close();
  close();

  // Backward runs on the autograd thread; gradients are all-reduced per bucket.
  tid_ = bwd_tid_;
  host_ns_ += jitter(20 * kUs, 30);
  size_t bucket = buckets_.size() - 1;
  int layers_since_reduce = 0;
  int layer = spec_.layers;
  for (size_t i = bwd.size(); i-- > 0;) {
    const PendingBackward& p = bwd[i];
    backward_node(p);
    if (p.kind >= kLinearBwd0 && p.kind <= kLinearBwd3) accumulate_grad();
    if (layer > 0 && i == layer_marks[static_cast<size_t>(layer - 1)]) {
      --layer;
      if (++layers_since_reduce == spec_.bucket_layers || layer == 0) {
        if (bucket > 0) --bucket;
        all_reduce(&buckets_[bucket]);
        layers_since_reduce = 0;
      }
    }
  }
  all_reduce(&buckets_.back());  // embedding and head gradients

  // Optimizer on the main thread once the gradients are reduced.
  tid_ = main_tid_;
  sync_all();
  optimizer_step();
  open(EventType::kCpuOp, "aten::item", &item_shape_);
  open(EventType::kCpuOp, "aten::_local_scalar_dense", &item_shape_);
  copy("Memcpy DtoH (Device -> Pageable)", 4, 2.0, true);
  close();
  close();
  sync_all();
  close();  // ProfilerStep#N

  const TraceEvent& step = out[step_at];
  TraceEvent g;
  g.type = EventType::kGpuUserAnnotation;
  g.host = false;
  g.name = step_name;
  g.pid = device_;
  g.tid = kComputeStream;
  g.ts_ns = first_kernel_ns_ >= 0 ? first_kernel_ns_ : step.ts_ns;
  g.dur_ns = std::max<int64_t>(1, last_kernel_end_ - g.ts_ns);
  g.external_id = step.external_id;
  device_out_.push_back(g);

  out.insert(out.end(), device_out_.begin(), device_out_.end());
  out_ = nullptr;
  host_ns_ += jitter(30 * kUs, 40);
}

}  // namespace stepscope::synth
