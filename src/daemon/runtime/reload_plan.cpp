// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/reload_plan.hpp"

#include <variant>

#include "daemon/runtime/pipeline_plan.hpp"
#include "pipeline/chain/chain_stages.hpp"

namespace starsift::daemon {

std::string_view to_string(PipelineChangeKind kind) noexcept {
  switch (kind) {
    case PipelineChangeKind::Unchanged:
      return "unchanged";
    case PipelineChangeKind::Live:
      return "live";
    case PipelineChangeKind::Rebuild:
      return "rebuild";
    case PipelineChangeKind::Remove:
      return "remove";
    case PipelineChangeKind::Add:
      return "add";
  }
  return "unknown";
}

namespace {

// Why the chains cannot be switched in place, or empty when they can (stage by stage the same
// or live), with `live` telling whether anything changed at all.
std::string chain_rebuild_reason(const ChainConfig& from, const ChainConfig& to, bool* changed) {
  const ChainSplit a = split_chain(from);
  const ChainSplit b = split_chain(to);
  *changed = false;
  if (a.detect.has_value() != b.detect.has_value()) return "chain: the final detect stage";
  if (a.detect && b.detect && !(*a.detect == *b.detect)) {
    if (!detect_live_change(*a.detect, *b.detect)) {
      return "chain: detect's output or max-objects";
    }
    *changed = true;
  }
  if (a.chain.size() != b.chain.size()) return "chain: the number of stages";
  if (a.chain.empty()) return {};
  const auto changes = plan_chain_update(ChainConfig{a.chain}, ChainConfig{b.chain});
  if (!changes) return "chain: the number of stages";
  for (std::size_t i = 0; i < changes->size(); ++i) {
    const StageChange c = (*changes)[i];
    if (c == StageChange::Same) continue;
    if (c == StageChange::Live) {
      *changed = true;
      continue;
    }
    return "chain stage " + std::to_string(i + 1) + " (" + b.chain[i].filter +
           "): a parameter that " +
           (c == StageChange::Restart ? "restarts the stage's state" : "replaces the stage");
  }
  return {};
}

}  // namespace

PipelineChange plan_pipeline_change(const PipelineConfig& from, const PipelineConfig& to,
                                    std::string_view global_rebuild) {
  PipelineChange change{to.name, PipelineChangeKind::Unchanged, {}};
  const auto rebuild = [&](std::string reason) {
    change.kind = PipelineChangeKind::Rebuild;
    change.reason = std::move(reason);
    return change;
  };
  if (!global_rebuild.empty()) return rebuild(std::string(global_rebuild));
  if (from == to) return change;
  if (!(from.source == to.source)) return rebuild("source");
  if (from.backend != to.backend || from.device != to.device) return rebuild("backend or device");
  if (from.depth != to.depth) return rebuild("depth");
  // siftdetect takes the tracker's settings in READY: a new tracker, starting over.
  if (!(from.tracker == to.tracker)) return rebuild("tracker");
  if (!(from.outputs.video == to.outputs.video)) return rebuild("outputs.video");
  // Each live view is a branch of its own.
  if (views_wanted(from.outputs) != views_wanted(to.outputs)) {
    return rebuild("outputs: the live views taken");
  }
  // The frames branch exists only when FITS, the preview or a clip's cube want frames.
  if (wants_raw_frames(from.outputs) != wants_raw_frames(to.outputs)) {
    return rebuild("outputs: frames for FITS, the preview or clips turned on or off");
  }
  bool chain_changed = false;
  const std::string reason =
      chain_rebuild_reason(from.chain.config, to.chain.config, &chain_changed);
  if (!reason.empty()) return rebuild(reason);
  change.kind = PipelineChangeKind::Live;
  std::string what;
  const auto add = [&](const char* part) {
    what += what.empty() ? part : std::string(", ") + part;
  };
  if (chain_changed) add("chain parameters");
  if (!(from.outputs == to.outputs)) add("outputs");
  if (!(from.restart == to.restart) || from.stall_timeout_s != to.stall_timeout_s) {
    add("restart policy");
  }
  if (what.empty()) add("chain file");  // the same chain, read from another file
  change.reason = what;
  return change;
}

std::vector<PipelineChange> plan_reload(const DaemonConfig& from, const DaemonConfig& to) {
  std::vector<PipelineChange> changes;
  const std::string global =
      from.state_directory != to.state_directory ? "state-directory" : std::string{};
  for (const PipelineConfig& old : from.pipelines) {
    if (const PipelineConfig* next = to.find_pipeline(old.name)) {
      changes.push_back(plan_pipeline_change(old, *next, global));
    } else {
      changes.push_back({old.name, PipelineChangeKind::Remove, "not in the new config"});
    }
  }
  for (const PipelineConfig& next : to.pipelines) {
    if (from.find_pipeline(next.name) == nullptr) {
      changes.push_back({next.name, PipelineChangeKind::Add, "new in the config"});
    }
  }
  return changes;
}

}  // namespace starsift::daemon
