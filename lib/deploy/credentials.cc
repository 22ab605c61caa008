#include "deploy/credentials.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "deploy/prepare.h"
#include "util/fs.h"
#include "yaml/yaml.h"

namespace pai::deploy {

namespace {

const char* const kCredentialsPasswordKey = "default-pai-admin-password";

std::vector<std::string> credentials_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(text.substr(start));
      break;
    }
    out.push_back(text.substr(start, nl + 1 - start));
    start = nl + 1;
  }
  return out;
}

std::string credentials_join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l;
  return out;
}

// The value written: double-quoted (a password of digits would read as a number).
std::string credentials_value(const remote::Secret& password) {
  return "\"" + password.reveal() + "\"";
}

// Whether the rest of a line (after a key's colon) holds no value: blanks and a comment.
bool credentials_blank_after(const std::string& line, size_t from) {
  for (size_t i = from; i < line.size(); ++i) {
    if (line[i] == '#') return true;
    if (line[i] != ' ' && line[i] != '\t' && line[i] != '\n' && line[i] != '\r') return false;
  }
  return true;
}

}  // namespace

ClusterAccess cluster_access(const OpenPaiSettings& o, const std::string& master) {
  ClusterAccess a;
  a.name = o.cluster_id;
  a.user = o.admin_user;
  a.services_file = o.services_file;
  a.gateway = "http://" + master + (o.pylon_port == 80 ? "" : ":" + std::to_string(o.pylon_port));
  // HiveD runs on the master's network (templates/install/hivedscheduler.yaml),
  // its web server on webServerAddress's port.
  if (o.hived_enabled && !o.hived_config.empty())
    a.hived = "http://" + master + ":" + std::to_string(o.hived_port);
  return a;
}

ClusterAccess cluster_access(const PreparedCluster& p) {
  const HostSpec* m = p.master();
  return cluster_access(p.settings.openpai, m ? m->address : std::string());
}

