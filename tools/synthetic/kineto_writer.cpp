#include "synthetic/kineto_writer.h"

#include <charconv>
#include <cstdio>
#include <type_traits>

namespace stepscope::synth {

uint64_t RankTally::events() const {
  uint64_t n = 0;
  for (const auto& [cat, b] : complete) n += b.count;
  for (const auto& [name, c] : instants) n += c;
  return n;
}

namespace {
constexpr size_t kFlushBytes = 1 << 20;

std::string_view category_of(EventType t) {
  switch (t) {
    case EventType::kCpuOp: return "cpu_op";
    case EventType::kUserAnnotation: return "user_annotation";
    case EventType::kGpuUserAnnotation: return "gpu_user_annotation";
    case EventType::kRuntime: return "cuda_runtime";
    case EventType::kDriver: return "cuda_driver";
    case EventType::kKernel: return "kernel";
    case EventType::kMemcpy: return "gpu_memcpy";
    case EventType::kMemset: return "gpu_memset";
    case EventType::kMemory: return "cpu_instant_event";
    case EventType::kFlowStart:
    case EventType::kFlowEnd: return "";
  }
  return "";
}
}  // namespace

void KinetoWriter::put_int(int64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, r.ptr);
}

void KinetoWriter::put_double(double v) {
  char tmp[40];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  buf_.append(tmp, r.ptr);
}

void KinetoWriter::put_time(int64_t ns) {
  // Kineto prints microseconds with exactly three decimals ("%.3f" of ns/1000).
  if (ns < 0) {
    put("-");
    ns = -ns;
  }
  put_int(ns / 1000);
  char frac[4] = {'.', static_cast<char>('0' + ns % 1000 / 100), static_cast<char>('0' + ns % 100 / 10),
                  static_cast<char>('0' + ns % 10)};
  buf_.append(frac, 4);
}

void KinetoWriter::put_string(std::string_view s) {
  buf_.push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') {
      buf_.push_back('\\');
      buf_.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      buf_.append(esc);
    } else {
      buf_.push_back(c);
    }
  }
  buf_.push_back('"');
}

void KinetoWriter::flush_if_full() {
  if (buf_.size() >= kFlushBytes) {
    sink_.write(buf_);
    buf_.clear();
  }
}

void KinetoWriter::open_record() {
  put(first_record_ ? "  {\n" : ",\n  {\n");
  first_record_ = false;
}

void KinetoWriter::count_complete(std::string_view cat, int64_t ts, int64_t dur) {
  auto& b = tally_.complete[std::string(cat)];
  ++b.count;
  b.dur_ns += dur;
  if (ts < tally_.min_ts_ns) tally_.min_ts_ns = ts;
  if (ts + dur > tally_.max_end_ns) tally_.max_end_ns = ts + dur;
}

