// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/frame_allocator.hpp"

#include <new>

#include "pipeline/frame_memory.hpp"

namespace {

struct SiftFrameMemory {
  GstMemory memory;
  starsift::FrameMemory frame;  // shared with the parent for sub-memories
};

struct GstSiftFrameAllocator {
  GstAllocator parent;
};
struct GstSiftFrameAllocatorClass {
  GstAllocatorClass parent_class;
};

GType gst_sift_frame_allocator_get_type();
G_DEFINE_TYPE(GstSiftFrameAllocator, gst_sift_frame_allocator, GST_TYPE_ALLOCATOR)

GstMemory* sift_frame_alloc(GstAllocator* allocator, gsize size, GstAllocationParams* params) {
  const gsize maxsize = size + params->prefix + params->padding;
  auto* m = new (std::nothrow) SiftFrameMemory{};
  if (m == nullptr) return nullptr;
  try {
    m->frame = starsift::allocate_frame_memory(maxsize);
  } catch (...) {
    delete m;
    return nullptr;
  }
  gst_memory_init(GST_MEMORY_CAST(m), params->flags, allocator, nullptr, maxsize, params->align,
                  params->prefix, size);
  return GST_MEMORY_CAST(m);
}

void sift_frame_free(GstAllocator*, GstMemory* memory) {
  auto* m = reinterpret_cast<SiftFrameMemory*>(memory);
  if (memory->parent == nullptr) starsift::free_frame_memory(m->frame);
  delete m;
}

gpointer sift_frame_map(GstMemory* memory, gsize, GstMapFlags) {
  return reinterpret_cast<SiftFrameMemory*>(memory)->frame.data;
}

void sift_frame_unmap(GstMemory*) {}

GstMemory* sift_frame_share(GstMemory* memory, gssize offset, gssize size) {
  GstMemory* parent = memory->parent != nullptr ? memory->parent : memory;
  if (size == -1) size = static_cast<gssize>(memory->size) - offset;
  auto* sub = new (std::nothrow) SiftFrameMemory{};
  if (sub == nullptr) return nullptr;
  sub->frame = reinterpret_cast<SiftFrameMemory*>(memory)->frame;
  gst_memory_init(GST_MEMORY_CAST(sub),
                  static_cast<GstMemoryFlags>(GST_MINI_OBJECT_FLAGS(parent) |
                                              GST_MINI_OBJECT_FLAG_LOCK_READONLY),
                  memory->allocator, parent, memory->maxsize, memory->align,
                  memory->offset + offset, static_cast<gsize>(size));
  return GST_MEMORY_CAST(sub);
}

void gst_sift_frame_allocator_class_init(GstSiftFrameAllocatorClass* klass) {
  GstAllocatorClass* allocator_class = GST_ALLOCATOR_CLASS(klass);
  allocator_class->alloc = sift_frame_alloc;
  allocator_class->free = sift_frame_free;
}

void gst_sift_frame_allocator_init(GstSiftFrameAllocator* self) {
  GstAllocator* allocator = GST_ALLOCATOR_CAST(self);
  allocator->mem_type = starsift::gst::kFrameMemoryType;
  allocator->mem_map = sift_frame_map;
  allocator->mem_unmap = sift_frame_unmap;
  allocator->mem_share = sift_frame_share;
}

}  // namespace

namespace starsift::gst {

GstAllocator* frame_allocator() {
  static GstAllocator* const allocator = [] {
    auto* a =
        static_cast<GstAllocator*>(g_object_new(gst_sift_frame_allocator_get_type(), nullptr));
    gst_object_ref_sink(a);
    GST_OBJECT_FLAG_SET(a, GST_OBJECT_FLAG_MAY_BE_LEAKED);  // lives as long as the process
    return a;
  }();
  return static_cast<GstAllocator*>(gst_object_ref(allocator));
}

bool is_pinned_frame_memory(GstMemory* memory) {
  return memory != nullptr && gst_memory_is_type(memory, kFrameMemoryType) &&
         reinterpret_cast<SiftFrameMemory*>(memory)->frame.pinned;
}

}  // namespace starsift::gst
