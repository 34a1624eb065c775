// NodeAgentService, served by every agent: launch, terminate, signal, time limit.
#pragma once

#include "rpc/server.hpp"

namespace drover::agentd {

class AgentDaemon;

rpc::ServicePtr make_node_service(AgentDaemon& daemon, const rpc::CallAuthenticator& auth);

}  // namespace drover::agentd
