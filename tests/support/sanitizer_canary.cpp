// Deliberate errors for the sanitizer build's self-test (tests/support/sanitizer_findings_fail.sh): each mode must
// end the program with a sanitizer report and a non-zero exit. The operand comes from the command line so the
// compiler cannot see the error coming and fold it away.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: sanitizer_canary overflow|heap N\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  if (std::strcmp(argv[1], "overflow") == 0) {  // UndefinedBehaviorSanitizer: signed overflow for any n > 0
    int sum = INT_MAX;
    sum += n;
    std::printf("%d\n", sum);
  } else if (std::strcmp(argv[1], "heap") == 0) {  // AddressSanitizer: reads n elements past the end
    std::vector<int> v(4, 1);
    std::printf("%d\n", v.data()[v.size() + n]);
  } else {
    std::fprintf(stderr, "sanitizer_canary: unknown mode %s\n", argv[1]);
    return 2;
  }
  return 0;
}