void KinetoWriter::begin(const TraceHeader& h) {
  buf_.reserve(kFlushBytes + (64 << 10));
  put("\n{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
  for (int d = 0; d < h.devices; ++d) {
    put(d == 0 ? "\n    {\n" : ",\n    {\n");
    put("      \"id\": ");
    put_int(d);
    put(", \"name\": \"NVIDIA H200\", \"totalGlobalMem\": 150109880320,\n"
        "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
        "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
        "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
        "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
        "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
        "\"sharedMemPerMultiprocessor\": 233472\n    }");
  }
  put("\n  ],\n  \"cupti_version\": 130001,\n  \"cuda_runtime_version\": 13000,\n"
      "  \"with_flops\": 1,\n  \"record_shapes\": 1,\n  \"cuda_driver_version\": 13000,\n"
      "  \"profile_memory\": 1,\n  \"trace_id\": \"5D0C3A51E9A84C6B8F1E2A7B90C4D");
  char id[8];
  std::snprintf(id, sizeof id, "%03X", h.rank & 0xFFF);
  put(id);
  put("\",\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
  put_int(h.rank);
  put(", \"world_size\": ");
  put_int(h.world_size);
  put(", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
      "\"backend_config\": \"cuda:nccl\", \"pg_size\": ");
  put_int(h.world_size);
  put(", \"ranks\": [");
  for (int r = 0; r < h.world_size; ++r) {
    if (r) put(", ");
    put_int(r);
  }
  put("]}], \"nccl_version\": \"2.28.9\"},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
  put_int(h.base_time_ns);
  put(",\n  \"traceEvents\": [\n");
  rank_ = h.rank;
}

void KinetoWriter::event(const TraceEvent& e) {
  open_record();
  switch (e.type) {
    case EventType::kFlowStart:
    case EventType::kFlowEnd: {
      put(e.type == EventType::kFlowStart ? "    \"ph\": \"s\", \"id\": " : "    \"ph\": \"f\", \"id\": ");
      put_int(e.correlation);
      put(", \"pid\": ");
      put_int(e.pid);
      put(", \"tid\": ");
      put_int(e.tid);
      put(", \"ts\": ");
      put_time(e.ts_ns);
      put(",\n    \"cat\": ");
      put_string(e.flow_category);
      put(", \"name\": ");
      put_string(e.flow_category);
      if (e.type == EventType::kFlowEnd) put(", \"bp\": \"e\"");
      put("\n  }");
      auto& m = e.type == EventType::kFlowStart ? tally_.flow_starts : tally_.flow_ends;
      ++m[std::string(e.flow_category)];
      flush_if_full();
      return;
    }
    case EventType::kMemory: {
      put("    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": ");
      put_int(e.pid);
      put(", \"tid\": ");
      put_int(e.tid);
      put(",\n    \"ts\": ");
      put_time(e.ts_ns);
      put(",\n    \"args\": {\n      \"Total Reserved\": ");
      put_int(e.total_reserved);
      put(", \"Total Allocated\": ");
      put_int(e.total_allocated);
      put(", \"Bytes\": ");
      put_int(e.bytes);
      put(", \"Device Id\": ");
      put_int(e.device);
      put(", \"Device Type\": 1, \"Addr\": ");
      put_int(e.addr);
      put(", \"Ev Idx\": ");
      put_int(e.ev_idx);
      put("\n    }\n  }");
      ++tally_.instants["[memory]"];
      if (e.ts_ns < tally_.min_ts_ns) tally_.min_ts_ns = e.ts_ns;
      if (e.ts_ns > tally_.max_end_ns) tally_.max_end_ns = e.ts_ns;
      flush_if_full();
      return;
    }
    default:
      break;
  }

  std::string_view cat = category_of(e.type);
  put("    \"ph\": \"X\", \"cat\": \"");
  put(cat);
  put("\", \"name\": ");
  put_string(e.name);
  put(", \"pid\": ");
  put_int(e.pid);
  put(", \"tid\": ");
  put_int(e.tid);
  put(",\n    \"ts\": ");
  put_time(e.ts_ns);
  put(", \"dur\": ");
  put_time(e.dur_ns);
  put(",\n    \"args\": {\n      ");
  switch (e.type) {
    case EventType::kCpuOp:
    case EventType::kUserAnnotation:
      put("\"External id\": ");
      put_int(e.external_id);
      put(",\"Record function id\": 0");
      if (e.sequence >= 0) {
        put(", \"Sequence number\": ");
        put_int(e.sequence);
      }
      if (e.fwd_tid >= 0) {
        put(", \"Fwd thread id\": ");
        put_int(e.fwd_tid);
      }
      if (e.collective) {
        const CollectiveInfo& c = *e.collective;
        put(", \"Collective name\": ");
        put_string(c.name);
        put(", \"Process Group Description\": \"default_pg\", \"dtype\": ");
        put_string(c.dtype);
        put(", \"Rank\": ");
        put_int(rank_);
        put(", \"Out msg nelems\": ");
        put_int(c.nelems);
        put(", \"Process Group Name\": \"0\", \"Global rank stride\": 1, \"Out split size\": \"[]\", "
            "\"In split size\": \"[]\", \"Process Group Ranks\": ");
        put_string(c.ranks ? *c.ranks : std::string_view("[0]"));
        put(", \"Group size\": ");
        put_int(c.group_size);
        put(", \"Global rank start\": 0, \"In msg nelems\": ");
        put_int(c.nelems);
      }
      if (e.shape) {
        put(", \"Concrete Inputs\": ");
        put(e.shape->concrete);
        put(", \"Input type\": ");
        put(e.shape->input_types);
        put(", \"Input Strides\": ");
        put(e.shape->input_strides);
        put(", \"Input Dims\": ");
        put(e.shape->input_dims);
      }
      put(", \"Ev Idx\": ");
      put_int(e.ev_idx);
      break;
    case EventType::kGpuUserAnnotation:
      put("\"External id\": ");
      put_int(e.external_id);
      break;
    case EventType::kRuntime:
    case EventType::kDriver:
      put("\"External id\": ");
      put_int(e.external_id);
      put(",      \"cbid\": ");
      put_int(e.cbid);
      put(", \"correlation\": ");
      put_int(e.correlation);
      break;
    case EventType::kKernel: {
      const KernelShape& k = *e.kernel;
      put("\"External id\": ");
      put_int(e.external_id);
      put(",      \"queued\": 0, \"device\": ");
      put_int(e.device);
      put(", \"context\": 1,      \"stream\": ");
      put_int(e.stream);
      put(", \"correlation\": ");
      put_int(e.correlation);
      put(",      \"registers per thread\": ");
      put_int(k.registers);
      put(",      \"shared memory\": ");
      put_int(k.shared_memory);
      char tmp[64];
      std::snprintf(tmp, sizeof tmp, ",      \"blocks per SM\": %.6f,      \"warps per SM\": %.6f",
                    k.blocks_per_sm, k.warps_per_sm);
      put(tmp);
      put(",      \"grid\": [");
      put_int(k.grid[0]);
      put(", ");
      put_int(k.grid[1]);
      put(", ");
      put_int(k.grid[2]);
      put("],      \"block\": [");
      put_int(k.block[0]);
      put(", ");
      put_int(k.block[1]);
      put(", ");
      put_int(k.block[2]);
      put("],      \"est. achieved occupancy %\": ");
      put_int(k.occupancy_pct);
      if (e.collective) {
        const CollectiveInfo& c = *e.collective;
        put(", \"Collective name\": ");
        put_string(c.name);
        put(", \"In msg nelems\": ");
        put_int(c.nelems);
        put(", \"Out msg nelems\": ");
        put_int(c.nelems);
        put(", \"Group size\": ");
        put_int(c.group_size);
        put(", \"dtype\": ");
        put_string(c.dtype);
        put(", \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"0\", "
            "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": ");
        put_string(c.ranks ? *c.ranks : std::string_view("[0]"));
      }
      break;
    }
    case EventType::kMemcpy:
    case EventType::kMemset:
      put("\"External id\": ");
      put_int(e.external_id);
      put(",      \"device\": ");
      put_int(e.device);
      put(", \"context\": 1,      \"stream\": ");
      put_int(e.stream);
      put(", \"correlation\": ");
      put_int(e.correlation);
      put(",      \"bytes\": ");
      put_int(e.bytes);
      put(", \"memory bandwidth (GB/s)\": ");
      put_double(e.dur_ns > 0 ? static_cast<double>(e.bytes) / static_cast<double>(e.dur_ns) : 0.0);
      break;
    default:
      break;
  }
  put("\n    }\n  }");
  count_complete(cat, e.ts_ns, e.dur_ns);
  if (e.type == EventType::kUserAnnotation && e.name.starts_with("ProfilerStep#"))
    tally_.steps.emplace_back(e.ts_ns, e.dur_ns);
  flush_if_full();
}

void KinetoWriter::process_metadata(int64_t pid, std::string_view name, std::string_view label,
                                    int64_t sort_index, int64_t ts_ns) {
  auto one = [&](std::string_view what, std::string_view key, auto value) {
    open_record();
    put("    \"name\": \"");
    put(what);
    put("\", \"ph\": \"M\", \"ts\": ");
    put_time(ts_ns);
    put(", \"pid\": ");
    put_int(pid);
    put(", \"tid\": 0,\n    \"args\": {\n      \"");
    put(key);
    put("\": ");
    if constexpr (std::is_same_v<decltype(value), int64_t>) {
      put_int(value);
    } else {
      put_string(value);
    }
    put("\n    }\n  }");
    ++tally_.metadata;
  };
  one("process_name", "name", name);
  one("process_labels", "labels", label);
  one("process_sort_index", "sort_index", sort_index);
  flush_if_full();
}

void KinetoWriter::thread_metadata(int64_t pid, int64_t tid, std::string_view name, int64_t sort_index,
                                   int64_t ts_ns) {
  auto head = [&](std::string_view what) {
    open_record();
    put("    \"name\": \"");
    put(what);
    put("\", \"ph\": \"M\", \"ts\": ");
    put_time(ts_ns);
    put(", \"pid\": ");
    put_int(pid);
    put(", \"tid\": ");
    put_int(tid);
    put(",\n    \"args\": {\n      ");
    ++tally_.metadata;
  };
  head("thread_name");
  put("\"name\": ");
  put_string(name);
  put("\n    }\n  }");
  head("thread_sort_index");
  put("\"sort_index\": ");
  put_int(sort_index);
  put("\n    }\n  }");
  flush_if_full();
}

void KinetoWriter::profiler_span(int64_t ts_ns, int64_t dur_ns, int64_t end_ns) {
  open_record();
  put("    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
  put_time(ts_ns);
  put(", \"dur\": ");
  put_time(dur_ns);
  put(",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n"
      "    \"args\": {\n      \"Op count\": 0\n    }\n  }");
  count_complete("Trace", ts_ns, dur_ns);
  open_record();
  put("    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
  put_time(ts_ns);
  put(",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": 536870912\n    }\n  }");
  ++tally_.metadata;
  open_record();
  put("    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
      "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
  put_time(ts_ns);
  put("\n  }");
  ++tally_.instants["Iteration Start: PyTorch Profiler"];
  open_record();
  put("    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
  put_time(end_ns);
  put("\n  }");
  ++tally_.instants["Record Window End"];
  if (ts_ns < tally_.min_ts_ns) tally_.min_ts_ns = ts_ns;
  if (end_ns > tally_.max_end_ns) tally_.max_end_ns = end_ns;
}

void KinetoWriter::end(std::string_view trace_name) {
  put("\n  ],\n  \"traceName\": ");
  put_string(trace_name);
  put("\n}\n");
  sink_.write(buf_);
  buf_.clear();
  tally_.bytes = sink_.uncompressed_bytes();
}

}  // namespace stepscope::synth
