// Child processes: exit codes and signals, hard kill of the whole group on timeout, capped
// capture of a flood, the control channel (and the descriptors it carries). The sandbox a child
// can be given is tested in test_sandbox.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>

#include "common/control_channel.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"

using namespace ptxbench;

namespace {
ProcessSpec sh(const std::string& script) {
  ProcessSpec s;
  s.argv = {"/bin/sh", "-c", script};
  return s;
}

// A shell script at the other end of a control channel (its descriptor 3), as the runner is.
struct ScriptPeer {
  explicit ScriptPeer(const std::string& script) {
    Fd theirs;
    make_socket_pair(ours, theirs);
    ProcessSpec s = sh(script);
    s.control_fd = theirs.get();
    child = std::make_unique<ChildProcess>(s);
  }
  Fd ours;
  std::unique_ptr<ChildProcess> child;
};
}  // namespace

TEST(Subprocess, ExitCodesOutputAndSignals) {
  auto r = run_process(sh("echo out; echo err >&2; exit 7"), 10);
  EXPECT_EQ(r.status.exit_code, 7);
  EXPECT_EQ(r.out.text, "out\n");
  EXPECT_EQ(r.err.text, "err\n");
  EXPECT_FALSE(r.timed_out);
  auto k = run_process(sh("kill -SEGV $$"), 10);
  EXPECT_EQ(k.status.signal, SIGSEGV);
  EXPECT_NE(k.status.describe().find("SIGSEGV"), std::string::npos);
  EXPECT_THROW(run_process(ProcessSpec{{"/no/such/program"}}, 1), EnvironmentError);
}

TEST(Subprocess, TimeoutKillsTheWholeGroup) {
  // The child starts a grandchild that would outlive it; both must be gone after the kill.
  auto start = std::chrono::steady_clock::now();
  auto r = run_process(sh("sleep 300 & echo $! ; sleep 300"), 0.5);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status.signal, SIGKILL);
  EXPECT_LT(waited, 5.0);
  pid_t grandchild = std::stoi(r.out.text);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Gone, or a zombie waiting for an init that reaps lazily (containers): either way not running.
  std::string stat;
  try {
    stat = read_file("/proc/" + std::to_string(grandchild) + "/stat");
  } catch (const InputError&) {
  }
  if (!stat.empty()) EXPECT_NE(stat.find(") Z"), std::string::npos) << "grandchild survived: " << stat;
}

// A runner started by compute-sanitizer or ncu kills itself once that tool is gone (re-parented):
// here the tool is a child process that exits at once, leaving its own child behind.
TEST(Subprocess, AToolsOrphanedTargetKillsItself) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t tool = fork();
  ASSERT_GE(tool, 0);
  if (tool == 0) {
    pid_t target = fork();
    if (target == 0) {
      exit_when_orphaned(0.05);
      pid_t me = getpid();
      (void)!write(fds[1], &me, sizeof me);
      sleep(30);
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the target is running
    _exit(0);  // the tool dies, its target stays
  }
  close(fds[1]);
  pid_t target = 0;
  ASSERT_EQ(read(fds[0], &target, sizeof target), static_cast<ssize_t>(sizeof target));
  close(fds[0]);
  int status = 0;
  waitpid(tool, &status, 0);
  std::string stat = "running";
  for (int i = 0; i < 60 && !stat.empty() && stat.find(") Z") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      stat = read_file("/proc/" + std::to_string(target) + "/stat");
    } catch (const InputError&) {
      stat.clear();
    }
  }
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos) << "the orphan still runs: " << stat;
}

