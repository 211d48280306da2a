# Proves the layer rule at link time: the probe that uses the simulator builds
# when it links april::sim (the control, so the probe itself is sound) and
# fails with undefined references when it links april::policies alone.
# Run as: cmake -DBUILD_DIR=... -P link_rule_check.cmake
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target april_layout_probe_control
                RESULT_VARIABLE control_rc OUTPUT_VARIABLE control_out ERROR_VARIABLE control_out)
if(NOT control_rc EQUAL 0)
  message(FATAL_ERROR "the control probe (policies + sim) does not build, so the check proves nothing:\n${control_out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target april_layout_probe_policies_only
                RESULT_VARIABLE probe_rc OUTPUT_VARIABLE probe_out ERROR_VARIABLE probe_out)
if(probe_rc EQUAL 0)
  message(FATAL_ERROR "a policy that uses the simulator linked against april::policies alone: the layer rule is broken")
endif()
if(NOT probe_out MATCHES "undefined reference")
  message(FATAL_ERROR "the probe failed, but not at link time:\n${probe_out}")
endif()
message(STATUS "policies cannot link the simulator: the probe fails with undefined references, the control builds")
