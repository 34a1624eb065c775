// Job mail subjects and variables, as Slurm 22.05's slurmctld sent them on
// the anchor cluster (MailProg set to a script that recorded its arguments).
#include "ctld/mail.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace drover::ctld {
namespace {

v1::JobRecord job(int64_t id, const std::string& name, const std::string& mail_type) {
  v1::JobRecord r;
  r.set_job_id(id);
  r.set_user("alice");
  r.set_uid(2001);
  r.set_gid(2001);
  r.set_group("alice");
  r.set_account("research");
  r.set_partition("compute");
  r.mutable_desc()->set_name(name);
  r.mutable_desc()->set_mail_type(mail_type);
  r.mutable_desc()->set_work_dir("/tmp");
  r.set_submit_time(1000);
  r.set_start_time(1001);
  r.set_state(v1::RUNNING);
  r.mutable_alloc()->add_nodes()->set_node("cpu01");
  return r;
}

// The first mail's subject, or "(no mail)".
std::string subject(const std::vector<Mail>& m) { return m.empty() ? "(no mail)" : m[0].subject; }

bool has(const Mail& m, const std::string& kv) { return std::find(m.env.begin(), m.env.end(), kv) != m.env.end(); }

TEST(JobMail, SubjectsAsSlurmsForEachEvent) {
  const MailContext ctx{"", "anchor"};
  v1::JobRecord r = job(2014, "mj", "BEGIN,END,FAIL,REQUEUE");
  auto began = job_mail(r, kMailBegin, 1001, ctx);
  ASSERT_EQ(began.size(), 1u);
  EXPECT_EQ(began[0].recipient, "alice");
  EXPECT_EQ(began[0].subject, "Slurm Job_id=2014 Name=mj Began, Queued time 00:00:01");
  EXPECT_TRUE(has(began[0], "SLURM_JOB_MAIL_TYPE=Began"));
  EXPECT_TRUE(has(began[0], "SLURM_JOB_QUEUED_TIME=00:00:01"));
  EXPECT_TRUE(has(began[0], "SLURM_JOB_NODELIST=cpu01"));
  EXPECT_TRUE(has(began[0], "SLURM_CLUSTER_NAME=anchor"));
  EXPECT_EQ(subject(job_mail(r, kMailRequeue, 1003, ctx)), "Slurm Job_id=2014 Name=mj Requeued, Run time 00:00:02");

  r.set_state(v1::COMPLETED);
  r.set_end_time(1004);
  auto ended = job_mail(r, kMailEnd, 1004, ctx);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].subject, "Slurm Job_id=2014 Name=mj Ended, Run time 00:00:03, COMPLETED, ExitCode 0");
  EXPECT_TRUE(has(ended[0], "SLURM_JOB_STATE=COMPLETED"));
  EXPECT_TRUE(has(ended[0], "SLURM_JOB_RUN_TIME=00:00:03"));

  // A failed job with FAIL set mails "Failed" (END too), to --mail-user.
  v1::JobRecord f = job(2015, "fj", "END,FAIL");
  f.mutable_desc()->set_mail_user("bob@example.org");
  f.set_state(v1::FAILED);
  f.set_exit_code(3);
  f.set_end_time(1002);
  auto failed = job_mail(f, kMailEnd, 1002, ctx);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].recipient, "bob@example.org");
  EXPECT_EQ(failed[0].subject, "Slurm Job_id=2015 Name=fj Failed, Run time 00:00:01, FAILED, ExitCode 3");
  EXPECT_TRUE(has(failed[0], "SLURM_JOB_EXIT_CODE2=3:0"));

  // A job that failed mails only for FAIL (a TIMEOUT with END alone: nothing, as Slurm's).
  v1::JobRecord timeout = job(2026, "te", "END");
  timeout.set_state(v1::TIMEOUT);
  EXPECT_TRUE(job_mail(timeout, kMailEnd, 1085, ctx).empty());
  timeout.mutable_desc()->set_mail_type("FAIL,TIME_LIMIT");
  EXPECT_EQ(subject(job_mail(timeout, kMailEnd, 1085, ctx)),
            "Slurm Job_id=2026 Name=te Failed, Run time 00:01:24, TIMEOUT, ExitCode 0");
  EXPECT_EQ(subject(job_mail(timeout, kMailTimeLimit, 1085, ctx)),
            "Slurm Job_id=2026 Name=te Reached time limit, Run time 00:01:24");
  // What --mail-type does not ask for is not sent; MailDomain completes a bare user.
  EXPECT_TRUE(job_mail(job(1, "x", "END"), kMailBegin, 1001, ctx).empty());
  EXPECT_TRUE(job_mail(job(1, "x", "FAIL"), kMailEnd, 1001, ctx).empty()) << "RUNNING: neither failed nor END";
  auto domain = job_mail(job(1, "x", "BEGIN"), kMailBegin, 1001, MailContext{"example.org", "c"});
  ASSERT_EQ(domain.size(), 1u);
  EXPECT_EQ(domain[0].recipient, "alice@example.org");
  v1::JobRecord t = job(2024, "tl", "TIME_LIMIT_50");
  EXPECT_EQ(subject(job_mail(t, kMailTimeLimit50, 1055, ctx)),
            "Slurm Job_id=2024 Name=tl Reached 50% of time limit, Run time 00:00:54");
  EXPECT_TRUE(job_mail(t, kMailTimeLimit80, 1055, ctx).empty());
  // ALL as sbatch reads it (INVALID_DEPEND and STAGE_OUT mail nothing yet).
  EXPECT_EQ(mail_bits("ALL"), kMailBegin | kMailEnd | kMailFail | kMailRequeue | kMailInvalidDepend | kMailStageOut);
  EXPECT_EQ(mail_bits("BEGIN,nonsense"), kMailNone) << "a text that does not parse asks for nothing";
}

