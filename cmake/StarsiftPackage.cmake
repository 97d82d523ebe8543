# SPDX-License-Identifier: LGPL-2.1-or-later
# The .deb: `cpack -G DEB` in a built tree (scripts/package.sh builds one) gives
# starsift_<version>_<arch>.deb with what cmake/StarsiftInstall.cmake installs, for the prefix
# /usr whatever the tree's CMAKE_INSTALL_PREFIX (CPack's DEB default). Binaries are stripped.
# Dependencies on Debian's libraries are computed by dpkg-shlibdeps; the maintainer scripts
# in cmake/deb/ create the service's user and directories and never start or enable the
# service by themselves (docs/install.md, "The service").
set(CPACK_PACKAGE_NAME starsift)
set(CPACK_PACKAGE_VENDOR starsift)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU frame processing for camera and telescope hosts (GStreamer plugin, daemon, tool)")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_CONTACT "starsift developers")
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # starsift_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The synopsis is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the text below it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Frames from a GStreamer source (a GigE Vision, USB3 Vision or V4L2 camera, RTSP, files, a
synthetic sky) run through filters on an NVIDIA GPU, or on the CPU when there is none:
median, temporal whitening, detection of moving objects and their tracks.
.
This package holds the GStreamer plugin starsift (gst-inspect-1.0 starsift lists its
elements), the command-line tool starsift, and the daemon starsiftd with its hardened
systemd unit, its system user and an example /etc/starsift/starsiftd.yaml. The service is
neither enabled nor started on installation: edit the configuration, then
systemctl enable --now starsiftd.")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# GStreamer elements starsiftd builds its pipelines from, which no library dependency brings:
# appsink and videoconvert always (plugins-base); v4l2src, rtspsrc, splitmuxsink, matroskamux,
# the PNG and JPEG decoders (plugins-good), x264enc (plugins-ugly) and the H.264/H.265
# decoders an RTSP camera's stream needs (libav) as the config asks;
# aravissrc (libaravis-0.8-0) for GigE and USB3 Vision cameras; nvh264enc (plugins-bad) on
# NVIDIA hosts. systemd-sysusers and systemd-tmpfiles make the service's user and directories;
# without systemd the plugin and the tool still work.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gstreamer1.0-plugins-base")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "systemd, gstreamer1.0-plugins-good, gstreamer1.0-plugins-ugly, gstreamer1.0-libav, libaravis-0.8-0")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gstreamer1.0-plugins-bad, gstreamer1.0-tools")
# cudart is linked statically and cuFFT, which comes only with NVIDIA's CUDA toolkit (no Debian
# package), is loaded at run time by whitening's shift estimation: the package depends on
# neither, and docs/install.md says what a CUDA host needs.

# Maintainer scripts, and the configuration as a conffile when the tree has one.
set(_control ${PROJECT_SOURCE_DIR}/cmake/deb/postinst ${PROJECT_SOURCE_DIR}/cmake/deb/prerm
             ${PROJECT_SOURCE_DIR}/cmake/deb/postrm)
if(EXISTS ${PROJECT_SOURCE_DIR}/config/starsiftd.yaml)
  file(WRITE ${PROJECT_BINARY_DIR}/deb/conffiles "${STARSIFT_INSTALL_CONFIGDIR}/starsiftd.yaml\n")
  list(APPEND _control ${PROJECT_BINARY_DIR}/deb/conffiles)
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${_control})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
