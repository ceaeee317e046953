// This machine's name, in one place: what the store records as the host of incidents whose lines
// name none, the metrics' host label, the notifications' host, the verifiers' "is this the log's
// host?" check and the key of the daemon's checkpoints in a shared store all read ThisHost().
//
// Where it comes from, first that is set: the daemon's --host, TRIAGE_HOST, the configuration's
// [host] name, NODE_NAME (Kubernetes' downward API: the node a pod runs on, where gethostname
// gives the pod's name, which changes with every rollout), gethostname(2).
#pragma once

#include <optional>
#include <string>

namespace triage::core {

struct Config;

struct HostName {
  std::string name;
  std::string origin;  // "--host", "TRIAGE_HOST", the configuration file, "NODE_NAME", "gethostname"
};

// The name as the settings give it (the command line's `flag` first).
HostName ResolveHostName(const std::optional<std::string>& flag, const Config& config);

// Sets the name ThisHost() gives, for the whole process; each command does so once its
// configuration is read, before it starts threads.
void UseHostName(HostName host);

// The name in use: UseHostName's, else the environment's and the machine's (no configuration).
std::string ThisHost();
HostName ThisHostWithOrigin();

}  // namespace triage::core
