# Read by CMake after its Darwin platform files (CMAKE_USER_MAKE_RULES_OVERRIDE_C, set by
# DarwinHost.cmake). Platform/Darwin.cmake turns rpaths on (install names @rpath/..., -Wl,-rpath,
# as on every Mac since 10.5) only when `sw_vers` says macOS 10.5 or later, and a Linux machine has
# no sw_vers: without this the library's install name would be its absolute build path.
set(CMAKE_SHARED_LIBRARY_RUNTIME_C_FLAG "-Wl,-rpath,")
