# SPDX-License-Identifier: LGPL-2.1-or-later
# Where `cmake --install` puts starsift's files, each relative to CMAKE_INSTALL_PREFIX so that
# DESTDIR and CPack work: GStreamer's plugin directory and systemd's unit, sysusers.d and
# tmpfiles.d directories as their pkg-config files name them for the prefix they were built
# with, made relative to that prefix. With --prefix /usr the plugin lands where GStreamer
# looks without GST_PLUGIN_PATH and the unit where systemd looks.
include(GNUInstallDirs)

# starsift_relative_dir(<out> <pkg-config module> <variable> <fallback>): <variable> of the
# module made relative to the module's own prefix. A directory outside that prefix (Debian 12's
# systemd names /lib/systemd/system with prefix /usr) and a module that is not there give
# <fallback>.
function(starsift_relative_dir out module variable fallback)
  set(value "")
  pkg_get_variable(_dir ${module} ${variable})
  pkg_get_variable(_prefix ${module} prefix)
  if(_dir AND _prefix)
    cmake_path(IS_PREFIX _prefix "${_dir}" NORMALIZE _inside)
    if(_inside)
      file(RELATIVE_PATH value "${_prefix}" "${_dir}")
    endif()
  endif()
  if(NOT value)
    set(value "${fallback}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

starsift_relative_dir(_gst_plugins gstreamer-1.0 pluginsdir "${CMAKE_INSTALL_LIBDIR}/gstreamer-1.0")
starsift_relative_dir(_units systemd systemdsystemunitdir "lib/systemd/system")
starsift_relative_dir(_sysusers systemd sysusersdir "lib/sysusers.d")
starsift_relative_dir(_tmpfiles systemd tmpfilesdir "lib/tmpfiles.d")

set(STARSIFT_INSTALL_GST_PLUGINDIR "${_gst_plugins}" CACHE STRING
    "GStreamer plugin directory, relative to the install prefix")
set(STARSIFT_INSTALL_UNITDIR "${_units}" CACHE STRING
    "systemd system unit directory, relative to the install prefix")
set(STARSIFT_INSTALL_SYSUSERSDIR "${_sysusers}" CACHE STRING
    "sysusers.d directory, relative to the install prefix")
set(STARSIFT_INSTALL_TMPFILESDIR "${_tmpfiles}" CACHE STRING
    "tmpfiles.d directory, relative to the install prefix")
# The daemon reads /etc/starsift whatever the prefix (the unit names that path).
set(STARSIFT_INSTALL_CONFIGDIR "/etc/starsift" CACHE PATH
    "Directory of starsiftd.yaml (absolute: the unit's --config names it)")
