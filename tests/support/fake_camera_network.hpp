// SPDX-License-Identifier: LGPL-2.1-or-later
// A network of its own for a test process that serves fake GigE Vision cameras: a private
// network namespace holding only a loopback interface, so its fake cameras (which take GVCP's
// port on 127.0.0.1) neither meet one that another program serves on this host nor disturb
// it. Where the process may not have one (neither root nor unprivileged user namespaces), the
// host's loopback is used, shared.
#pragma once

#include <string>

namespace starsift::test {

// Moves the calling process into a network namespace of its own with its loopback up. Call
// first thing in main(), before any thread exists: threads started earlier stay outside, and
// processes it starts later are inside. Returns what it did, for the log: "a private network
// namespace" or why the host's loopback is used.
std::string isolate_loopback();

}  // namespace starsift::test
