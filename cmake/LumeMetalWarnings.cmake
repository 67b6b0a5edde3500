# Our own code builds with -Wall -Wextra -Werror (and -Wconversion where practical);
# third-party headers are found as system headers and are not held to it.
function(lm_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -Wno-unused-parameter)
endfunction()
