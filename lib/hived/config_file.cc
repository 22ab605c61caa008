#include "hived/config_file.h"

#include "config/cluster_files.h"
#include "util/fs.h"
#include "yaml/yaml.h"

namespace pai::hived {

util::Result<std::shared_ptr<config::HivedModel>, ConfigLoadError> load_hived_model(
    const std::string& path) {
  config::CheckOutcome out = config::check_paths({path});
  if (out.diagnostics.has_errors() || out.input_error) {
    ConfigLoadError e;
    e.path = path;
    e.files = out.files.size();
    for (const auto& d : out.diagnostics.items())
      if (d.severity == diag::Severity::Error) e.errors.push_back(d);
    return e;
  }
  for (const auto& c : out.clusters)
    if (c.model) return c.model;
  ConfigLoadError e;
  e.kind = ConfigLoadError::Kind::NoHivedConfig;
  e.path = path;
  e.files = out.files.size();
  return e;
}

util::Result<std::string> hived_config_text(const std::string& path) {
  std::vector<std::string> files;
  if (util::is_directory(path)) {
    // Anything at the name (a FIFO, a broken link) is read, and refused there: never "absent".
    for (const char* n : {"/hivedscheduler.yaml", "/services-configuration.yaml"})
      if (util::path_entry_exists(path + n)) files.push_back(path + n);
  } else {
    files.push_back(path);
  }
  for (const auto& f : files) {
    auto r = util::read_file(f);
    if (!r.ok()) return util::Error{f + ": " + r.error().message, "", util::Error::Kind::Input};
    auto kind = config::detect_kind(f, *r);
    if (kind == config::FileKind::Hived) return *r;
    if (kind == config::FileKind::ServicesConfig) {
      auto s = yaml::load(*r);
      if (!s.documents.empty() && s.documents[0])
        if (const auto* hs = s.documents[0]->get("hivedscheduler"))
          if (const auto* c = hs->get("config"); c && c->is_scalar()) return c->scalar();
    }
  }
  return util::Error{"no HiveD config in " + path, "", util::Error::Kind::Input};
}

}  // namespace pai::hived
