#include "trace/json/record_pipeline.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "trace/json/blank_padding.h"

namespace stepscope::trace {
namespace {

constexpr size_t kBatchBytes = 256 << 10;
constexpr size_t kMaxQueued = 2;  // full batches waiting for the parser: about 1 MB in flight

struct Record {
  size_t begin = 0;      // in Batch::text
  size_t size = 0;
  uint64_t offset = 0;   // uncompressed offset in the file, as the tokenizer gave it
  int32_t key = -1;      // top-level member: index into Batch::keys; kEvent or kSkipped otherwise
  uint64_t skipped_bytes = 0;  // kSkipped
  static constexpr int32_t kEvent = -1;
  static constexpr int32_t kSkipped = -2;  // a damaged stretch (resync): the text is the message
};

// Records copied back to back, then kRecordPadding bytes: every record has
// readable padding after it (the next record's bytes, or the tail).
struct Batch {
  std::string text;
  std::vector<Record> records;
  std::vector<std::string> keys;
};

class BatchQueue {
 public:
  std::unique_ptr<Batch> take_empty() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) {
      auto b = std::make_unique<Batch>();
      b->text.reserve(kBatchBytes + kRecordPadding);
      return b;
    }
    auto b = std::move(free_.back());
    free_.pop_back();
    b->text.clear();
    b->records.clear();
    b->keys.clear();
    return b;
  }
  // Blocks while kMaxQueued batches wait; drops the batch once cancelled.
  void push(std::unique_ptr<Batch> b) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] { return full_.size() < kMaxQueued || cancelled_; });
    if (cancelled_) return;
    full_.push_back(std::move(b));
    ready_.notify_one();
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    ready_.notify_one();
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    room_.notify_one();
  }
  // The next full batch, or nullptr once the producer is done and all are taken.
  std::unique_ptr<Batch> pop() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return !full_.empty() || done_; });
    if (full_.empty()) return nullptr;
    auto b = std::move(full_.front());
    full_.pop_front();
    room_.notify_one();
    return b;
  }
  void give_back(std::unique_ptr<Batch> b) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(b));
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::unique_ptr<Batch>> full_;
  std::vector<std::unique_ptr<Batch>> free_;
  bool done_ = false;
  bool cancelled_ = false;
};

}  // namespace

TokenizeResult tokenize_trace_pipelined(ByteSource& source, const TokenizerCallbacks& callbacks,
                                        const TokenizerOptions& options) {
  BatchQueue queue;
  TokenizeResult result;
  std::exception_ptr producer_error;

  std::thread producer([&] {
    try {
      std::unique_ptr<Batch> batch = queue.take_empty();
      auto seal = [&] {
        batch->text.append(kRecordPadding, ' ');
        queue.push(std::move(batch));
      };
      auto add = [&](std::string_view raw, uint64_t offset, const std::string_view* key, bool skipped = false,
                     uint64_t skipped_bytes = 0) {
        if (!batch->records.empty() && batch->text.size() + raw.size() + kRecordPadding > kBatchBytes) {
          seal();
          batch = queue.take_empty();
        }
        Record r{batch->text.size(), raw.size(), offset, skipped ? Record::kSkipped : Record::kEvent, skipped_bytes};
        if (key) {
          r.key = static_cast<int32_t>(batch->keys.size());
          batch->keys.emplace_back(*key);
        }
        batch->text.append(raw);
        batch->records.push_back(r);
      };
      TokenizerCallbacks copy;
      copy.on_event = [&](std::string_view raw, uint64_t offset) { add(raw, offset, nullptr); };
      copy.on_member = [&](std::string_view key, std::string_view raw, uint64_t offset) { add(raw, offset, &key); };
      copy.on_skipped = [&](uint64_t offset, uint64_t bytes, std::string_view why) {
        add(why, offset, nullptr, true, bytes);
      };
      result = tokenize_trace(source, copy, options);
      seal();
    } catch (...) {
      producer_error = std::current_exception();
    }
    queue.finish();
  });

  std::exception_ptr consumer_error;
  try {
    while (std::unique_ptr<Batch> b = queue.pop()) {
      for (const Record& r : b->records) {
        std::string_view raw(b->text.data() + r.begin, r.size);
        const BlankPadding blank(b->text.data() + r.begin + r.size);  // the batch ends in kRecordPadding bytes
        if (r.key == Record::kEvent) {
          if (callbacks.on_event) callbacks.on_event(raw, r.offset);
        } else if (r.key == Record::kSkipped) {
          if (callbacks.on_skipped) callbacks.on_skipped(r.offset, r.skipped_bytes, raw);
        } else if (callbacks.on_member) {
          callbacks.on_member(b->keys[static_cast<size_t>(r.key)], raw, r.offset);
        }
      }
      queue.give_back(std::move(b));
    }
  } catch (...) {
    consumer_error = std::current_exception();
    queue.cancel();  // lets the producer run to the end without blocking
  }
  producer.join();
  if (consumer_error) std::rethrow_exception(consumer_error);
  if (producer_error) std::rethrow_exception(producer_error);
  return result;
}

}  // namespace stepscope::trace
