// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/camera/camera_control.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "pipeline/error.hpp"

namespace starsift::camera {

namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text;
}

// Throws Error for a failed aravis call: `what` names the step, the camera and the value.
void check(GError* error, const std::string& what) {
  if (error == nullptr) return;
  std::string message = what + ": " + error->message;
  g_error_free(error);
  throw Error(std::move(message));
}

std::string text_or(const char* text, const char* fallback) {
  return text != nullptr && *text != '\0' ? text : fallback;
}

// The pixel formats the camera offers, by GenICam name.
std::vector<std::string> offered_pixel_formats(ArvCamera* camera) {
  std::vector<std::string> names;
  guint n = 0;
  GError* error = nullptr;
  const char** formats = arv_camera_dup_available_pixel_formats_as_strings(camera, &n, &error);
  if (error != nullptr) {
    g_error_free(error);
    return names;
  }
  for (guint i = 0; i < n; ++i) names.emplace_back(formats[i]);
  g_free(formats);  // the array only: the strings belong to the camera's GenICam nodes
  return names;
}

std::string taken_of(const std::vector<std::string>& offered) {
  std::vector<std::string> taken;
  for (const std::string& name : offered) {
    if (find_camera_pixel_format(name) != nullptr) taken.push_back(name);
  }
  return taken.empty() ? "none of them" : joined(taken);
}

// Called from aravis's heartbeat thread: only the flag is touched.
void on_control_lost(ArvDevice*, gpointer data) {
  static_cast<std::shared_ptr<std::atomic<bool>>*>(data)->get()->store(true);
}

void free_lost_flag(gpointer data, GClosure*) {
  delete static_cast<std::shared_ptr<std::atomic<bool>>*>(data);
}

// Whether `value` is within [low, high], with a relative slack for floating-point features
// whose bounds come from a conversion.
bool within(double value, double low, double high) {
  const double slack = 1e-9 * std::max(std::abs(low), std::abs(high));
  return value >= low - slack && value <= high + slack;
}

// Whether a value read back differs from the one asked for by more than rounding.
bool differs(double asked, double got) {
  return std::abs(asked - got) > 1e-3 * std::max(std::abs(asked), 1e-9);
}

}  // namespace

std::vector<std::string> CameraControl::list_cameras() {
  arv_update_device_list();
  std::vector<std::string> cameras;
  const unsigned n = arv_get_n_devices();
  for (unsigned i = 0; i < n; ++i) {
    cameras.push_back(text_or(arv_get_device_id(i), "?") + " (" +
                      text_or(arv_get_device_protocol(i), "?") + " at " +
                      text_or(arv_get_device_address(i), "?") + ")");
  }
  return cameras;
}

CameraControl::CameraControl(const std::string& id) : name_(id.empty() ? "(first found)" : id) {
  // A fresh list first: aravis then opens the camera through the interface that found it.
  // Left to discover on its own, it takes the first answer from any interface, and a camera
  // reached through another one (loopback's, answering a broadcast sent out on eth0) streams
  // to an address its packets never arrive at.
  arv_update_device_list();
  GError* error = nullptr;
  camera_ = arv_camera_new(id.empty() ? nullptr : id.c_str(), &error);
  if (camera_ == nullptr) {
    const bool not_found = error != nullptr && error->domain == ARV_DEVICE_ERROR &&
                           error->code == ARV_DEVICE_ERROR_NOT_FOUND;
    const std::string reason = error != nullptr ? error->message : "unknown error";
    if (error != nullptr) g_error_free(error);
    const std::vector<std::string> found = list_cameras();
    const std::string seen =
        found.empty() ? "no camera answered (GigE Vision: same subnet, rp_filter, UDP port 3956 "
                        "open; USB3 Vision: device permissions; docs/cameras.md)"
                      : "a camera id as arv-tool-0.8 lists it; found now: " + joined(found);
    if (id.empty()) throw Error("no camera to open: " + reason, seen);
    if (not_found) throw Error("camera '" + shown_value(id) + "' not found", seen);
    throw Error("cannot open camera '" + shown_value(id) + "': " + reason, seen);
  }
  if (id.empty()) name_ = text_or(arv_camera_get_device_id(camera_, nullptr), "(first found)");
  ArvDevice* device = arv_camera_get_device(camera_);
  lost_handler_ = g_signal_connect_data(device, "control-lost", G_CALLBACK(on_control_lost),
                                        new std::shared_ptr<std::atomic<bool>>(lost_),
                                        free_lost_flag, GConnectFlags{});
}

CameraControl::~CameraControl() {
  if (camera_ == nullptr) return;
  stop_acquisition();
  ArvDevice* device = arv_camera_get_device(camera_);
  if (lost_handler_ != 0 && g_signal_handler_is_connected(device, lost_handler_)) {
    g_signal_handler_disconnect(device, lost_handler_);
  }
  g_object_unref(camera_);
}

