#pragma once
// check job and job validate: the flags they share and their run (the job
// protocol files checked as the server would, with --param/--name/--vc).

#include <string>
#include <vector>

#include "app.h"
#include "flags.h"

namespace paictl::jobcli {

struct CheckOptions {
  std::vector<std::string> files;
  std::string output = "text";
  std::string junit;
  std::string sarif;
  bool fail_on_warn = false;
  std::vector<std::string> params;
  std::string name;
  std::string vc;
};

void add_check_flags(Flags* cmd, CheckOptions& o, Globals& g);
int run_check(const CheckOptions& o, const Globals& g, const char* suite);

}  // namespace paictl::jobcli
