// A rank's crash and its launcher's summary of it, as torchrun prints them: the summary comes
// when the launcher's monitor next looks, seconds after the rank's traceback. The daemon's tests
// and those of open streams write them apart; read whole, they are one incident.
#pragma once

#include <string>

namespace triage::testing {

inline std::string RankTraceback() {
  return "[rank0]: Traceback (most recent call last):\n"
         "[rank0]:   File \"/app/train.py\", line 40, in <module>\n"
         "[rank0]:     main()\n"
         "[rank0]:   File \"/app/train.py\", line 31, in main\n"
         "[rank0]:     loss = model(batch)\n"
         "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
         "total capacity of 79.15 GiB of which 1.02 GiB is free.\n";
}

inline std::string LauncherSummary() {
  return "E1102 09:24:07.123000 1234 torch/distributed/elastic/multiprocessing/api.py:869] failed "
         "(exitcode: 1) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3\n"
         "Traceback (most recent call last):\n"
         "  File \"/usr/local/bin/torchrun\", line 8, in <module>\n"
         "    sys.exit(main())\n"
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
         "============================================================\n"
         "train.py FAILED\n"
         "------------------------------------------------------------\n"
         "Failures:\n"
         "  <NO_OTHER_FAILURES>\n"
         "------------------------------------------------------------\n"
         "Root Cause (first observed failure):\n"
         "[0]:\n"
         "  time      : 2026-11-02_09:24:07\n"
         "  host      : node1\n"
         "  rank      : 0 (local_rank: 0)\n"
         "  exitcode  : 1 (pid: 4242)\n"
         "  error_file: <N/A>\n"
         "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
         "============================================================\n";
}

}  // namespace triage::testing
