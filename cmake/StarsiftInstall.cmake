# SPDX-License-Identifier: LGPL-2.1-or-later
# What `cmake --install` installs, all in one place (docs/install.md lists it). Included by the
# top-level CMakeLists.txt after every target is defined. The project's libraries are static,
# so the installed programs and plugin need nothing from the build tree; CMake drops the
# build-tree RUNPATH when it installs them.
include(${CMAKE_CURRENT_LIST_DIR}/StarsiftInstallDirs.cmake)

install(TARGETS gststarsift LIBRARY DESTINATION ${STARSIFT_INSTALL_GST_PLUGINDIR} COMPONENT starsift)
install(TARGETS starsift RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT starsift)
if(TARGET starsiftd)
  install(TARGETS starsiftd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT starsift)
endif()

# The service: unit, its user (sysusers.d) and directories (tmpfiles.d), both named after the
# package as Debian's helpers name them.
install(FILES ${PROJECT_SOURCE_DIR}/systemd/starsiftd.service
        DESTINATION ${STARSIFT_INSTALL_UNITDIR} COMPONENT starsift)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/starsift.sysusers
        DESTINATION ${STARSIFT_INSTALL_SYSUSERSDIR} RENAME starsift.conf COMPONENT starsift)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/starsift.tmpfiles
        DESTINATION ${STARSIFT_INSTALL_TMPFILESDIR} RENAME starsift.conf COMPONENT starsift)

# The daemon's configuration: an example to edit, a conffile in the .deb. Installed 0644 (the
# example holds no secret); tmpfiles.d makes it 0640 root:starsift at installation and at every
# boot, since an edited one may name camera credentials.
set(STARSIFT_DAEMON_CONFIG ${PROJECT_SOURCE_DIR}/config/starsiftd.yaml)
if(EXISTS ${STARSIFT_DAEMON_CONFIG})
  install(FILES ${STARSIFT_DAEMON_CONFIG} DESTINATION ${STARSIFT_INSTALL_CONFIGDIR} COMPONENT starsift)
endif()

# Documentation: share/doc/starsift.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT starsift)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT starsift FILES_MATCHING PATTERN "*.md")
install(FILES ${PROJECT_SOURCE_DIR}/config/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/config
        COMPONENT starsift)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/config/examples DESTINATION ${CMAKE_INSTALL_DOCDIR}/config
        COMPONENT starsift)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/systemd
        COMPONENT starsift)
