// SPDX-License-Identifier: LGPL-2.1-or-later
// A config file's text, read with the same care as a chain file: only a regular file of a
// sane size, judged before it is opened (opening a FIFO waits for a writer; a device such as
// /dev/zero never ends).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace starsift::daemon {

// The file's text. Throws ConfigErrors with one problem at "<path>" ("cannot read the config
// file: it is a directory", "...: it has 2000000 bytes", "...: No such file or directory").
std::string read_config_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace starsift::daemon
