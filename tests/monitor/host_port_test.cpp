// --listen / --push-listen / --to addresses: parsed by the project, refused
// whole when they are not exactly one HOST:PORT or [IPV6]:PORT.
#include "monitor/host_port.h"

#include <gtest/gtest.h>

namespace stepscope::monitor {
namespace {

TEST(HostPort, AcceptsOneEndpoint) {
  std::string error;
  auto v4 = parse_host_port("127.0.0.1:9401", error);
  ASSERT_TRUE(v4) << error;
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9401);
  EXPECT_FALSE(v4->ipv6);
  auto v6 = parse_host_port("[::1]:9400", error);
  ASSERT_TRUE(v6) << error;
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9400);
  EXPECT_TRUE(v6->ipv6);
  EXPECT_EQ(to_string(*v6), "[::1]:9400");
  auto name = parse_host_port("localhost:0", error);
  ASSERT_TRUE(name) << error;
  EXPECT_EQ(name->port, 0);
  EXPECT_TRUE(parse_host_port("0.0.0.0:65535", error));
}

TEST(HostPort, RefusesListsEmptyHostsBadPortsAndStrayCharacters) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"127.0.0.1:1,0.0.0.0:2", "one HOST:PORT only"},  // civetweb would open both, one of them public
      {":9401", "empty host"},
      {"[]:9401", "empty host"},
      {"127.0.0.1:", "port must be a number"},
      {"127.0.0.1:99999", "port must be a number"},
      {"127.0.0.1:70000", "port must be a number"},
      {"127.0.0.1:80x", "port must be a number"},
      {"127.0.0.1:+80", "port must be a number"},
      {"127.0.0.1:-1", "port must be a number"},
      {"127.0.0.1: 80", "port must be a number"},
      {" 127.0.0.1:80", "not a host name"},
      {"127.0.0.1/8:80", "not a host name"},
      {"127.0.0.1", "expected HOST:PORT"},
      {"::1:9400", "in brackets"},
      {"[::1]9400", "expected :PORT"},
      {"[::1:9400", "without ']'"},
      {"[zz]:9400", "not an IPv6 address"},
      {"", "expected HOST:PORT"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(parse_host_port(c.text, error)) << c.text;
    EXPECT_NE(error.find(c.says), std::string::npos) << c.text << " -> " << error;
  }
}

}  // namespace
}  // namespace stepscope::monitor
