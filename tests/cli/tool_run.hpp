// tests/cli: runs a built xstage executable in a fresh scratch folder and captures exit code, stdout and
// stderr, and lists what the folder holds afterwards, so a test can assert that a refused command created
// or changed no file.
#pragma once
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace xs_cli_test {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

struct ToolRun {
  int rc = -1;
  std::string out, err;
};

// A scratch folder per test; `files()` maps each regular file under it (recursively) to its content.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (std::filesystem::temp_directory_path() / "xs_cli_XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::map<std::string, std::string> files() const {
    std::map<std::string, std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_))
      if (e.is_regular_file()) out[e.path().string()] = slurp(e.path().string());
    return out;
  }
  // Runs `tool args` with the scratch folder as working directory; output goes to files outside it.
  ToolRun run(const std::string& tool, const std::string& args) const {
    const std::string capture = dir_ + ".capture";
    const std::string cmd = "cd '" + dir_ + "' && " + std::string(XS_BIN_DIR) + "/" + tool + " " + args + " >" +
                            capture + ".out 2>" + capture + ".err";
    const int status = std::system(cmd.c_str());
    ToolRun r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(capture + ".out");
    r.err = slurp(capture + ".err");
    std::filesystem::remove(capture + ".out");
    std::filesystem::remove(capture + ".err");
    return r;
  }

 private:
  std::string dir_;
};

inline bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The command exits `rc`, says every needle on stderr after "<tool>: error:", and leaves the scratch
// folder exactly as it was (no file created, none changed).
inline void expect_refused(const Scratch& s, const std::string& tool, const std::string& args, int rc,
                           std::initializer_list<const char*> needles) {
  const auto before = s.files();
  const ToolRun r = s.run(tool, args);
  EXPECT_EQ(r.rc, rc) << tool << " " << args << "\n" << r.err;
  EXPECT_TRUE(contains(r.err, tool + ": error:")) << r.err;
  for (const char* needle : needles) EXPECT_TRUE(contains(r.err, needle)) << args << "\n---\n" << r.err;
  EXPECT_EQ(s.files(), before) << args << ": a refused command created or changed a file";
}

}  // namespace xs_cli_test
