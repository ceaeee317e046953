// Applicability (DESIGN.md section 5): what an incident's log says of the machine it ran on, this
// machine as the checks see it, and whether the two can be the same machine.
//
// A log is untrusted text: it is only read here (scanned for host names, GPU models and
// architectures, CUDA toolkits and times), never run, and nothing of it reaches a shell.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "triage/core/incident.h"
#include "triage/verifiers/verifier.h"

namespace triage::verifiers::detail {

// Adds to `site` what one line of a log names: host names (shell prompts `user@host:~$`,
// `hostname: x`, `host=x`, `host x,`, syslog and NCCL line prefixes, `Node:`/`nodeName`), GPU
// models (`NVIDIA H200`, `GeForce RTX 5090`), the device's architecture (`SM 12.x requires`,
// `compute capability 8.6` unless it is a minimum, `sm_120 is not compatible`, `capability (8,
// 6)`), CUDA toolkits (`CUDA_HOME=/usr/local/cuda-12.8`, `.../bin/nvcc`, `release 12.8`).
void ScanLine(std::string_view line, LogSite& site);

// Adds what the cause's captures name: `family`, an `sm` that is a family ("12.x"), `cc`, `cap`,
// `major`+`minor`, a `gpu` that is a model (not a device number), `installed` and `detected`
// toolkit versions.
void ScanCaptures(const std::map<std::string, std::string>& captures, LogSite& site);

// "2026-11-02T09:14:51" (fractions and a zone are honoured when present; no zone reads as UTC)
// -> seconds since the epoch; nullopt when the text holds no date.
std::optional<int64_t> ParseLogTime(std::string_view text);

// The whole site of `incident`: its host unless that is `this_host` (the analyzer names a log
// that names no host after the machine that read it, so an equal name proves nothing) or
// localhost, every cause's captures and evidence (symptoms' too), and the lines of its source
// from a few lines before first_line to last_line. The source is read only when it is a file
// (gzip allowed) whose lines at the evidence's numbers still hold the evidence: a rotated or
// rewritten file, or stdin, gives captures and evidence only (`lines_read` false). Reading a
// source from its start costs bytes of `budget`, which the caller keeps across incidents so
// that a large log with many incidents is not read over and over without bound; a read that
// would exceed it gives up (captures and evidence only).
LogSite ReadLogSite(const core::Incident& incident, const std::string& this_host, uint64_t& budget);

// This machine's GPUs from the driver (its devices, or why none are known): what the runner's
// isolated probe runs. `name` is left empty.
HostIdentity ProbeGpus(const VerifyConfig& config);

// Whether `log` can be this machine. `other_host`: the log names a host name, none of which is
// this machine's, or GPUs (models or architectures) that this machine, whose GPUs are known,
// does not have. The reason names both sides ("the log is from ct200 with SM 12.x GPUs (NVIDIA
// RTX PRO 6000 Blackwell Server Edition); this host is vm with no GPU"); facts_json holds both
// as a JSON object ({"log": {...}, "here": {...}}).
struct SiteJudgement {
  bool other_host = false;
  bool gpus_differ = false;
  std::string log_host;  // the log's host name shown (the first it names), or ""
  std::string reason;
  std::string facts_json = "{}";
};
SiteJudgement JudgeSite(const LogSite& log, const HostIdentity& here);

// Whether the log names any GPU (a model or an architecture), i.e. whether JudgeSite needs this
// machine's GPUs.
bool NamesGpus(const LogSite& log);

// Host names compare case-insensitively by their first label ("ct200.lab" is "ct200").
bool SameHostName(std::string_view a, std::string_view b);

// "SM 12.x", "sm_90".
std::string ArchName(const LoggedArch& arch);

// This machine's boot time (seconds since the epoch) from config.uptime_path; nullopt when it
// cannot be read.
std::optional<int64_t> BootTime(const VerifyConfig& config);

// "2026-11-02 09:14:51 UTC".
std::string TimeText(int64_t seconds);

}  // namespace triage::verifiers::detail
