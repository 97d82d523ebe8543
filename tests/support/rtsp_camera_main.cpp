// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift_rtsp_camera: an IP camera for tests: H.264 over RTSP (gst-rtsp-server) from a moving
// test pattern, on 127.0.0.1 only, until SIGINT or SIGTERM. Prints "ready <url>" once it
// serves. Stopping it with SIGSTOP makes a camera that hangs: its connections stay open and
// nothing answers, as a camera that crashed does (RMS saw rtspsrc block on TEARDOWN there).
//
//   starsift_rtsp_camera --port P [--fps F] [--size N]
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/serve_until_signalled.hpp"

namespace {

int usage(const char* problem) {
  std::fprintf(stderr,
               "starsift_rtsp_camera: %s\nusage: starsift_rtsp_camera --port P [--fps F] "
               "[--size N]\n",
               problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  int fps = 10;
  int size = 128;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage(("no value after " + flag).c_str());
    const int value = std::atoi(argv[++i]);
    if (flag == "--port") {
      port = value;
    } else if (flag == "--fps") {
      fps = value;
    } else if (flag == "--size") {
      size = value;
    } else {
      return usage(("unknown option " + flag).c_str());
    }
  }
  if (port <= 0 || port > 65535 || fps <= 0 || fps > 120 || size < 16 || size > 4096) {
    return usage("--port takes 1..65535, --fps 1..120, --size 16..4096");
  }
  gst_init(&argc, &argv);
  for (const char* factory : {"x264enc", "rtph264pay"}) {
    GstElementFactory* f = gst_element_factory_find(factory);
    if (f == nullptr) {
      std::printf("SKIPPED: no %s (gstreamer1.0-plugins-ugly, -good)\n", factory);
      return 77;
    }
    gst_object_unref(f);
  }

  GstRTSPServer* server = gst_rtsp_server_new();
  gst_rtsp_server_set_address(server, "127.0.0.1");
  gst_rtsp_server_set_service(server, std::to_string(port).c_str());
  GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
  const std::string launch =
      "( videotestsrc is-live=true pattern=ball ! video/x-raw,width=" + std::to_string(size) +
      ",height=" + std::to_string(size) + ",framerate=" + std::to_string(fps) +
      "/1 ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=" + std::to_string(fps) +
      " ! rtph264pay name=pay0 pt=96 config-interval=1 )";
  gst_rtsp_media_factory_set_launch(factory, launch.c_str());
  gst_rtsp_media_factory_set_shared(factory, TRUE);
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server);
  gst_rtsp_mount_points_add_factory(mounts, "/cam", factory);
  g_object_unref(mounts);
  if (gst_rtsp_server_attach(server, nullptr) == 0) {
    std::fprintf(stderr, "starsift_rtsp_camera: cannot serve on 127.0.0.1:%d\n", port);
    return 1;
  }
  std::printf("ready rtsp://127.0.0.1:%d/cam\n", port);
  std::fflush(stdout);

  starsift::test::serve_until_signalled();
  g_object_unref(server);
  return 0;
}
