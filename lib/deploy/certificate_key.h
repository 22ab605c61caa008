#pragma once
// The certificate key of a highly available control plane: kubeadm encrypts the
// control plane's certificates with it when the first master uploads them
// (kubeadm init --upload-certs, the Secret kube-system/kubeadm-certs, deleted
// by kubeadm after 2 h), and the other masters decrypt them with it when they
// join. paictl makes it once per cluster directory, from the kernel's CSPRNG,
// and keeps it in CLUSTER_DIR/.paictl/certificate-key (mode 0600): a later run
// (a master added, a join after the upload expired) uploads again with the same
// key. It reaches a host only inside a kubeadm configuration on stdin.

#include <string>

#include "remote/secret.h"
#include "util/result.h"

namespace pai::deploy {

// The file under state_dir ("CLUSTER_DIR/.paictl").
std::string certificate_key_path(const std::string& state_dir);

// The key kept under state_dir, made (and written, 0600, never replaced) when
// there is none. A kept file that is not 64 hexadecimal characters, or that
// others may read, is an error naming it.
util::Result<remote::Secret> certificate_key(const std::string& state_dir);

// Whether `key` is what kubeadm takes: 64 hexadecimal characters (AES-256).
bool valid_certificate_key(const std::string& key);

}  // namespace pai::deploy
