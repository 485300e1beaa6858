// Scene files: the sections every method shares. The format is documented key by key in docs/scenes.md.
#include "percussion/core/scene.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "percussion/core/error.hpp"
#include "percussion/core/json_checker.hpp"

namespace percussion {

JsonChecker Scene::root() const { return JsonChecker(document, path); }

void Scene::expect_keys(std::initializer_list<std::string_view> method_keys) const {
  std::vector<std::string_view> allowed(std::begin(kCommonSceneKeys), std::end(kCommonSceneKeys));
  allowed.insert(allowed.end(), method_keys.begin(), method_keys.end());
  root().expect_object(std::span<const std::string_view>(allowed));
}

Scene parse_scene_text(const std::string& text, const std::string& path) {
  Scene s;
  s.path = path;
  s.source = text;
  s.document = parse_json_text(text, path);
  const JsonChecker root = s.root();
  if (!root.value().is_object()) root.fail("expected an object, got " + JsonChecker::describe(root.value()));
  root.string_or("description", "");  // free text for humans; kept only as part of `source`
  s.method = root.string("method");
  if (s.method.empty()) root.fail_at("method", "must name a method");

  // Both absent: a scene without time (one event at t = 0, e.g. a rigid impact resolution); a method that steps
  // requires them (Scene::require_time_stepping).
  if (const auto time = root.optional_object("time", {"end", "step", "step_factor", "allow_above_critical"})) {
    s.time.end = time->number("end", Range::positive());
    if (const auto step = time->find("step")) s.time.step = step->as_number(Range::positive());
    s.time.step_factor = time->number_or("step_factor", s.time.step_factor, Range::open_closed(0.0, 1.0));
    s.time.allow_above_critical = time->boolean_or("allow_above_critical", s.time.allow_above_critical);
  }
  if (const auto output = root.optional_object("output", {"frame_interval"})) {
    s.output.frame_interval = output->number("frame_interval", Range::positive());
  }

  if (const auto c = root.optional_object("checkpoint", {"every_steps", "every_time", "every_minutes", "keep"})) {
    s.checkpoint.every_steps = c->integer_or("every_steps", s.checkpoint.every_steps, Range::non_negative());
    s.checkpoint.every_time = c->number_or("every_time", s.checkpoint.every_time, Range::non_negative());
    s.checkpoint.every_minutes = c->number_or("every_minutes", s.checkpoint.every_minutes, Range::non_negative());
    s.checkpoint.keep = static_cast<int>(c->integer_or("keep", s.checkpoint.keep, Range::closed(1, INT_MAX)));
  }
  if (const auto b = root.optional_object("balance", {"every_steps", "threshold"})) {
    s.balance.every_steps = b->integer_or("every_steps", s.balance.every_steps, Range::non_negative());
    s.balance.threshold = b->number_or("threshold", s.balance.threshold, Range::open_closed(1.0, 1e6));
  }
  return s;
}

void Scene::require_time_stepping() const {
  const JsonChecker r = root();
  r.object("time", {"end", "step", "step_factor", "allow_above_critical"});
  r.object("output", {"frame_interval"});
}

namespace {

// Far above any scene (bodies are generated, not listed): a device such as /dev/zero is refused, not read forever.
constexpr std::size_t kMaxSceneBytes = std::size_t{64} << 20;

}  // namespace

// A FIFO is opened without waiting for a writer, so one that nobody writes to reads as empty instead of hanging.
std::string read_scene_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": cannot read file (it is a directory)");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) throw InputError(path + ": cannot read file (it does not exist)");
    throw InputError(path + ": cannot read file (" + std::strerror(error) + ")");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[1 << 16];
  int error = 0;
  while (text.size() <= kMaxSceneBytes) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (error != 0) throw InputError(path + ": cannot read file (" + std::strerror(error) + ")");
  if (text.size() > kMaxSceneBytes)
    throw InputError(path + ": cannot read file (larger than " + std::to_string(kMaxSceneBytes >> 20) +
                     " MiB: not a scene)");
  if (text.empty()) throw InputError(path + ": cannot read file (it is empty)");
  return text;
}

Scene parse_scene_file(const std::string& path) { return parse_scene_text(read_scene_text(path), path); }

}  // namespace percussion
