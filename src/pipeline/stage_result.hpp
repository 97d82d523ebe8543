// SPDX-License-Identifier: LGPL-2.1-or-later
// What a stage may hand back with each frame besides its pixels: fixed records (whitening's
// stats) or a variable number of them up to a capacity (a catalogue of objects). The engine
// keeps one result area per stage and slot, hands it back with its frame, in order, and on
// CUDA copies it down on the slot's stream together with the frame.
//
// An area is a ResultHeader followed, at kResultRecordsOffset, by `capacity` records of
// `record_bytes` each. The stage writes the header and `count` records; records that did not
// fit are counted in `overflow`, never written. A fixed layout's header is the engine's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace starsift {

struct ResultLayout {
  // Names the record type ("whiten-stats", "catalogue"): readers check it before they read.
  std::string_view kind;
  std::size_t record_bytes = 0;
  std::uint32_t capacity = 0;  // records per frame at most
  // Every frame has exactly `capacity` records (whitening's one stats record): the stage
  // writes only the records, the engine the header.
  bool fixed = false;

  std::size_t bytes() const noexcept;
};

struct ResultHeader {
  std::uint32_t count = 0;     // records written, <= capacity
  std::uint32_t overflow = 0;  // records beyond the capacity: counted, not written
};

// Records start here, aligned for any record type (and for device copies).
inline constexpr std::size_t kResultRecordsOffset = 16;
static_assert(sizeof(ResultHeader) <= kResultRecordsOffset);

inline std::size_t ResultLayout::bytes() const noexcept {
  return kResultRecordsOffset + record_bytes * capacity;
}

// A stage's result area for one frame: host memory for write_result(), device memory for
// enqueue_result().
template <class Byte>
struct BasicResultView {
  Byte* data = nullptr;  // the header; records at data + kResultRecordsOffset
  std::size_t bytes = 0;

  template <class T>
  auto* records() const {
    using Out = std::conditional_t<std::is_const_v<Byte>, const T, T>;
    return reinterpret_cast<Out*>(data + kResultRecordsOffset);
  }
};

using ResultView = BasicResultView<std::byte>;
using ConstResultView = BasicResultView<const std::byte>;

// Where stage `stage`'s result lies in the one result area a chain keeps per frame.
struct ResultPlacement {
  std::size_t stage = 0;
  ResultLayout layout;
  std::size_t offset = 0;  // from the start of the area; a multiple of kResultRecordsOffset
};

}  // namespace starsift
