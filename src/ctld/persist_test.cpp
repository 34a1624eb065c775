#include "ctld/persist.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace drover::ctld {
namespace {

// The indexes of the jobs table, by name.
std::vector<std::string> job_indexes(const std::string& path) {
  auto db = store::Db::open(path, SQLITE_OPEN_READONLY);
  EXPECT_TRUE(db.ok());
  if (!db) return {};
  auto stmt = db->prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' ORDER BY name");
  EXPECT_TRUE(stmt.ok());
  std::vector<std::string> out;
  while (stmt && stmt->step().value_or(false)) out.push_back(stmt->column_bytes(0));
  return out;
}

TEST(ControllerSchema, UpgradeDropsTheJobIndexesNoQueryUsesAndKeepsTheJobs) {
  std::string dir = (std::filesystem::temp_directory_path() / "drover-schema-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/state.db";
  store::Schema v4 = controller_schema();
  v4.migrations.resize(4);  // what controllers before migration 5 left behind
  {
    auto s = store::Store::open(path, v4);
    ASSERT_TRUE(s.ok()) << s.error().message;
    store::Put job{kJobsTable, int64_t{7}, "the job", {{"state", std::string("PENDING")}, {"user_id", int64_t{1000}},
                                                       {"array_job_id", int64_t{0}}, {"end_time", int64_t{0}},
                                                       {"partition", std::string("compute")}}};
    ASSERT_TRUE((*s)->apply(store::Batch().put(std::move(job))).ok());
  }
  EXPECT_EQ(job_indexes(path),
            (std::vector<std::string>{"jobs__array_job_id", "jobs__end_time", "jobs__state", "jobs__user_id"}));
  {
    auto s = store::Store::open(path, controller_schema());
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto rec = (*s)->get(kJobsTable, int64_t{7});
    ASSERT_TRUE(rec.ok() && rec->has_value());
    EXPECT_EQ((*rec)->payload, "the job");
  }
  // What sacct queries by (end time, array) keeps its index.
  EXPECT_EQ(job_indexes(path), (std::vector<std::string>{"jobs__array_job_id", "jobs__end_time"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace drover::ctld
