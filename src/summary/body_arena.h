// Where a summary body's decoded tree lives while it is read: a bump arena
// of the reading thread, rewound once the summary's structs are filled.
// A body of 16,384 summaries' merge is about 100 KB of CBOR and tens of
// thousands of tree nodes; with one malloc and one free per node, building
// and dropping the trees was most of the merge's reading time.
//
//   {
//     BodyArenaScope scope;            // the arena, rewound when it closes
//     BodyJson tree = parse(...);      // every node in the arena
//     ...                              // the tree dies before the scope
//   }
#pragma once

#include <cstddef>
#include <new>

namespace stepscope::summary {

namespace body_arena {
// Bytes for `n` bytes aligned to alignof(std::max_align_t); throws
// std::logic_error outside a BodyArenaScope (the memory would outlive the
// rewind that reuses it).
void* allocate(std::size_t n);
}  // namespace body_arena

// Opens the thread's arena; the outermost scope's end rewinds it (its blocks
// are kept for the next summary).
class BodyArenaScope {
 public:
  BodyArenaScope();
  ~BodyArenaScope();
  BodyArenaScope(const BodyArenaScope&) = delete;
  BodyArenaScope& operator=(const BodyArenaScope&) = delete;
};

// A stateless allocator over the thread's arena: freeing is a no-op, the
// rewind takes everything back at once.
template <typename T>
struct BodyArenaAllocator {
  using value_type = T;
  BodyArenaAllocator() noexcept = default;
  template <typename U>
  BodyArenaAllocator(const BodyArenaAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(body_arena::allocate(n * sizeof(T))); }
  void deallocate(T*, std::size_t) noexcept {}
  template <typename U>
  bool operator==(const BodyArenaAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace stepscope::summary
