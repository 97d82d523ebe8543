// SPDX-License-Identifier: LGPL-2.1-or-later
// The test servers' main loop (the fake GigE camera, the RTSP camera): runs the default
// GLib main context until SIGINT or SIGTERM, so a test ends them with a signal.
#pragma once

#include <glib-unix.h>
#include <glib.h>

namespace starsift::test {

inline void serve_until_signalled() {
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  const auto quit = [](gpointer data) -> gboolean {
    g_main_loop_quit(static_cast<GMainLoop*>(data));
    return G_SOURCE_REMOVE;
  };
  g_unix_signal_add(SIGINT, quit, loop);
  g_unix_signal_add(SIGTERM, quit, loop);
  g_main_loop_run(loop);
  g_main_loop_unref(loop);
}

}  // namespace starsift::test