// compute-sanitizer starts its target under a helper of its own that outlives the tool, so the
// target is never re-parented: it must also die when its owner (the worker) is gone. Here the
// parent (this test) stays alive and only the owner, a sibling, exits.
TEST(Subprocess, ATargetWhoseOwnerIsGoneKillsItselfThoughItsParentLives) {
  pid_t owner = fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    sleep(30);
    _exit(0);
  }
  pid_t target = fork();
  ASSERT_GE(target, 0);
  if (target == 0) {
    exit_when_orphaned(0.05, owner);
    sleep(30);
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int status = 0;
  ASSERT_EQ(waitpid(target, &status, WNOHANG), 0) << "the target must run while its owner lives";
  kill(owner, SIGKILL);
  waitpid(owner, &status, 0);
  bool exited = false;
  for (int i = 0; i < 60 && !exited; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    exited = waitpid(target, &status, WNOHANG) == target;
  }
  if (!exited) kill(target, SIGKILL), waitpid(target, &status, 0);
  ASSERT_TRUE(exited) << "the target outlived its owner by 3 s";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

// What a killed worker or service left behind is found by its working directory (a session runner
// in an evaluation's scratch folder) even when its command line names no folder; the per-stage
// sweep by command line must leave such a runner alone (the timing stage still needs it).
TEST(Subprocess, KillInAFolderFindsAProcessByItsWorkingDirectory) {
  TempDir dir("ptxbench-marker");
  fs::path inner = dir.path() / "eval-1";
  fs::create_directories(inner);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (chdir(inner.c_str()) != 0) _exit(2);
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(3);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // exec'd, in its folder
  EXPECT_EQ(kill_processes_mentioning(inner.string()), 0) << "by command line only";
  EXPECT_EQ(kill_processes_in(dir.path().string() + "-other"), 0) << "a sibling folder's name is not a match";
  EXPECT_EQ(kill_processes_in(dir.path().string()), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(kill_processes_in(dir.path().string()), 0);
}

TEST(Subprocess, FloodIsCappedHeadAndTailKept) {
  ProcessSpec s = sh("echo FIRST; head -c 50000000 /dev/zero | tr '\\0' 'x'; echo; echo LAST");
  s.output_cap_bytes = 64 << 10;
  auto r = run_process(s, 60);
  EXPECT_TRUE(r.status.success());
  EXPECT_TRUE(r.out.truncated());
  EXPECT_GT(r.out.total_bytes, 50000000u);
  EXPECT_LT(r.out.text.size(), 80u << 10);
  EXPECT_EQ(r.out.text.rfind("FIRST", 0), 0u);
  EXPECT_NE(r.out.text.find("LAST"), std::string::npos);
  EXPECT_NE(r.out.text.find("bytes omitted by ptxbench"), std::string::npos);
}

TEST(Subprocess, LimitsAndWorkingDirectory) {
  ProcessSpec s = sh("ulimit -c; ulimit -n; pwd");
  s.limits.open_files = 77;
  s.cwd = "/tmp";
  auto r = run_process(s, 10);
  EXPECT_EQ(r.out.text, "0\n77\n/tmp\n");
}

TEST(ControlChannel, RoundTripTimeoutAndClose) {
  ScriptPeer peer("read line <&3; echo \"{\\\"echo\\\": $line}\" >&3; sleep 0.3");
  ControlChannel ch(std::move(peer.ours));
  ch.send({{"x", 42}});
  ordered_json reply = ch.receive(10);
  EXPECT_EQ(reply["echo"]["x"], 42);
  try {
    (void)ch.receive(0.05);
    FAIL() << "expected a timeout";
  } catch (const ChannelError& e) {
    EXPECT_EQ(e.kind, ChannelFailure::timeout);
  }
  try {
    (void)ch.receive(10);
    FAIL() << "expected the channel to close";
  } catch (const ChannelError& e) {
    EXPECT_EQ(e.kind, ChannelFailure::closed);
  }
  EXPECT_TRUE(peer.child->wait_for(5).has_value());
}

// A peer that sends a line past the limit (a runner flooding its spans reply) is a malformed
// message that says the limit, not a closed channel.
TEST(ControlChannel, ALineOverTheLimitIsMalformedAndSaysTheLimit) {
  ScriptPeer peer("head -c 70000000 /dev/zero | tr '\\0' x >&3; sleep 5");
  ControlChannel ch(std::move(peer.ours));
  try {
    (void)ch.receive(30);
    FAIL() << "expected a malformed message";
  } catch (const ChannelError& e) {
    EXPECT_EQ(e.kind, ChannelFailure::malformed);
    EXPECT_STREQ(e.what(), "a message longer than 64 MiB");
  }
  peer.child->kill_and_wait();
}

// Descriptors travel with a message (the worker hands the runner its shared GPU buffers so).
TEST(ControlChannel, CarriesDescriptorsWithAMessage) {
  Fd a, b;
  make_socket_pair(a, b);
  ControlChannel sender(std::move(a)), receiver(std::move(b));
  TempDir dir("ptxbench-fd-test");
  write_file_atomic(dir.path() / "f", "carried");
  Fd file(::open((dir.path() / "f").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file.valid());
  sender.send({{"op", "setup"}}, {file.get()});
  EXPECT_EQ(receiver.receive(5)["op"], "setup");
  std::vector<Fd> got = receiver.take_fds();
  ASSERT_EQ(got.size(), 1u);
  char buf[8] = {};
  EXPECT_EQ(::pread(got[0].get(), buf, 7, 0), 7);
  EXPECT_STREQ(buf, "carried");
  EXPECT_TRUE(receiver.take_fds().empty()) << "descriptors are handed out once";
}
