// A single-node Slurm cluster for tests: munged, slurmctld and slurmd started in the
// foreground as children of the test, with a generated slurm.conf, their own munge key
// and socket, free ports and every file under one temp directory. Nothing of the
// machine's own Slurm or munge configuration is read or changed. The node offers one
// "gpu" generic resource (backed by /dev/null) so a script asking --gres=gpu:1 runs.
// SLURM_CONF is set for this process, so sbatch/squeue here and in children use it.
#pragma once

#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/process.h"

namespace kport::testing {

class SlurmCluster {
 public:
  // Where each program is, or empty; a test skips naming what is missing.
  static std::string missing_programs() {
    std::string missing;
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"})
      if (which(p).empty()) missing += std::string(missing.empty() ? "" : ", ") + p;
    return missing;
  }

  explicit SlurmCluster(const std::filesystem::path& dir) : m_dir(dir / "slurm") {
    namespace fs = std::filesystem;
    fs::create_directories(m_dir / "state");
    fs::create_directories(m_dir / "spool");
    fs::create_directories(m_dir / "munge");
    fs::permissions(m_dir / "munge", fs::perms::owner_all);
    {
      std::ofstream key(m_dir / "munge" / "key", std::ios::binary);
      std::random_device rd;
      for (int i = 0; i < 1024; ++i) key.put(static_cast<char>(rd() & 0xff));
    }
    fs::permissions(m_dir / "munge" / "key", fs::perms::owner_read);
    std::string user = ::getpwuid(::geteuid())->pw_name;
    conf = (m_dir / "slurm.conf").string();
    std::ofstream c(conf);
    c << "ClusterName=kporttest\nSlurmctldHost=" << hostname() << "(127.0.0.1)\n"
      << "SlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port() << "\n"
      << "SlurmUser=" << user << "\nSlurmdUser=" << user << "\n"
      << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << (m_dir / "munge" / "sock").string() << "\n"
      << "StateSaveLocation=" << (m_dir / "state").string() << "\nSlurmdSpoolDir=" << (m_dir / "spool").string() << "\n"
      << "SlurmctldPidFile=" << (m_dir / "slurmctld.pid").string()
      << "\nSlurmdPidFile=" << (m_dir / "slurmd.pid").string() << "\n"
      << "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
      << "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\nMpiDefault=none\n"
      << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
      << "GresTypes=gpu\nReturnToService=2\nSlurmdTimeout=30\nMinJobAge=2\n"
      << "NodeName=kport-node NodeHostname=" << hostname()
      << " NodeAddr=127.0.0.1 CPUs=" << std::thread::hardware_concurrency()
      << " RealMemory=1000 Gres=gpu:1 State=UNKNOWN\n"
      << "PartitionName=kport Nodes=kport-node Default=YES MaxTime=INFINITE State=UP\n";
    std::ofstream(m_dir / "gres.conf") << "NodeName=kport-node Name=gpu File=/dev/null\n";
    ::setenv("SLURM_CONF", conf.c_str(), 1);
  }

  ~SlurmCluster() { stop(); }

  // Starts the daemons; true once the node is idle in partition "kport". `why` says
  // what went wrong otherwise, with the daemons' logs.
  bool start(std::string& why) {
    auto d = m_dir.string();
    m_pids.push_back(spawn(
        {which("munged"), "-F", "-f", "-S", d + "/munge/sock", "--key-file=" + d + "/munge/key",
         "--log-file=" + d + "/munged.log", "--pid-file=" + d + "/munged.pid", "--seed-file=" + d + "/munge/seed"},
        d + "/munged.out"));
    if (!wait_for([&] { return std::filesystem::exists(d + "/munge/sock"); }, 10))
      return fail(why, "munged did not start");
    m_pids.push_back(
        spawn({which("slurmctld"), "-D", "-i", "-f", conf, "-L", d + "/slurmctld.log"}, d + "/slurmctld.out"));
    m_pids.push_back(
        spawn({which("slurmd"), "-D", "-f", conf, "-N", "kport-node", "-L", d + "/slurmd.log"}, d + "/slurmd.out"));
    std::string out;
    bool idle = wait_for(
        [&] {
          run_to_exit(which("sinfo"), {"--noheader", "--format=%T", "--partition=kport"}, out);
          return out.rfind("idle", 0) == 0;
        },
        40);
    return idle || fail(why, "the node did not become idle (sinfo: " + out + ")");
  }

  void stop() {
    if (m_pids.empty()) return;
    std::string out;
    run_to_exit(which("scancel"), {"--partition=kport", "--full"}, out);
    for (auto it = m_pids.rbegin(); it != m_pids.rend(); ++it) {
      ::kill(*it, SIGTERM);
      int status = 0;
      bool gone = false;
      for (int i = 0; i < 100 && !gone; ++i) {
        gone = ::waitpid(*it, &status, WNOHANG) == *it;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!gone) {
        ::kill(*it, SIGKILL);
        ::waitpid(*it, &status, 0);
      }
    }
    m_pids.clear();
  }

  std::string logs() const {
    std::string all;
    for (const char* f : {"slurmctld.log", "slurmd.log", "munged.log", "slurmctld.out", "slurmd.out"}) {
      std::ifstream in(m_dir / f);
      std::ostringstream s;
      s << in.rdbuf();
      std::string text = s.str();
      if (text.size() > 4000) text = "..." + text.substr(text.size() - 4000);
      all += "== " + std::string(f) + "\n" + text;
    }
    return all;
  }

  static std::string which(const std::string& name) {
    for (const char* dir : {"/usr/sbin/", "/usr/bin/", "/usr/local/sbin/", "/usr/local/bin/", "/sbin/", "/bin/"})
      if (::access((std::string(dir) + name).c_str(), X_OK) == 0) return std::string(dir) + name;
    return {};
  }

  std::string conf;

 private:
  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
  }
  static std::string hostname() {
    char h[256] = {};
    ::gethostname(h, sizeof h - 1);
    std::string s = h;
    return s.substr(0, s.find('.'));  // Slurm compares short names
  }
  static pid_t spawn(std::vector<std::string> argv, const std::string& log) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      if (!std::freopen(log.c_str(), "w", stdout)) _exit(126);
      ::dup2(1, 2);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      _exit(127);
    }
    return pid;
  }
  template <typename F>
  static bool wait_for(F ready, int seconds) {
    for (int i = 0; i < seconds * 10; ++i) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  bool fail(std::string& why, const std::string& what) {
    why = what + "\n" + logs();
    return false;
  }

  std::filesystem::path m_dir;
  std::vector<pid_t> m_pids;
};

}  // namespace kport::testing
