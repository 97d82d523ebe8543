// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/camera/pool_loans.hpp"

#include <new>

namespace starsift::gst {

namespace {

struct PoolLoan {
  GstBuffer* buffer;
  GstMapInfo map;
};

// The stream ended with the buffer still lent: back to its pool.
void release_loan(void* owner) {
  GstBuffer* buffer = take_lent_buffer(owner);
  gst_buffer_unref(buffer);
}

}  // namespace

Lending lend_pool_buffer(GstBufferPool* pool, gsize min_bytes, camera::FrameStream& stream) {
  GstBufferPoolAcquireParams params{};
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  GstBuffer* buffer = nullptr;
  if (gst_buffer_pool_acquire_buffer(pool, &buffer, &params) != GST_FLOW_OK || buffer == nullptr) {
    return Lending::NoneFree;
  }
  // One block: mapping several would merge them into a copy, and the camera would write there.
  if (gst_buffer_n_memory(buffer) != 1 || gst_buffer_get_size(buffer) < min_bytes) {
    gst_buffer_unref(buffer);
    return Lending::Unusable;
  }
  auto* loan = new (std::nothrow) PoolLoan{buffer, GST_MAP_INFO_INIT};
  if (loan == nullptr) {
    gst_buffer_unref(buffer);
    return Lending::NoneFree;  // out of memory now; the next frame tries again
  }
  if (!gst_buffer_map(buffer, &loan->map, GST_MAP_WRITE)) {
    delete loan;
    gst_buffer_unref(buffer);
    return Lending::Unusable;
  }
  // Out of memory, the loan ends at once: the buffer goes back to the pool.
  return stream.lend(loan->map.data, loan->map.size, loan, release_loan) ? Lending::Lent
                                                                         : Lending::NoneFree;
}

GstBuffer* take_lent_buffer(void* owner) {
  auto* loan = static_cast<PoolLoan*>(owner);
  GstBuffer* buffer = loan->buffer;
  gst_buffer_unmap(buffer, &loan->map);
  delete loan;
  return buffer;
}

}  // namespace starsift::gst
