#pragma once
// An allocator whose arrays start on a cache line (64 bytes). std::allocator gives 16-byte alignment, and for large
// arrays glibc's mmap'd chunks start 16 bytes past a page: then the sweeps' 32-byte rows (avx2::kStride floats)
// cross a cache line every other row, and whether they did changed from run to run with the heap's state.
#include <cstddef>
#include <new>

namespace percussion {

template <class T>
struct CacheAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheAligned() = default;
  template <class U>
  CacheAligned(const CacheAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t n) { ::operator delete(p, n * sizeof(T), kAlignment); }
  template <class U>
  bool operator==(const CacheAligned<U>&) const {
    return true;
  }
};

}  // namespace percussion
