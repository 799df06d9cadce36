// shardscaler: entry point. Sub-commands are dispatched from here.
#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "version") {
    std::printf("shardscaler 0.1.0\n");
    return 0;
  }
  std::fprintf(stderr, "usage: shardscaler version\n");
  return 2;
}
