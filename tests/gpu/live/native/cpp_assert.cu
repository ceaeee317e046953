// A C++ tool whose assertion fails; the wrapper shell reports the abort.
#include <cassert>
#include <cstdio>
#include <cstdlib>

static int shard_count(const char* spec) { return std::atoi(spec); }

int main(int argc, char** argv) {
  const int shards = shard_count(argc > 1 ? argv[1] : "0");
  std::printf("partitioning the index into %d shards\n", shards);
  std::fflush(stdout);
  assert(shards > 0 && "shard count must be positive");
  return 0;
}