remote::Secret make_admin_password() {
  static const char* alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  const size_t n = 56;  // the alphabet without 0 O 1 l I
  std::string raw(20, '\0');
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  size_t got = 0;
  while (fd >= 0 && got < raw.size()) {
    ssize_t r = ::read(fd, raw.data() + got, raw.size() - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  if (fd >= 0) ::close(fd);
  std::string out;
  for (char c : raw) out += alphabet[static_cast<unsigned char>(c) % n];
  std::fill(raw.begin(), raw.end(), '\0');
  return remote::Secret(std::move(out));
}

util::Result<std::string> with_admin_password(const std::string& text, const std::string& file,
                                              const remote::Secret& password) {
  auto where = [&](yaml::Mark m) {
    return file + ":" + std::to_string(m.line) + ":" + std::to_string(m.column) + ": ";
  };
  auto stream = yaml::load(text);
  if (stream.error)
    return util::Error{
        where(stream.error->mark) + stream.error->message, {}, util::Error::Kind::Input};
  std::vector<std::string> lines = credentials_lines(text);
  std::string value = credentials_value(password);
  auto append_section = [&]() -> std::string {
    std::string out = text;
    if (!out.empty() && out.back() != '\n') out += "\n";
    out += "rest-server:\n  " + std::string(kCredentialsPasswordKey) + ": " + value + "\n";
    return out;
  };
  const yaml::Node* root = stream.documents.empty() ? nullptr : stream.documents[0];
  if (!root || root->is_null()) return append_section();
  if (!root->is_mapping())
    return util::Error{where(root->mark()) + "services-configuration.yaml is not a mapping",
                       {},
                       util::Error::Kind::Input};
  const yaml::Pair* rest = root->find("rest-server");
  if (!rest) return append_section();
  const yaml::Mark key_mark = rest->key->mark();
  const yaml::Node* rs = rest->value;
  if (rs->is_null()) {
    // `rest-server:` with nothing under it: the key goes on the next line.
    size_t li = key_mark.line - 1;
    size_t colon = li < lines.size() ? lines[li].find(':', key_mark.column - 1) : std::string::npos;
    if (colon == std::string::npos || !credentials_blank_after(lines[li], colon + 1))
      return util::Error{where(rs->mark()) + "rest-server is not a mapping",
                         "set rest-server." + std::string(kCredentialsPasswordKey) + " by hand",
                         util::Error::Kind::Input};
    if (lines[li].empty() || lines[li].back() != '\n') lines[li] += "\n";
    lines.insert(
        lines.begin() + static_cast<long>(li) + 1,
        std::string(key_mark.column - 1 + 2, ' ') + kCredentialsPasswordKey + ": " + value + "\n");
    return credentials_join(lines);
  }
  if (!rs->is_mapping() || rs->pairs().empty() || rs->pairs()[0].key->mark().line == key_mark.line)
    return util::Error{where(rs->mark()) + "rest-server is not a block mapping",
                       "set rest-server." + std::string(kCredentialsPasswordKey) + " by hand",
                       util::Error::Kind::Input};
  if (const yaml::Pair* pw = rs->find(kCredentialsPasswordKey)) {
    // The key is there with an empty value: the value goes after its colon,
    // a comment after it kept.
    const yaml::Node* v = pw->value;
    bool empty_scalar = v->is_null() || (v->is_scalar() && v->scalar().empty());
    size_t li = pw->key->mark().line - 1;
    if (!empty_scalar || li >= lines.size() ||
        (!v->is_null() && v->mark().line != pw->key->mark().line))
      return util::Error{
          where(v->mark()) + "rest-server." + kCredentialsPasswordKey + " is already set",
          {},
          util::Error::Kind::Input};
    std::string& line = lines[li];
    size_t colon =
        line.find(':', pw->key->mark().column - 1 + std::string(kCredentialsPasswordKey).size());
    if (colon == std::string::npos)
      return util::Error{
          where(pw->key->mark()) + "no ':' after the key", {}, util::Error::Kind::Input};
    size_t hash = line.find('#', colon + 1);
    std::string comment = hash == std::string::npos ? std::string() : "  " + line.substr(hash);
    while (!comment.empty() && (comment.back() == '\n' || comment.back() == '\r'))
      comment.pop_back();
    line = line.substr(0, colon + 1) + " " + value + comment + "\n";
    return credentials_join(lines);
  }
  // Under rest-server, at the indentation of its first key.
  const yaml::Mark first = rs->pairs()[0].key->mark();
  size_t at = first.line - 1;
  if (at > lines.size()) at = lines.size();
  lines.insert(lines.begin() + static_cast<long>(at),
               std::string(first.column - 1, ' ') + kCredentialsPasswordKey + ": " + value + "\n");
  return credentials_join(lines);
}

util::Result<void> write_admin_password(const std::string& file, const remote::Secret& password) {
  auto text = util::read_file(file);
  if (!text.ok()) return util::Error{file + ": " + text.error().message, {}};
  auto edited = with_admin_password(*text, file, password);
  std::fill(text->begin(), text->end(), '\0');
  if (!edited.ok()) return edited.error();
  auto w = util::write_file_atomic(file, *edited, 0600);
  std::fill(edited->begin(), edited->end(), '\0');
  return w;
}

util::Result<remote::Secret> read_admin_password(const std::string& file) {
  auto s = load_openpai_settings(file);
  if (!s.ok()) return s.error();
  return s->admin_password;
}

cluster::AddResult register_cluster(const RegisterRequest& r, http::Client& http,
                                    const cluster::Registry& registry, diag::List& diags) {
  cluster::AddRequest a;
  a.name = r.name;
  a.uri = r.access.gateway;
  a.user = r.access.user;
  a.credential = cluster::Credential::Password;
  a.secret = r.password.reveal();
  a.hived = r.access.hived;
  a.force = r.force;
  auto prepared = cluster::prepare_add(std::move(a), &registry);
  if (!prepared.ok()) return prepared.error();
  auto out = cluster::add_cluster(prepared->request, http, registry, diags);
  std::fill(prepared->request.secret.begin(), prepared->request.secret.end(), '\0');
  return out;
}

std::string cluster_add_command(const std::string& name, const ClusterAccess& a) {
  return "paictl cluster add " + name + " --uri " + a.gateway + " --user " + a.user +
         (a.hived.empty() ? "" : " --hived " + a.hived) + " --password-stdin";
}

}  // namespace pai::deploy
