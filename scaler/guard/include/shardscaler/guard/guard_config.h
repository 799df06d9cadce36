// Who the shard guard lets through without looking further: shardscaler's own re-attaches,
// configured exempt users and groups, and the cluster's cleanup controllers. It must never exempt
// anyone by default beyond group system:masters, and never a write merely for coming from
// shardscaler's user: the operator may run as the same user (a sidecar that shares its pod's
// ServiceAccount), so shardscaler's DELETEs are judged by the rules like anyone's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/api/well_known.h"
#include "shardscaler/guard/admission_review.h"

namespace shardscaler::guard {

// The identities the garbage collector and the namespace controller run as: their service
// accounts with --use-service-account-credentials (kubeadm and most distributions), else the
// controller-manager's own user.
inline const std::vector<std::string>& defaultCleanupUsers() {
  static const std::vector<std::string> users = {
      "system:serviceaccount:kube-system:generic-garbage-collector",
      "system:serviceaccount:kube-system:namespace-controller",
      "system:kube-controller-manager",
  };
  return users;
}

// Who sent a request, as a class for the denials metric: "service_account" (a ServiceAccount
// outside kube-system: an operator, a GitOps tool), "controller" (kube-system's ServiceAccounts and
// system:kube-controller-manager), "node" (system:node:*), "system" (any other system: user),
// "user" (anyone else, a person).
std::string_view requesterClass(const UserInfo& user);

struct GuardConfig {
  // The user shardscaler's own requests arrive as (see self_identity.h), and the field manager it
  // sends with every write: only an UPDATE that carries both is shardscaler's own.
  std::string self_user;
  std::string self_field_manager = std::string(api::kFieldManager);
  std::vector<std::string> exempt_users;
  std::vector<std::string> exempt_groups = {"system:masters"};
  // Allowed to delete a guarded shard once its target is gone or being deleted, or its namespace
  // is being deleted (garbage collection and namespace clean-up must not hang on the guard).
  std::vector<std::string> cleanup_users = defaultCleanupUsers();

  // True for an exempt user or a member of an exempt group (break glass).
  bool exempt(const UserInfo& user) const;
  // True for an UPDATE by shardscaler's user with shardscaler's field manager: its own re-attach.
  // Never for a DELETE, whose options carry no field manager.
  bool ownWrite(const AdmissionRequest& request) const;
  bool cleanupUser(std::string_view username) const;
};

}  // namespace shardscaler::guard
