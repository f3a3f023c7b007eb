"""check_function_length.py: the repository's functions over 120 lines are exactly its allowlist's (which may only
shrink), and the heuristic finds, measures and names functions as documented.
Run: python3 -m unittest -v test_function_length (from tests/scripts; CTest scripts.function_length)."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_function_length as cfl  # noqa: E402

SAMPLE = """// a comment with { braces } and a ( paren
namespace xs::demo {
namespace {
const char* kText = "not { a body";
struct Options {
  int a = 1;
  int twice() const { return 2 * a; }
};
}  // namespace

Widget::Widget(int n) : size_{n}, name_("w") {
  grow(n);
}

template <typename T>
__global__ void __launch_bounds__(128, 1) demo_kernel(const T* in,
                                                      T* out) {
  if (in) {
    out[0] = in[0];
  }
}
const auto square = [](int x) {
  return x * x;
};
bool operator==(const Options& a, const Options& b) { return a.a == b.a; }
}  // namespace xs::demo
"""


class Heuristic(unittest.TestCase):
    def test_finds_functions_with_their_lines(self):
        found = {name: (first, last) for name, first, last in cfl.functions(SAMPLE)}
        self.assertEqual(found["twice"], (7, 7))
        self.assertEqual(found["Widget::Widget"], (11, 13), "the member brace-initializer stays in the header")
        self.assertEqual(found["demo_kernel"], (15, 21), "the header's first line (template) to the closing brace")
        self.assertEqual(found["square"], (22, 24))
        self.assertEqual(found["operator=="], (25, 25))
        self.assertEqual(len(found), 5, found)

    def test_new_grown_and_stale_entries_are_problems(self):
        over = {("src/a.cpp", "f"): [130], ("src/b.cpp", "g"): [150]}
        self.assertEqual(cfl.compare(over, {("src/a.cpp", "f"): [130], ("src/b.cpp", "g"): [150]}, 120)[0], [])
        new = cfl.compare(over, {("src/a.cpp", "f"): [130]}, 120)[0]
        self.assertEqual(len(new), 1)
        self.assertIn("not in the allowlist", new[0])
        grown = cfl.compare(over, {("src/a.cpp", "f"): [129], ("src/b.cpp", "g"): [150]}, 120)[0]
        self.assertEqual(len(grown), 1)
        self.assertIn("grew to 130", grown[0])
        problems, shrunk = cfl.compare(over, {("src/a.cpp", "f"): [140], ("src/b.cpp", "g"): [150],
                                              ("src/c.cpp", "h"): [200]}, 120)
        self.assertEqual(len(problems), 2, problems)  # f shrank (lower it), h is gone (drop it)
        self.assertEqual(shrunk, over, "--update only lowers and drops")


class Repository(unittest.TestCase):
    def test_no_new_or_grown_function_over_the_limit(self):
        run = subprocess.run([sys.executable, os.path.join(HERE, "check_function_length.py")], capture_output=True,
                             text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()
