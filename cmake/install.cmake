# Installation: the ksieve executable, the filter library ksieve::filters with its headers and a CMake
# package (find_package(ksieve CONFIG)), the man page (made from the help texts at build time), bash
# completion, and the Python package ksieve where it is built (component `python`).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS ksieve_filters EXPORT ksieveTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/filters/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ksieveTargets NAMESPACE ksieve:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ksieve)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ksieveConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ksieveConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ksieve)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ksieveConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ksieveConfig.cmake ${PROJECT_BINARY_DIR}/ksieveConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ksieve)

if(KSIEVE_BUILD_PIPELINE)
    install(TARGETS ksieve RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/ksieve.1
                       COMMAND ${CMAKE_COMMAND} -DKSIEVE=$<TARGET_FILE:ksieve> -DOUT=${PROJECT_BINARY_DIR}/ksieve.1
                               -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/make_manpage.cmake
                       DEPENDS ksieve ${PROJECT_SOURCE_DIR}/cmake/make_manpage.cmake
                       COMMENT "Man page from the help texts")
    add_custom_target(ksieve_manpage ALL DEPENDS ${PROJECT_BINARY_DIR}/ksieve.1)
    install(FILES ${PROJECT_BINARY_DIR}/ksieve.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
    install(FILES ${PROJECT_SOURCE_DIR}/pipeline/app/completion/ksieve.bash
            DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ksieve)
endif()

# The Python package into KSIEVE_INSTALL_PYTHONDIR of the prefix (python/CMakeLists.txt: on Debian
# lib/python3.X/dist-packages, which Debian's python3 reads for the prefixes /usr/local and /usr; anywhere
# else PYTHONPATH=<prefix>/<that folder> imports it).
if(TARGET ksieve_python)
    install(TARGETS ksieve_python LIBRARY DESTINATION ${KSIEVE_INSTALL_PYTHONDIR}/ksieve COMPONENT python)
    install(FILES ${PROJECT_SOURCE_DIR}/python/ksieve/__init__.py ${PROJECT_SOURCE_DIR}/python/ksieve/__init__.pyi
                  ${PROJECT_SOURCE_DIR}/python/ksieve/py.typed
            DESTINATION ${KSIEVE_INSTALL_PYTHONDIR}/ksieve COMPONENT python)
endif()
