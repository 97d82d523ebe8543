// SPDX-License-Identifier: LGPL-2.1-or-later
// Whether a CUDA device is usable, asked without failing when there is no driver at all.
#pragma once

#include <string>

namespace starsift::cuda {

// Empty when `device_id` can run starsift's kernels; otherwise why not ("no NVIDIA driver",
// "device-id 3 out of range, 1 device(s) present", "compute capability 5.2 below 7.0").
// On success `description` (if given) receives "<name>, sm_<major><minor>".
std::string device_unusable_reason(int device_id, std::string* description);

// What launchers ask of the current device at every frame, asked of the driver once a device
// (a per-frame query is a driver call in the hot path); zeros where it cannot be asked.
struct DeviceFacts {
  int multiprocessors = 0;
  int major = 0;                   // compute capability
  int shared_per_block_optin = 0;  // bytes a block may opt in to
};
DeviceFacts current_device_facts();

}  // namespace starsift::cuda
