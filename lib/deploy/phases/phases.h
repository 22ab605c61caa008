#pragma once
// Internal to libpai (not installed): the factories of the on-prem phases, one
// file each in this folder. The hived, openpai, config and endpoints phases'
// are public (openpai.h, cluster_files.h); install_phases and reset_phases
// (onprem.h) list them all in order.

#include <memory>

#include "deploy/phase.h"

namespace pai::deploy {

struct InstallSettings;

#pragma GCC visibility push(hidden)
namespace phases {

std::unique_ptr<Phase> make_os_phase();
// A lock a killed run left on the host, for the operations without the os phase.
std::unique_ptr<Phase> make_lock_phase();
std::unique_ptr<Phase> make_checks_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_mark_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_swap_phase();
std::unique_ptr<Phase> make_kernel_phase();
std::unique_ptr<Phase> make_proxy_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_packages_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_containerd_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_images_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_control_plane_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_cni_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_join_control_plane_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_join_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_labels_phase();
std::unique_ptr<Phase> make_device_plugin_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_verify_phase(const InstallSettings& s);
std::unique_ptr<Phase> make_reset_phase();

}  // namespace phases
#pragma GCC visibility pop

}  // namespace pai::deploy
