// The one Catch2 main of the test executables.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>

// Every test executable's ctest names come from its test cases' names (catch_discover_tests),
// and a ';' in one is CMake's list separator: ctest then runs two names that match no test,
// and both fail, though the test passes when the executable is run by itself.
TEST_CASE("catch: every test case's name is one ctest name (no CMake list separator in it)",
          "[catch]")
{
    for (const auto& t : Catch::getRegistryHub().getTestCaseRegistry().getAllTests())
    {
        INFO(t.name);
        CHECK(t.name.find(';') == std::string::npos);
    }
}
