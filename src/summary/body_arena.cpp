#include "summary/body_arena.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

namespace stepscope::summary {

namespace {

// One summary's tree fits in a few blocks; the blocks stay with the thread.
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
constexpr std::size_t kAlign = alignof(std::max_align_t);

struct Arena {
  struct Block {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size = 0;
  };
  std::vector<Block> blocks;
  std::size_t block = 0;  // the block being filled
  std::size_t used = 0;   // bytes of it taken
  int scopes = 0;

  void* take(std::size_t n) {
    n = (n + kAlign - 1) / kAlign * kAlign;
    while (block < blocks.size() && used + n > blocks[block].size) {
      ++block;
      used = 0;
    }
    if (block == blocks.size()) {
      const std::size_t size = std::max(kBlockBytes, n);
      blocks.push_back({std::unique_ptr<std::byte[]>(new std::byte[size]), size});
      used = 0;
    }
    void* at = blocks[block].bytes.get() + used;
    used += n;
    return at;
  }
  void rewind() {
    block = 0;
    used = 0;
    // A body far larger than usual does not keep its memory for the next ones.
    while (blocks.size() > 8) blocks.pop_back();
  }
};

thread_local Arena arena;

}  // namespace

void* body_arena::allocate(std::size_t n) {
  if (arena.scopes == 0) throw std::logic_error("summary body arena used outside a BodyArenaScope");
  return arena.take(n);
}

BodyArenaScope::BodyArenaScope() { ++arena.scopes; }

BodyArenaScope::~BodyArenaScope() {
  if (--arena.scopes == 0) arena.rewind();
}

}  // namespace stepscope::summary
