# CMake toolchain file: build ksieve with clang and LLVM's C++ standard library (libc++) instead of GCC's
# libstdc++, the library that macOS builds use, so that code relying on libstdc++ alone fails here.
# Usage: cmake -S . -B build-clang -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/clang-libcxx.cmake
#              -DKSIEVE_GTEST_SOURCE_DIR=/usr/src/googletest -DKSIEVE_BUILD_BENCH=OFF
# (Debian: clang, libc++-dev, libc++abi-dev, libomp-dev. C++ libraries installed as packages are built
# against libstdc++ and cannot be linked here: GoogleTest is built from its sources with the project, and
# the benchmarks, whose Google Benchmark has no source package, are left out. C libraries such as htslib
# link as usual.) KSIEVE_CLANG_SUFFIX picks a versioned compiler, e.g. -DKSIEVE_CLANG_SUFFIX=-14.
set(KSIEVE_CLANG_SUFFIX "" CACHE STRING "suffix of the clang executables (e.g. -14)")
set(CMAKE_C_COMPILER clang${KSIEVE_CLANG_SUFFIX})
set(CMAKE_CXX_COMPILER clang++${KSIEVE_CLANG_SUFFIX})
set(CMAKE_CXX_FLAGS_INIT "-stdlib=libc++")
# A CMAKE_CXX_FLAGS given on the command line replaces the _INIT value: keep -stdlib=libc++ in it.
if(DEFINED CACHE{CMAKE_CXX_FLAGS} AND NOT "$CACHE{CMAKE_CXX_FLAGS}" MATCHES "-stdlib=libc\\+\\+")
    set_property(CACHE CMAKE_CXX_FLAGS PROPERTY VALUE "-stdlib=libc++ $CACHE{CMAKE_CXX_FLAGS}")
endif()
set(CMAKE_EXE_LINKER_FLAGS_INIT "-stdlib=libc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-stdlib=libc++")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-stdlib=libc++")