TEST(JobMail, AnArrayMailsOneSummary) {
  const MailContext ctx{"", "anchor"};
  std::vector<v1::JobRecord> elems;
  for (int t = 1; t <= 3; ++t) {
    v1::JobRecord e = job(2019 + t, "ab", "BEGIN,END");
    e.set_array_job_id(2020);
    e.set_array_task_id(t);
    e.set_state(v1::FAILED);
    e.set_exit_code(t);
    elems.push_back(e);
  }
  std::vector<const v1::JobRecord*> ptrs;
  for (const auto& e : elems) ptrs.push_back(&e);
  EXPECT_EQ(subject(array_summary_mail(ptrs, kMailBegin, ctx)), "Slurm Array Summary Job_id=2020_* (2020) Name=ab Began");
  EXPECT_EQ(subject(array_summary_mail(ptrs, kMailEnd, ctx)),
            "Slurm Array Summary Job_id=2020_* (2020) Name=ab Ended, FAILED, ExitCode [1-3]");
  elems[0].set_state(v1::COMPLETED);
  elems[0].set_exit_code(0);
  EXPECT_EQ(subject(array_summary_mail(ptrs, kMailEnd, ctx)),
            "Slurm Array Summary Job_id=2020_* (2020) Name=ab Ended, Mixed, ExitCode [0-3]");
  // ARRAY_TASKS: each element mails for itself (a failed one only for FAIL).
  v1::JobRecord e = elems[0];
  e.mutable_desc()->set_mail_type("END,ARRAY_TASKS");
  auto mails = job_mail(e, kMailEnd, 1003, ctx);
  ASSERT_EQ(mails.size(), 1u);
  EXPECT_EQ(mails[0].subject,
            "Slurm Array Task Job_id=2020_1 (2020) Name=ab Ended, Run time 00:00:02, COMPLETED, ExitCode 0");
  v1::JobRecord failed = elems[1];
  failed.mutable_desc()->set_mail_type("END,ARRAY_TASKS");
  EXPECT_TRUE(job_mail(failed, kMailEnd, 1003, ctx).empty());
}

}  // namespace
}  // namespace drover::ctld
