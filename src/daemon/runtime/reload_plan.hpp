// SPDX-License-Identifier: LGPL-2.1-or-later
// What a reload does to each pipeline, decided from the old and the new config alone (pure,
// tested without GStreamer), in the manner of mediamtx's reload by diff: a pipeline whose
// config is the same is not touched; one whose only changes the running elements take from
// their next frame (live parameters of whitening and detection, a median's size, the outputs'
// schedules, the restart policy) is updated in place, losing no frame; any other change
// rebuilds that pipeline alone; removed pipelines stop, new ones start.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

enum class PipelineChangeKind {
  Unchanged,  // same config: left running as it is
  Live,       // updated in place (properties and the runtime's own settings)
  Rebuild,    // stopped and built anew from the new config
  Remove,     // not in the new config: stopped
  Add,        // only in the new config: started
};
std::string_view to_string(PipelineChangeKind kind) noexcept;

struct PipelineChange {
  std::string name;
  PipelineChangeKind kind = PipelineChangeKind::Unchanged;
  std::string reason;  // what changed, for the log ("chain stage 1 (whiten): history")
};

// One entry per pipeline of either config: the old config's order first (removed ones
// included), then the new ones in the new config's order.
std::vector<PipelineChange> plan_reload(const DaemonConfig& from, const DaemonConfig& to);

// How `from` becomes `to` for one pipeline of the same name (Unchanged, Live or Rebuild),
// with the reason. `global_rebuild` names a global change that rebuilds every pipeline (the
// state directory), empty when none.
PipelineChange plan_pipeline_change(const PipelineConfig& from, const PipelineConfig& to,
                                    std::string_view global_rebuild = {});

}  // namespace starsift::daemon
