// sreport's reports over a day shaped like the anchor cluster's 2026-12-04 (its
// TRES registered at 21:00:25, a node drained for a second, two users'
// jobs, a large job waiting), in Slurm 22.05's layout as its sreport printed
// it on the anchor cluster.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/sreport.hpp"

namespace drover::cli {
namespace {

constexpr UnixTime kDay = 1796342400;  // 2026-12-04T00:00:00Z
constexpr UnixTime kNow = 1796475600;  // 2026-12-05T13:00:00Z

UnixTime at(int h, int m, int s = 0) { return kDay + h * 3600 + m * 60 + s; }

ReportData anchor_day() {
  ReportData d;
  d.cluster = "anchor";
  d.now = kNow;
  d.events.push_back(ReportEvent{"", at(21, 0, 25), 0,
                                 {{"cpu", 832}, {"mem", 7024000}, {"node", 9}, {"billing", 832},
                                  {"gres/gpu", 32}, {"gres/gpu:a100", 16}, {"gres/gpu:h100", 16}},
                                 "", 0, "", ""});
  d.events.push_back(
      ReportEvent{"cpu04", at(21, 1, 29), at(21, 1, 30), {{"cpu", 64}, {"mem", 256000}, {"node", 1}}, "", 0, "", ""});
  // alice: 4 CPUs for 20 minutes; root: 1 CPU and an H100 for 30 minutes.
  d.jobs.push_back(ReportJob{"research", "alice", at(21, 10), at(21, 10), at(21, 30), 4,
                             {{"cpu", 4}, {"mem", 4000}, {"node", 1}, {"billing", 4}}, ""});
  d.jobs.push_back(ReportJob{"research", "root", at(22, 0), at(22, 0), at(22, 30), 1,
                             {{"cpu", 1}, {"mem", 1000}, {"node", 1}, {"gres/gpu", 1}, {"gres/gpu:h100", 1}}, ""});
  // Eligible from 23:00 and never started: 2,000 CPUs wanted, more than the cluster has.
  d.jobs.push_back(ReportJob{"research", "alice", at(23, 0), 0, 0, 2000, {}, ""});
  // Held (never eligible) and never started: no part of any figure.
  d.jobs.push_back(ReportJob{"research", "alice", 0, 0, 0, 64, {}, ""});
  d.accounts = {{"root", "", {"root"}}, {"research", "root", {"alice", "root"}}};
  d.full_names = {{"root", "root"}, {"alice", ""}};
  return d;
}

CommandOutput report(const std::vector<std::string>& args, const ReportData& d = anchor_day(),
                     const std::map<std::string, std::string>& env = {}) {
  auto o = parse_sreport_options(args, env);
  EXPECT_TRUE(o) << (o ? "" : o.error().text);
  if (!o) return {};
  ReportWindow w = sreport_window(*o, kNow);
  return render_sreport(*o, w, d);
}

class Sreport : public ::testing::Test {
 protected:
  void SetUp() override { setenv("TZ", "UTC", 1); tzset(); }
};

const char* kDashes = "--------------------------------------------------------------------------------\n";

TEST_F(Sreport, ClusterUtilizationSplitsTheReportedTime) {
  // Reported: 832 CPUs from 21:00:25 (10,775 s); the drain is a minute of
  // Down; the waiting job's 2,000 CPUs fill all that was idle in its hour
  // (Planned), the rest of its demand is Over Comm.
  auto r = report({"cluster", "utilization", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string(kDashes) +
                       "Cluster Utilization 2026-12-04T00:00:00 - 2026-12-04T23:59:59\n"
                       "Usage reported in CPU Minutes\n" + kDashes +
                       "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n"
                       "--------- -------- -------- -------- -------- -------- -------- \n"
                       "   anchor      110        1        0    99382    49920   149413 \n");
  r = report({"-P", "-t", "seconds", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05",
              "format=cluster,allocated,overcommitted,trescount,tresname,reported"});
  EXPECT_EQ(r.out.substr(r.out.find("Cluster|")), "Cluster|Allocated|Over Comm|TRES Count|TRES Name|Reported\n"
                                                  "anchor|6600|4204800|832|cpu|8964800\n");
  // Percentages: of the reported time, and Reported of what the whole day could have been.
  r = report({"-n", "-t", "percent", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out, "   anchor    0.07%    0.00%    0.00%   66.51%   33.41%   12.47% \n");
  r = report({"-np", "-t", "hourper", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out, "anchor|2(0.07%)|0(0.00%)|0(0.00%)|1656(66.51%)|832(33.41%)|2490(12.47%)|\n");
}

TEST_F(Sreport, TresOptionAddsTheirRowsAndWidensLongNumbers) {
  auto r = report({"-T", "cpu,gres/gpu,mem", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out.substr(r.out.find("Usage")), std::string("Usage reported in TRES Minutes\n") + kDashes +
      "  Cluster      TRES Name Allocate     Down PLND Dow        Idle  Planned    Reported \n"
      "--------- -------------- -------- -------- -------- ----------- -------- ----------- \n"
      "   anchor            cpu      110        1        0       99382    49920      149413 \n"
      "   anchor       gres/gpu       30        0        0        5717        0        5747 \n"
      "   anchor            mem   110000     4267        0  1261279067        0  1261393333 \n");
}

// Options after the report and its conditions count the same (Slurm 22.05's sreport, as used in public
// scripts: `sreport cluster utilization start=... -t hours -T gres/gpu -P -n`).
TEST_F(Sreport, OptionsMayFollowTheReport) {
  auto before = report({"-T", "cpu,gres/gpu,mem", "-t", "hours", "-P", "cluster", "utilization", "start=2026-12-04",
                        "end=2026-12-05"});
  auto after = report({"cluster", "utilization", "start=2026-12-04", "end=2026-12-05", "-t", "hours", "--tres=cpu,gres/gpu,mem",
                       "-P"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_NE(after.out.find("Usage reported in TRES Hours"), std::string::npos) << after.out;
}

TEST_F(Sreport, NoRowsForAWindowTheClusterWasNotRegisteredIn) {
  auto r = report({"-n", "cluster", "utilization", "start=2026-12-04T10:00", "end=2026-12-04T12:00"});
  EXPECT_EQ(r.out, "");
  r = report({"-n", "cluster", "AccountUtilizationByUser", "start=2026-12-04T10:00", "end=2026-12-04T12:00"});
  EXPECT_EQ(r.out, "");
  r = report({"-n", "job", "SizesByAccount", "start=2026-12-04T10:00", "end=2026-12-04T12:00"});
  EXPECT_EQ(r.out, "");
}

TEST_F(Sreport, AccountsAndUsersByTheirUse) {
  auto r = report({"cluster", "AccountUtilizationByUser", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out, std::string(kDashes) +
                       "Cluster/Account/User Utilization 2026-12-04T00:00:00 - 2026-12-04T23:59:59 (86400 secs)\n"
                       "Usage reported in CPU Minutes\n" + kDashes +
                       "  Cluster         Account     Login     Proper Name     Used   Energy \n"
                       "--------- --------------- --------- --------------- -------- -------- \n"
                       "   anchor            root                                110        0 \n"
                       "   anchor        research                                110        0 \n"
                       "   anchor        research     alice                       80        0 \n"
                       "   anchor        research      root            root       30        0 \n");
  r = report({"-n", "cluster", "AccountUtilizationByUser", "start=2026-12-04", "end=2026-12-05", "tree"});
  EXPECT_EQ(r.out, "   anchor root                                                110        0 \n"
                   "   anchor  research                                           110        0 \n"
                   "   anchor   research               alice                       80        0 \n"
                   "   anchor   research                root            root       30        0 \n");
  // users= lists only those users' lines.
  r = report({"-nP", "cluster", "AccountUtilizationByUser", "start=2026-12-04", "end=2026-12-05", "accounts=research",
              "users=alice"});
  EXPECT_EQ(r.out, "anchor|research|alice||80|0\n");
  r = report({"-nP", "-T", "gres/gpu,cpu", "cluster", "AccountUtilizationByUser", "start=2026-12-04",
              "end=2026-12-05", "users=root"});
  EXPECT_EQ(r.out, "anchor|research|root|root|gres/gpu|30\nanchor|research|root|root|cpu|30\n");
  // format= takes Slurm's field names (Accounts, TresCount) and their leading parts.
  r = report({"-nP", "cluster", "AccountUtilizationByUser", "start=2026-12-04", "end=2026-12-05", "users=alice",
              "format=login,accounts,trescount,used"});
  EXPECT_EQ(r.out, "alice|research|832|80\n");
  r = report({"-P", "cluster", "UserUtilizationByAccount", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out.substr(r.out.find("Cluster|")), "Cluster|Login|Proper Name|Account|Used|Energy\n"
                                                  "anchor|alice||research|80|0\n"
                                                  "anchor|root|root|research|30|0\n");
  r = report({"user", "topusage", "start=2026-12-04", "end=2026-12-05", "topcount=1", "group"});
  EXPECT_NE(r.out.find("Top 1 Users 2026-12-04T00:00:00 - 2026-12-04T23:59:59 (86400 secs)\n"), std::string::npos);
  EXPECT_NE(r.out.find("   anchor     alice                        research       80        0 \n"), std::string::npos);
  EXPECT_EQ(r.out.find("root       30"), std::string::npos);
}

TEST_F(Sreport, JobSizesByAccount) {
  auto r = report({"job", "SizesByAccount", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out.substr(r.out.find("Time")), std::string("Time reported in Minutes\n") + kDashes +
      "  Cluster   Account     0-49 CPUs   50-249 CPUs  250-499 CPUs  500-999 CPUs  >= 1000 CPUs % of cluster \n"
      "--------- --------- ------------- ------------- ------------- ------------- ------------- ------------ \n"
      "   anchor      root           110             0             0             0             0      100.00% \n");
  r = report({"-nP", "job", "SizesByAccount", "start=2026-12-04", "end=2026-12-05", "grouping=2"});
  EXPECT_EQ(r.out, "anchor|root|30|80|100.00%\n");
  // printjobcount: the jobs that ran in the window, by size.
  r = report({"job", "SizesByAccount", "start=2026-12-04", "end=2026-12-05", "printjobcount"});
  EXPECT_NE(r.out.find("\nUnits are in number of jobs ran\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n   anchor      root             2             0             0             0             0 "
                       "     100.00% \n"),
            std::string::npos)
      << r.out;
  // -T: sizes and time in that TRES; -t hourper widens the columns to 20.
  r = report({"-T", "gres/gpu", "job", "SizesByAccount", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_NE(r.out.find("  Cluster   Account     0-49 TRES   50-249 TRES"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   anchor      root            30             0 "), std::string::npos) << r.out;
  r = report({"-n", "-t", "hourper", "job", "SizesByAccount", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out, "   anchor      root           2(100.00%)             0(0.00%)             0(0.00%)             "
                   "0(0.00%)             0(0.00%)      100.00% \n");
}

// Reservations: a MAINT one's time is PLND Down; another's is Allocated,
// with its jobs bundled in it (not counted again); one with IGNORE_JOBS is
// not counted. `reservation Utilization` splits each into its jobs' use and
// the rest.
TEST_F(Sreport, ReservationsAsSlurmCountsThem) {
  ReportData d = anchor_day();
  auto resv = [](const char* name, int64_t id, UnixTime a, UnixTime b, const char* flags, const char* node) {
    ReportEvent e;
    e.reservation = name;
    e.reservation_id = id;
    e.start = a;
    e.end = b;
    e.flags = flags;
    e.nodes = node;
    e.tres = {{"cpu", 64}, {"mem", 256000}, {"node", 1}};
    return e;
  };
  d.events.push_back(resv("maint1", 1, at(22, 0), at(22, 30), "MAINT", "cpu04"));
  d.events.push_back(resv("resv1", 2, at(23, 0), at(23, 15), "", "cpu03"));
  d.events.push_back(resv("ign", 3, at(21, 30), at(21, 40), "OVERLAP,IGNORE_JOBS", "cpu01"));
  ReportJob in_resv{"research", "root", at(23, 0), at(23, 0), at(23, 10), 4, {{"cpu", 4}, {"node", 1}}, ""};
  in_resv.reservation = "resv1";
  d.jobs.push_back(in_resv);
  auto r = report({"-n", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05"}, d);
  EXPECT_EQ(r.out, "   anchor     1070        1     1920    97462    48960   149413 \n");
  r = report({"-nP", "reservation", "utilization", "start=2026-12-04", "end=2026-12-05"}, d);
  EXPECT_EQ(r.out, "anchor|maint1|2026-12-04T22:00:00|2026-12-04T22:30:00|cpu|0|1920\n"
                   "anchor|resv1|2026-12-04T23:00:00|2026-12-04T23:15:00|cpu|40|920\n"
                   "anchor|ign|2026-12-04T21:30:00|2026-12-04T21:40:00|cpu|0|640\n");
  r = report({"reservation", "utilization", "start=2026-12-04", "end=2026-12-05", "names=resv1",
              "format=name,nodes,flags,trescount,totaltime,reservationid"},
             d);
  EXPECT_EQ(r.out.substr(r.out.find("Usage")), std::string("Usage reported in TRES Minutes\n") + kDashes +
      "     Name           Nodes      Flags TRES count     TotalTime      Id \n"
      "--------- --------------- ---------- ---------- ------------- ------- \n"
      "    resv1           cpu03                    64      00:15:00       2 \n");
  // A window the reservations did not reach lists none of them.
  r = report({"-n", "reservation", "utilization", "start=2026-12-04T10:00", "end=2026-12-04T11:00"}, d);
  EXPECT_EQ(r.out, "");
}

TEST_F(Sreport, WindowIsWholeHours) {
  using Span = std::pair<UnixTime, UnixTime>;
  auto window = [](std::vector<std::string> args) {
    auto o = parse_sreport_options(args);
    EXPECT_TRUE(o);
    ReportWindow w = sreport_window(*o, kNow + 25 * 60);  // 13:25
    return std::pair(w.start - kDay, w.end - kDay);
  };
  // Default: yesterday (2026-12-04, "now" being the 5th).
  EXPECT_EQ(window({"cluster", "utilization"}), Span(0, 86400));
  // start=/end= round to the nearest hour (as Slurm's: 01:00:01 is 01:00, 10:30 is 11:00).
  EXPECT_EQ(window({"cluster", "utilization", "start=2026-12-04T01:00:01", "end=2026-12-04T03:59:59"}),
            Span(3600, 4 * 3600));
  EXPECT_EQ(window({"cluster", "utilization", "start=2026-12-04T10:30", "end=2026-12-04T14:20"}),
            Span(11 * 3600, 14 * 3600));
  // An end past the last whole hour is that hour; an end not after the start is an hour after it.
  EXPECT_EQ(window({"cluster", "utilization", "start=2026-12-05T10:00", "end=now"}),
            Span(34 * 3600, 37 * 3600));
  EXPECT_EQ(window({"cluster", "utilization", "start=2026-12-05", "end=2026-12-05"}),
            Span(24 * 3600, 25 * 3600));
}

TEST_F(Sreport, MistakesInSlurmsWords) {
  auto bad = [](std::vector<std::string> args) {
    auto o = parse_sreport_options(args);
    return o ? std::string("accepted") : o.error().text;
  };
  EXPECT_EQ(bad({"bogus"}), "invalid keyword: bogus\n");
  EXPECT_EQ(bad({"cluster", "bogus"}),
            "Not valid report bogus\nValid cluster reports are, \"AccountUtilizationByUser\", "
            "\"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and \"WCKeyUtilizationByUser\"\n");
  EXPECT_NE(bad({"cluster", "WCKeyUtilizationByUser"}).find("not implemented yet"), std::string::npos);
  // What Slurm says and still reports: an unknown condition (exit 1), a bad time or unit (exit 0).
  auto r = report({"-n", "cluster", "utilization", "accounts=research", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.err, " Unknown condition: accounts=research\nUse keyword set to modify value\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "   anchor      110        1        0    99382    49920   149413 \n");
  r = report({"-n", "-t", "bogus", "cluster", "utilization", "start=yesterday", "end=2026-12-05"});
  EXPECT_EQ(r.err, "unknown time format bogus\nInvalid time specification (pos=0): yesterday\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "   anchor      110        1        0    99382    49920   149413 \n");
  r = report({"cluster", "utilization", "format=bogus"});
  EXPECT_EQ(r.err, " Unknown field 'bogus'\n");
  EXPECT_EQ(r.exit_code, 1);
  // -t takes any case and a leading part.
  // SREPORT_TRES stands for -T (the command line wins).
  r = report({"-nP", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05", "format=tresname,allocated"},
             anchor_day(), {{"SREPORT_TRES", "gres/gpu"}});
  EXPECT_EQ(r.out, "gres/gpu|30\n");
  r = report({"-nP", "-T", "cpu", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05",
              "format=tresname,allocated"},
             anchor_day(), {{"SREPORT_TRES", "gres/gpu"}});
  EXPECT_EQ(r.out, "cpu|110\n");
  r = report({"-n", "-t", "Hour", "cluster", "utilization", "start=2026-12-04", "end=2026-12-05"});
  EXPECT_EQ(r.out, "   anchor        2        0        0     1656      832     2490 \n");
}

}  // namespace
}  // namespace drover::cli
