// GstSiftTransform: the abstract base of the starsift elements, a GstBaseTransform that keeps
// the frame as it is (same caps in and out, a new output buffer). It owns what every element
// means the same way: the `backend`, `device-id` and `active-backend` properties and the
// backend's resolution, caps negotiation, allocation with GstVideoMeta, controlled properties
// synced per buffer, frames mapped as image views, and exceptions turned into element errors.
// An element fills in the hooks of GstSiftTransformClass with its own filtering.
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <memory>
#include <optional>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"
#include "plugins/common/stream.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_TRANSFORM (gst_sift_transform_get_type())
G_DECLARE_DERIVABLE_TYPE(GstSiftTransform, gst_sift_transform, GST, SIFT_TRANSFORM,
                         GstBaseTransform)

// The hooks run on the streaming thread, except set_backend() at start and reset() at stop,
// which run on the thread changing the state. Every hook but reset() may throw: the base
// posts the exception as an element error (starsift::Error as LIBRARY/SETTINGS) and fails the
// call it came from.
struct _GstSiftTransformClass {
  GstBaseTransformClass parent_class;

  // The backend is chosen: at start, and before the first frame after `backend` or
  // `device-id` changed. Whatever ran on the previous backend must go.
  void (*set_backend)(GstSiftTransform* self, const starsift::BackendChoice& choice);
  // New caps: frames of `shape` from now on (allocate here, not per frame).
  void (*configure)(GstSiftTransform* self, const starsift::FrameShape& shape);
  // One frame in host memory, `out` of the same shape; apply property changes first.
  void (*filter)(GstSiftTransform* self, starsift::ConstImageView in, starsift::ImageView out);
  // Stop: drop all streaming state. Never throws.
  void (*reset)(GstSiftTransform* self);

  // With `depth` >= 2 the base runs the element through the streaming engine, on stages
  // built here for `choice` (start, backend changes, and whenever stages_generation()
  // changed: the base first pushes the frames in flight downstream). configure() and filter()
  // then serve depth 1 only.
  std::vector<std::unique_ptr<starsift::FilterStage>> (*build_stages)(
      GstSiftTransform* self, const starsift::BackendChoice& choice);
  // A number that changes whenever build_stages() would build something else (new parameters).
  guint64 (*stages_generation)(GstSiftTransform* self);
  // Optional, depth >= 2: takes the new parameters into the running stages instead of
  // building new ones (stages with history keep it). Called with no frame in flight (the
  // base pushes them downstream first), on the streaming thread. Returns false when the
  // stages must be rebuilt after all. May throw starsift::Error (the frame then fails).
  gboolean (*update_stages)(GstSiftTransform* self);

  gpointer padding[GST_PADDING];
};

G_END_DECLS

namespace starsift::gst {

// The backend the element runs on; valid from start to stop.
const BackendChoice& backend_choice(GstSiftTransform* self);

// The negotiated frame shape, or NULL before caps (and after caps that were refused).
const FrameShape* negotiated_shape(GstSiftTransform* self);

// The negotiated caps as video info (same in and out), or NULL before caps. Streaming thread.
const GstVideoInfo* negotiated_info(GstSiftTransform* self);

// The `depth` the element started with (1 before start).
int streaming_depth(GstSiftTransform* self);

// The frames in flight through the engine and their counters (depth >= 2), from any thread;
// nullopt at depth 1 or when stopped.
std::optional<StreamSnapshot> stream_snapshot(GstSiftTransform* self);

// Input buffers QoS dropped as too late since start (any depth), from any thread.
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

// set_property: reports a refused value (the property keeps its previous one) in `category`
// and as a GLib warning naming the element, the property and `why`.
void warn_refused_value(GObject* object, GstDebugCategory* category, GParamSpec* pspec,
                        const char* why);

}  // namespace starsift::gst
