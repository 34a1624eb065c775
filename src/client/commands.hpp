// The Slurm-compatible commands that talk to the controller, and Drover's
// local-cluster commands. Each takes the arguments after the command name
// and returns the exit status. A leading `--config PATH` (Drover's) names the
// slurm.conf; else DROVER_CONF, else SLURM_CONF, else /etc/drover/slurm.conf.
#pragma once

#include <string>
#include <vector>

namespace drover::client {

using Args = std::vector<std::string>;

int sbatch_main(const Args& args);
int squeue_main(const Args& args);
int sinfo_main(const Args& args);
int scancel_main(const Args& args);
int scontrol_main(const Args& args);
int srun_main(const Args& args);    // srun.cpp
int salloc_main(const Args& args);  // srun.cpp
int sacct_main(const Args& args);
int sdiag_main(const Args& args);
int sacctmgr_main(const Args& args);
int sprio_main(const Args& args);
int sshare_main(const Args& args);
int sreport_main(const Args& args);
int sstat_main(const Args& args);
int sbcast_main(const Args& args);
int up_main(const Args& args);    // drover up
int down_main(const Args& args);  // drover down

}  // namespace drover::client
