# april_target_defaults(TARGET): warnings, optional -Werror and sanitizers for one target.
# Applied per target (not globally) so that third-party code keeps its own flags.
function(april_target_defaults target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
    -Wnull-dereference -Wdouble-promotion -Wimplicit-fallthrough)
  if(APRIL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(APRIL_FUZZ)
    # Coverage for libFuzzer in every library a fuzz target links (tests/fuzz).
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  # PyTorch's pip wheels export std::filesystem symbols of their own toolchain
  # from libtorch.so; a program that loads libtorch before libstdc++ binds to
  # them and crashes (seen: std::filesystem::remove_all, torch 2.11). Naming
  # libstdc++ first among a program's libraries makes the lookup find it first.
  get_target_property(type ${target} TYPE)
  if(APRIL_WITH_TORCH AND type STREQUAL "EXECUTABLE")
    target_link_options(${target} PRIVATE "LINKER:--push-state,--no-as-needed" "-lstdc++" "LINKER:--pop-state")
  endif()
  if(APRIL_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
