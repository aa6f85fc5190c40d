#include "trace/string_table.h"

#include <algorithm>
#include <cstring>

namespace stepscope::trace {

namespace {
constexpr size_t kInitialSlots = 1024;
// Arena blocks double from the first size up to the largest: a rank with few
// distinct strings (a set of thousands of small ranks) holds a few KiB, not
// a 64 KiB block per rank.
constexpr size_t kFirstArenaBlock = 4 << 10;
constexpr size_t kArenaBlock = 64 << 10;

inline uint64_t load_word(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

inline uint64_t mix(uint64_t h) {
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return h;
}
}  // namespace

uint64_t StringTable::hash(std::string_view s) {
  // Word at a time: multiply-rotate per 8 bytes, the tail zero-padded into one
  // last word, the length folded in, then a final avalanche. Long strings
  // (templated kernel names run to hundreds of bytes) go through four
  // independent lanes first, so the multiplies overlap instead of chaining.
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  if (n >= 64) {
    uint64_t lane[4] = {h, h ^ 0x243F6A8885A308D3ull, h ^ 0x13198A2E03707344ull, h ^ 0xA4093822299F31D0ull};
    while (n >= 32) {
      for (int k = 0; k < 4; ++k) {
        lane[k] = (lane[k] ^ load_word(p + 8 * k)) * 0x100000001B3ull;
        lane[k] = (lane[k] << 31) | (lane[k] >> 33);
      }
      p += 32;
      n -= 32;
    }
    h = mix(lane[0]) ^ (mix(lane[1]) * 3) ^ (mix(lane[2]) * 5) ^ (mix(lane[3]) * 7);
  }
  while (n >= 8) {
    h = (h ^ load_word(p)) * 0x100000001B3ull;
    h = (h << 31) | (h >> 33);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    h = (h ^ tail) * 0x100000001B3ull;
  }
  return mix(h);
}

StringTable::StringTable() : slots_(kInitialSlots) { intern(""); }

size_t StringTable::probe(std::string_view s, uint64_t h) const {
  const size_t mask = slots_.size() - 1;
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.id == kMissing) return i;
    if (slot.hash == tag && views_[slot.id] == s) return i;
  }
}

std::string_view StringTable::store_text(std::string_view s) {
  if (s.empty()) return std::string_view("", 0);
  if (block_size_ - block_used_ < s.size()) {
    const size_t next = blocks_.empty() ? kFirstArenaBlock : std::min(kArenaBlock, 2 * block_size_);
    block_size_ = std::max(next, s.size());
    // Not zeroed: make_unique<char[]> would write (and make resident) the
    // whole block at once; only the bytes copied in are ever read.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return {dst, s.size()};
}

void StringTable::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.id == kMissing) continue;
    // The stored tag is only the high half: rehash the text for the position.
    size_t i = static_cast<size_t>(hash(views_[slot.id])) & mask;
    while (slots_[i].id != kMissing) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

StringId StringTable::intern(std::string_view s) {
  const uint64_t h = hash(s);
  size_t i = probe(s, h);
  if (slots_[i].id != kMissing) return slots_[i].id;
  const auto id = static_cast<StringId>(views_.size());
  views_.push_back(store_text(s));
  slots_[i] = Slot{static_cast<uint32_t>(h >> 32), id};
  if (views_.size() * 2 > slots_.size()) grow();
  return id;
}

StringId StringTable::find(std::string_view s) const {
  size_t i = probe(s, hash(s));
  return slots_[i].id;  // kMissing when the slot is empty
}

}  // namespace stepscope::trace
