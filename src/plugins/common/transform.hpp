// SPDX-License-Identifier: LGPL-2.1-or-later
// GstSiftTransform: the abstract base of the starsift filter elements, a GstBaseTransform
// that runs every frame through the streaming engine (depth 1 included: one path for every
// element and every depth). It owns what every element means the same way: the `backend`,
// `device-id`, `active-backend`, `depth` and `bit-depth` properties and the backend's
// resolution, caps that follow the chain's output (a converting stage changes the format),
// allocation with GstVideoMeta and frame-memory pools, controlled properties synced per
// buffer, parameter changes applied live where the stages allow it, each stage's per-frame
// result attached to its frame as a GstSiftResultMeta, and failures posted once as element
// errors.
//
// An element describes what it runs as a chain (pipeline/chain/chain_config.hpp): siftmedian
// a one-stage median chain, siftwhiten a whitening one, siftchain the YAML it was given.
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>
#include <optional>

#include "pipeline/backend.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/pixel_format.hpp"
#include "plugins/common/stream.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_TRANSFORM (gst_sift_transform_get_type())
G_DECLARE_DERIVABLE_TYPE(GstSiftTransform, gst_sift_transform, GST, SIFT_TRANSFORM,
                         GstBaseTransform)

struct _GstSiftTransformClass {
  GstBaseTransformClass parent_class;

  // The chain the element's properties describe now, its parameters validated (the format is
  // checked once caps are known). Called at start (`starting`: re-read what may have changed
  // on disk) and, on the streaming thread, before the first frame after chain_changed().
  // Throws starsift::Error when there is no valid chain to run.
  std::shared_ptr<const starsift::ChainConfig> (*describe_chain)(GstSiftTransform* self,
                                                                 gboolean starting);
  // Optional: every frame just before it goes downstream, its result metas attached
  // (`frame.results` holds the same results, in the engine's memory). Streaming thread; the
  // one place an element reports a frame (messages, a stats property). Never throws.
  void (*frame_out)(GstSiftTransform* self, GstBuffer* buffer,
                    const starsift::FinishedFrame& frame);

  gpointer padding[GST_PADDING];
};

G_END_DECLS

namespace starsift::gst {

// Property setters call this after storing a value that changes describe_chain(): the next
// frame runs with it (live where the stages allow it, else after the frames in flight).
void chain_changed(GstSiftTransform* self);

// The negotiated input shape (bit depth included), or nothing before caps; any thread. For
// refusing property values that do not fit the running format.
std::optional<FrameShape> negotiated_input(GstSiftTransform* self);

// The chain the element runs (or will run, from start), nothing when stopped; any thread.
std::shared_ptr<const ChainConfig> running_chain(GstSiftTransform* self);

// The depth the element started with (the property's value before start).
int streaming_depth(GstSiftTransform* self);

// The frames through the engine and their counters, from any thread; nothing before the
// first start.
std::optional<StreamSnapshot> stream_snapshot(GstSiftTransform* self);

// The backend the element runs on ("cpu", "cuda:0"; empty when stopped), any thread.
std::string active_backend(GstSiftTransform* self);

// Input buffers QoS dropped as too late since start, from any thread.
guint64 qos_dropped(GstSiftTransform* self);

// GST_OBJECT_LOCK for a scope, for code that may throw while holding it (C++ copies).
class ObjectLock {
 public:
  explicit ObjectLock(gpointer object) : object_(GST_OBJECT(object)) { GST_OBJECT_LOCK(object_); }
  ~ObjectLock() { GST_OBJECT_UNLOCK(object_); }
  ObjectLock(const ObjectLock&) = delete;
  ObjectLock& operator=(const ObjectLock&) = delete;

 private:
  GstObject* object_;
};

// A copy of `value`, one of the element's settings, taken under its object lock.
template <class T>
T locked_copy(gpointer self, const T& value) {
  const ObjectLock lock(self);
  return value;
}

// describe_chain of an element of one filter: the one stage `filter` with `params` as they are
// now, named in messages as from `source` ("siftgauss properties").
template <class Params>
std::shared_ptr<const ChainConfig> one_stage_chain(GstSiftTransform* self, const char* filter,
                                                   const Params& params, const char* source) {
  auto chain = std::make_shared<ChainConfig>();
  chain->stages.push_back({filter, locked_copy(self, params), {source}});
  return chain;
}

// set_property: stores a property's change to an element's parameters when they accept it.
// `apply` (the change) on a copy of `params` read under the object lock must pass validate()
// and, once caps are set, validate_for() of the negotiated shape (or of its format, for
// parameters checked against the format alone); then `apply` on `params` itself, under the
// lock. Otherwise throws starsift::Error, `params` unchanged. The caller then calls
// chain_changed().
template <class Params, class Apply>
void store_checked(GstSiftTransform* self, Params& params, Apply&& apply) {
  Params candidate = locked_copy(self, params);
  apply(candidate);
  candidate.validate();
  if (const auto shape = negotiated_input(self)) {
    if constexpr (requires { candidate.validate_for(*shape); }) {
      candidate.validate_for(*shape);
    } else {
      candidate.validate_for(shape->format);
    }
  }
  const ObjectLock lock(self);
  apply(params);
}

// set_property: reports a refused value (the property keeps its previous one) in `category`
// and as a GLib warning naming the element, the property and `why`.
void warn_refused_value(GObject* object, GstDebugCategory* category, GParamSpec* pspec,
                        const char* why);

}  // namespace starsift::gst
