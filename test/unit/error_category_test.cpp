// redlock's error category (error.hpp): its name, values from 1 (0 is success), and a message
// for every value.
#include <catch2/catch.hpp>

#include <redlock/error.hpp>

#include <set>
#include <string>

TEST_CASE("error: the category is named \"redlock\", its values start at 1, every value has a message of its own",
          "[error]")
{
    CHECK(std::string(redlock::category().name()) == "redlock");
    CHECK(static_cast<int>(redlock::error::invalid_uri) == 1);
    const redlock::error_code first = redlock::error::invalid_uri;
    CHECK(first.category() == redlock::category());
    CHECK(first);  // not success
    std::set<std::string> messages;
    const int last = static_cast<int>(redlock::error::not_replicated);
    for (int v = 1; v <= last; ++v)
    {
        const auto message = redlock::category().message(v);
        CAPTURE(v, message);
        CHECK_FALSE(message.empty());
        CHECK(messages.insert(message).second);
    }
}
