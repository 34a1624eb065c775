// The accounts, users and QOS that sacctmgr manages, kept in the state store
// (tables qos, accounts, users; payloads v1::QosRecord, v1::AccountRecord,
// v1::UserRecord). On the first start they are seeded once from qos.conf
// (and a root account with user root); from then on the store is the truth
// and qos.conf is no longer read for QOS.
//
// A QOS is kept as its settings in qos.conf's spelling and read through
// qos.conf's own key table, so sacctmgr's QOS keys, their checks and their
// error messages are those of the config parser.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "config/model.hpp"
#include "core/cluster.hpp"
#include "core/fairshare.hpp"
#include "drover/v1/accounting.pb.h"
#include "store/mutation.hpp"

namespace drover::ctld {

inline constexpr const char* kQosTable = "qos";
inline constexpr const char* kAccountsTable = "accounts";
inline constexpr const char* kUsersTable = "users";
inline constexpr const char* kAccountingSeededMeta = "accounting_seeded";

// What one sacctmgr change did: the lines sacctmgr prints, and whether it
// touched nothing (Slurm's " Nothing new added.", " Nothing modified",
// " Nothing deleted", after which sacctmgr exits 1).
struct AssocChange {
  std::vector<std::string> lines;
  bool unchanged = false;
  std::string denied;  // a dry run's: why the caller may not commit it ("" when they may)
};

// The user's association with `account`, or nullptr when the user has none.
const v1::UserAssoc* user_assoc(const v1::UserRecord& u, const std::string& account);

class AccountingDb {
 public:
  // The first start's content: qos.conf's QOS, account root, user root.
  static AccountingDb seed(const config::ClusterConfig& cfg);
  // From the store's payloads.
  static Result<AccountingDb> load(const std::vector<std::string>& qos, const std::vector<std::string>& accounts,
                                   const std::vector<std::string>& users);

  // Every record as store puts (the seed's first commit).
  void put_all(store::Batch& b) const;
  // Checks and applies one sacctmgr change, adding its store mutations to
  // `b`; with dry_run only checks. The lines describe the change as
  // sacctmgr prints it. Errors name the entity, key and value.
  // Names that do not exist (modify, delete) or already do (add) are passed
  // over, as Slurm's sacctmgr does.
  Result<AssocChange> apply(const v1::ModifyAssociationsRequest& req, store::Batch& b);
  // The cluster the association lines name ("C = anchor").
  void set_cluster(std::string name) { cluster_ = std::move(name); }

  std::vector<core::QosSpec> qos_specs() const;
  // Every account and user association with the limits sacctmgr set on
  // them, parents by index; empty when none has a limit.
  std::vector<core::AssocLimitSpec> assoc_limits() const;
  // Fair Tree's tree: accounts (with parents) and user associations, with
  // shares and the usage given per (account, user).
  std::vector<core::Association> associations(
      const std::map<std::pair<std::string, std::string>, double>& usage) const;
  v1::GetAssociationsReply snapshot() const;
  const v1::UserRecord* user(const std::string& name) const;
  bool has_account(const std::string& name) const { return accounts_.count(name) > 0; }

 private:
  Result<AssocChange> apply_qos(const v1::ModifyAssociationsRequest& req, store::Batch& b);
  Result<AssocChange> apply_account(const v1::ModifyAssociationsRequest& req, store::Batch& b);
  Result<AssocChange> apply_user(const v1::ModifyAssociationsRequest& req, store::Batch& b);
  void inherit_qos_below(const std::string& account, store::Batch& b);
  std::vector<std::string> all_qos_names() const;
  // A QOS list after `QOS=`, `QOS+=` or `QOS-=` (op '=', '+', '-') applied to `now`;
  // an unknown name is Slurm's "You gave a bad qos" error.
  Result<std::vector<std::string>> edit_qos_list(const std::vector<std::string>& now, char op,
                                                 const std::string& value) const;

  std::map<std::string, v1::QosRecord> qos_;
  std::map<std::string, v1::AccountRecord> accounts_;
  std::map<std::string, v1::UserRecord> users_;
  int64_t next_qos_id_ = 1;
  std::string cluster_;
};

// A QOS's settings read as a qos.conf line; errors are the parser's.
Result<config::QosConfig> qos_config(const v1::QosRecord& q);

}  // namespace drover::ctld
