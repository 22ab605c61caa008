// Fuzz the backup archive's reader (restore reads archives from anywhere): the
// input's first byte chooses how the rest is read. 0: the bytes as they are
// (an archive file); 1: the bytes as a tar stream, gzip'd here first, so that
// the fuzzer explores tar headers and members rather than gzip's checksum;
// 2: the bytes as manifest.json; 3: the bytes as the master's `tar -cf - pki`.
// Never a crash, an exception or an allocation beyond the small limits; an
// archive that reads must hold exactly the members its manifest lists, each
// with its size and checksum, under safe names.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "deploy/backup_archive.h"
#include "util/sha256.h"

namespace {

std::string fuzz_backup_gzip(const std::string& in) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  pai::deploy::ArchiveLimits limits;
  limits.max_members = 64;
  limits.max_member_bytes = limits.max_snapshot_bytes = limits.max_database_bytes = 1 << 20;
  limits.max_manifest_bytes = 1 << 20;
  switch (data[0] % 4) {
    case 0:
    case 1: {
      std::string bytes = data[0] % 4 == 0 ? rest : fuzz_backup_gzip(rest);
      auto a = pai::deploy::read_backup_archive(bytes, limits);
      if (!a.ok()) {
        if (a.error().message.empty()) std::abort();
        return 0;
      }
      if (a->members.size() != a->manifest.members.size()) std::abort();
      for (const auto& mi : a->manifest.members) {
        auto it = a->members.find(mi.name);
        if (it == a->members.end()) std::abort();
        if (it->second.size() != mi.bytes) std::abort();
        if (pai::util::sha256_hex(it->second) != mi.sha256) std::abort();
        if (!pai::deploy::unsafe_member_name(mi.name).empty()) std::abort();
      }
      // What reads, writes and reads back the same.
      pai::deploy::BackupManifest m = a->manifest;
      std::vector<std::pair<std::string, std::string>> members;
      for (const auto& mi : a->manifest.members)
        members.emplace_back(mi.name, a->members.at(mi.name));
      auto again = pai::deploy::write_backup_archive(m, members);
      if (!again.ok()) std::abort();
      auto back = pai::deploy::read_backup_archive(*again, limits);
      if (!back.ok() || back->members != a->members) std::abort();
      return 0;
    }
    case 2: {
      auto m = pai::deploy::parse_manifest(rest);
      if (m.ok()) {
        auto back = pai::deploy::parse_manifest(pai::deploy::manifest_json(*m));
        if (!back.ok() || back->members.size() != m->members.size()) std::abort();
      }
      return 0;
    }
    default: {
      auto files = pai::deploy::read_plain_tar(rest, 64, 1 << 20);
      if (files.ok())
        for (const auto& [name, content] : *files)
          if (!pai::deploy::unsafe_member_name(name).empty() || content.size() > (1 << 20))
            std::abort();
      return 0;
    }
  }
}
