# Our own code -- library, tool, shim, probe, simulator and tests -- builds with -Wall -Wextra
# -Wconversion -Werror; third-party headers are found as system headers and are not held to it.
# (libssh2's SFTP path macros pass strlen() as an unsigned int: host/lib/ssh/sftp.c calls the _ex
# forms with the length converted in one place.)
function(lm_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wconversion -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -Wno-unused-parameter)
endfunction()
