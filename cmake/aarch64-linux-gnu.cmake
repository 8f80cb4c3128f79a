# Cross build for aarch64 Linux (AWS Graviton; Apple Silicon through Docker) on a Debian x86-64
# host: Debian's g++-aarch64-linux-gnu and the :arm64 -dev packages of multiarch
# (scripts/cross_aarch64.sh installs both, configures build-aarch64/ with this file and runs the
# tests under qemu-aarch64; docs/reliability.md, "On aarch64").
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(NORMLAB_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${NORMLAB_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${NORMLAB_CROSS_TRIPLE}-g++)

# Libraries and headers of the target only (/usr/lib/aarch64-linux-gnu through multiarch,
# /usr/aarch64-linux-gnu for the cross compiler's own libstdc++ and libgomp); programs of the
# host. Header-only packages (CLI11, nlohmann-json: Architecture all) live under /usr/share and
# /usr/include, which the "/" root keeps in reach.
set(CMAKE_FIND_ROOT_PATH /usr/${NORMLAB_CROSS_TRIPLE} /)
set(CMAKE_LIBRARY_ARCHITECTURE ${NORMLAB_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config (tomlplusplus, openblas) reads the target's .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR}
    /usr/lib/${NORMLAB_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig:/usr/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# CTest and gtest_discover_tests run the target's programs through qemu-aarch64. -L / : the
# loader and every library from multiarch (/usr/lib/aarch64-linux-gnu: libc6:arm64, the same
# glibc as the host's), as on a Debian 12 arm64 machine. -L /usr/aarch64-linux-gnu runs too, but
# mixes the cross toolchain's older loader (2.36-8cross1) with multiarch's libc (2.36-9+deb12u*).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