void CameraControl::start_acquisition() {
  GError* error = nullptr;
  arv_camera_start_acquisition(camera_, &error);
  check(error, "camera '" + name_ + "': cannot start acquisition");
  acquiring_ = true;
}

void CameraControl::stop_acquisition() noexcept {
  if (!acquiring_) return;
  acquiring_ = false;
  if (lost()) return;  // nobody to tell, and every write would wait for its timeout
  GError* error = nullptr;
  arv_camera_stop_acquisition(camera_, &error);
  if (error != nullptr) g_error_free(error);  // stopping anyway
}

CameraMode CameraControl::configure(const CameraSettings& settings) {
  settings.validate();
  CameraMode mode;
  mode.id = name_;
  mode.gige = arv_camera_is_gv_device(camera_);
  const std::string cam = "camera '" + name_ + "'";
  GError* error = nullptr;

  mode.description = text_or(arv_camera_get_vendor_name(camera_, nullptr), "?") + " " +
                     text_or(arv_camera_get_model_name(camera_, nullptr), "?") + " (serial " +
                     text_or(arv_camera_get_device_serial_number(camera_, nullptr), "?") + ", " +
                     (mode.gige ? "GigE Vision" : "USB3 Vision") + ")";

  // Free running: frames as fast as the frame rate says, not one per trigger request.
  arv_camera_set_acquisition_mode(camera_, ARV_ACQUISITION_MODE_CONTINUOUS, &error);
  check(error, cam + ": cannot set AcquisitionMode to Continuous");

  // Pixel format first: the payload, and the frame rate's bounds, follow it.
  if (!settings.pixel_format.empty()) {
    const std::vector<std::string> offered = offered_pixel_formats(camera_);
    bool offers = false;
    for (const std::string& name : offered) offers = offers || name == settings.pixel_format;
    if (!offers) {
      throw Error(
          cam + " does not offer pixel-format " + settings.pixel_format,
          "of what it offers (" + joined(offered) + "), siftcamsrc takes " + taken_of(offered));
    }
    arv_camera_set_pixel_format_from_string(camera_, settings.pixel_format.c_str(), &error);
    check(error, cam + ": cannot set pixel-format " + settings.pixel_format);
  }
  const std::string current = text_or(arv_camera_get_pixel_format_as_string(camera_, &error), "");
  check(error, cam + ": cannot read PixelFormat");
  const CameraPixelFormat* pixel = find_camera_pixel_format(current);
  if (pixel == nullptr) {
    throw Error(cam + " sends pixel format " + (current.empty() ? "(unknown)" : current) +
                    ", which siftcamsrc does not take",
                "pixel-format " + camera_pixel_format_names() + "; the camera offers " +
                    taken_of(offered_pixel_formats(camera_)) + " of those");
  }
  mode.pixel = *pixel;

  // The stream's packet size (GigE Vision): as asked within the camera's bounds, else the
  // largest the path to the camera carries (aravis tries sizes until packets arrive whole).
  if (mode.gige) {
    if (settings.packet_size > 0) {
      gint64 low = 0, high = 0;
      arv_camera_get_integer_bounds(camera_, "GevSCPSPacketSize", &low, &high, &error);
      check(error, cam + ": cannot read the bounds of GevSCPSPacketSize");
      if (settings.packet_size < low || settings.packet_size > high) {
        throw Error("packet-size " + std::to_string(settings.packet_size) + " is outside what " +
                        cam + " takes",
                    std::to_string(low) + ".." + std::to_string(high) + " bytes");
      }
      arv_camera_gv_set_packet_size(camera_, settings.packet_size, &error);
      check(error, cam + ": cannot set packet-size " + std::to_string(settings.packet_size));
    } else {
      arv_camera_gv_auto_packet_size(camera_, &error);
      check(error, cam + ": cannot negotiate a packet size");
    }
    mode.packet_size = static_cast<int>(arv_camera_gv_get_packet_size(camera_, &error));
    check(error, cam + ": cannot read the packet size");
  } else if (settings.packet_size > 0) {
    mode.warnings.push_back("packet-size " + std::to_string(settings.packet_size) +
                            " is ignored: " + cam + " is a USB3 Vision camera");
  }

  // Exposure before the frame rate: a long exposure lowers the highest rate.
  const bool has_exposure = arv_camera_is_exposure_time_available(camera_, nullptr);
  if (settings.exposure_us) {
    const double asked = *settings.exposure_us;
    if (!has_exposure) {
      throw Error(cam + " has no exposure time to set (no ExposureTime feature)",
                  "exposure-us -1 (the camera's own)");
    }
    if (arv_camera_is_exposure_auto_available(camera_, nullptr)) {
      arv_camera_set_exposure_time_auto(camera_, ARV_AUTO_OFF, &error);
      check(error, cam + ": cannot turn ExposureAuto off");
    }
    double low = 0.0, high = 0.0;
    arv_camera_get_exposure_time_bounds(camera_, &low, &high, &error);
    check(error, cam + ": cannot read the exposure time's bounds");
    if (!within(asked, low, high)) {
      throw Error("exposure-us " + number_text(asked) + " is outside what " + cam + " takes",
                  number_text(low) + ".." + number_text(high) + " us");
    }
    arv_camera_set_exposure_time(camera_, asked, &error);
    check(error, cam + ": cannot set exposure-us " + number_text(asked));
  }
  if (has_exposure) {
    mode.exposure_us = arv_camera_get_exposure_time(camera_, &error);
    check(error, cam + ": cannot read the exposure time");
    if (settings.exposure_us && differs(*settings.exposure_us, *mode.exposure_us)) {
      mode.warnings.push_back(cam + " exposes " + number_text(*mode.exposure_us) + " us, not the " +
                              number_text(*settings.exposure_us) + " us asked (its steps)");
    }
  }

  const bool has_fps = arv_camera_is_frame_rate_available(camera_, nullptr);
  if (settings.has_fps()) {
    const double asked = settings.fps();
    if (!has_fps) {
      throw Error(cam + " has no frame rate to set (no AcquisitionFrameRate feature)",
                  "fps 0/1 (the camera's own)");
    }
    double low = 0.0, high = 0.0;
    arv_camera_get_frame_rate_bounds(camera_, &low, &high, &error);
    check(error, cam + ": cannot read the frame rate's bounds");
    if (!within(asked, low, high)) {
      throw Error(
          "fps " + number_text(asked) + " is outside what " + cam + " takes" +
              (mode.exposure_us ? " at an exposure of " + number_text(*mode.exposure_us) + " us"
                                : std::string()),
          number_text(low) + ".." + number_text(high) + " frames per second");
    }
    arv_camera_set_frame_rate(camera_, asked, &error);
    check(error, cam + ": cannot set fps " + number_text(asked));
  }
  if (has_fps) {
    mode.fps = arv_camera_get_frame_rate(camera_, &error);
    check(error, cam + ": cannot read the frame rate");
    if (settings.has_fps() && differs(settings.fps(), mode.fps)) {
      mode.warnings.push_back(cam + " runs at " + number_text(mode.fps) + " fps, not the " +
                              number_text(settings.fps()) + " asked (its steps)");
    }
  }

  const bool has_gain = arv_camera_is_gain_available(camera_, nullptr);
  if (settings.gain_db) {
    const double asked = *settings.gain_db;
    if (!has_gain) {
      throw Error(cam + " has no gain to set (no Gain feature)", "gain-db -1 (the camera's own)");
    }
    if (arv_camera_is_gain_auto_available(camera_, nullptr)) {
      arv_camera_set_gain_auto(camera_, ARV_AUTO_OFF, &error);
      check(error, cam + ": cannot turn GainAuto off");
    }
    double low = 0.0, high = 0.0;
    arv_camera_get_gain_bounds(camera_, &low, &high, &error);
    check(error, cam + ": cannot read the gain's bounds");
    if (!within(asked, low, high)) {
      throw Error("gain-db " + number_text(asked) + " is outside what " + cam + " takes",
                  number_text(low) + ".." + number_text(high) + " dB");
    }
    arv_camera_set_gain(camera_, asked, &error);
    check(error, cam + ": cannot set gain-db " + number_text(asked));
  }
  if (has_gain) {
    mode.gain_db = arv_camera_get_gain(camera_, &error);
    check(error, cam + ": cannot read the gain");
    if (settings.gain_db && differs(*settings.gain_db, *mode.gain_db)) {
      mode.warnings.push_back(cam + " set its gain to " + number_text(*mode.gain_db) +
                              " dB, not the " + number_text(*settings.gain_db) +
                              " dB asked (its steps)");
    }
  }

  gint x = 0, y = 0;
  arv_camera_get_region(camera_, &x, &y, &mode.width, &mode.height, &error);
  check(error, cam + ": cannot read the image's size (Width, Height)");
  if (mode.width <= 0 || mode.height <= 0) {
    throw Error(cam + " reports an image of " + std::to_string(mode.width) + "x" +
                std::to_string(mode.height) + " pixels");
  }
  const std::size_t bytes_per_pixel = mode.pixel.format == PixelFormat::Gray8 ? 1 : 2;
  mode.row_bytes = static_cast<std::size_t>(mode.width) * bytes_per_pixel;
  mode.payload = arv_camera_get_payload(camera_, &error);
  check(error, cam + ": cannot read PayloadSize");
  const std::size_t image_bytes = mode.row_bytes * static_cast<std::size_t>(mode.height);
  if (mode.payload < image_bytes) {
    throw Error(cam + " sends " + std::to_string(mode.payload) + " bytes per frame, fewer than a " +
                    std::to_string(mode.width) + "x" + std::to_string(mode.height) + " " +
                    std::string(mode.pixel.genicam) + " image holds (" +
                    std::to_string(image_bytes) + ")",
                "unpacked " + camera_pixel_format_names());
  }
  return mode;
}

}  // namespace starsift::camera
