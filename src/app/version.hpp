// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift version`: what this build is and which backends it can use here.
#pragma once

namespace starsift::app {

void print_version();

}  // namespace starsift::app
