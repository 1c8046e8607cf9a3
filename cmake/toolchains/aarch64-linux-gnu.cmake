# CMake toolchain file: cross-compile ksieve for 64-bit ARM Linux with Debian's aarch64 cross toolchain
# (g++-aarch64-linux-gnu) against the arm64 multiarch libraries (libhts-dev:arm64, zlib1g-dev:arm64, ...,
# after `dpkg --add-architecture arm64`), and run what it builds (tests, test discovery) under qemu-user.
# Usage: cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#              -DKSIEVE_GTEST_SOURCE_DIR=/usr/src/googletest -DKSIEVE_INSTALL=OFF -DKSIEVE_BUILD_BENCH=OFF
# (GoogleTest has no arm64 package of static libraries that the cross linker can use: it is built from
# its sources with the project; the man page needs the executable at build time: KSIEVE_INSTALL=OFF.)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian multiarch: the arm64 libraries are in /usr/lib/aarch64-linux-gnu, the headers are shared.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# Executables run through qemu-user, with the cross toolchain's root for the ARM loader. Its C library and
# libstdc++ come first (LD_LIBRARY_PATH): otherwise the loader of the cross root would take libc.so.6 of
# the arm64 multiarch packages, another build of glibc, which the loader's private structures do not fit
# (pthread_create then never returns). The other libraries (htslib, ...) come from the multiarch folders.
set(KSIEVE_QEMU_AARCH64 qemu-aarch64 CACHE STRING "qemu-user for aarch64")
set(CMAKE_CROSSCOMPILING_EMULATOR ${KSIEVE_QEMU_AARCH64} -L /usr/aarch64-linux-gnu
    -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
