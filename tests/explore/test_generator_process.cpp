// The explorer's generator process (explore/generator_process.h) killed while it waits for a
// request: the explorer's next request must report the generator's death, not kill the explorer.
// A request written into a pipe whose reader has died raises SIGPIPE, which the explorer does
// not ignore, so the explorer died silently when the generator was killed between two variants
// (seen as a flaky slow_explore_random_kills); the requests now go through a socket with
// MSG_NOSIGNAL. A fresh generator then serves the next request. And every child of the
// explorer is the out-of-memory killer's first choice, not the explorer.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>

#include "explore/child_process.h"
#include "explore/generator_process.h"
#include "explore/prebuild_pool.h"

using namespace weft::explore::process;

TEST_CASE("a generator killed between requests is reported dead, and the next one serves") {
  GeneratorProcess generator([](const Json&, int eventFd) {
    sendLine(eventFd, Json{{"event", "exited"}, {"code", 0}});
  });
  const auto deadline = [] { return Clock::now() + std::chrono::seconds(10); };
  GeneratorProcess::Outcome first = generator.run(Json{{"variant", 1}}, deadline(), {});
  CHECK(first.exited.is_object());
  CHECK_FALSE(first.generatorDied);
  const pid_t pid = generator.pid();
  REQUIRE(pid > 0);
  REQUIRE(kill(pid, SIGKILL) == 0);
  // Dead (not yet reaped): its end of the request channel is closed.
  siginfo_t info{};
  REQUIRE(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) == 0);
  GeneratorProcess::Outcome second = generator.run(Json{{"variant", 2}}, deadline(), {});
  CHECK(second.generatorDied);
  CHECK(second.child.signaled);
  CHECK(second.child.signal == SIGKILL);
  GeneratorProcess::Outcome third = generator.run(Json{{"variant", 3}}, deadline(), {});
  CHECK(third.exited.is_object());
  CHECK(generator.pid() != pid);
}

TEST_CASE("the explorer's children are the out-of-memory killer's first choice") {
  // The child reports its own score; the explorer's stays as it was.
  const ChildOutcome outcome = runInChild(
      [](int fd) {
        std::ifstream score("/proc/self/oom_score_adj");
        int value = 0;
        score >> value;
        sendLine(fd, Json{{"score", value}});
      },
      after(10));
  REQUIRE_FALSE(outcome.timedOut);
  CHECK(Json::parse(outcome.data).at("score").get<int>() == 1000);
  std::ifstream own("/proc/self/oom_score_adj");
  int ownScore = 1000;
  own >> ownScore;
  CHECK(ownScore < 1000);
  // A SIGKILL that was not a deadline names the usual culprits.
  CHECK(signalText(SIGKILL).find("out-of-memory killer") != std::string::npos);
  CHECK(signalText(SIGSEGV) == "signal 11 (SIGSEGV)");
}

TEST_CASE("a pre-build whose first launches outlast the warm-up's cut-off is killed then") {
  // A kernel of one work-group runs as long over one work-group as in full: the pre-build's
  // launch of it ran to the phase cap (120 s) while the measuring child's warm-up was cut off
  // after 5 s. Once it reports its build, a pre-build has the seconds afterBuild gives.
  PrebuildPool pool;
  pool.start(1, [](int fd) {
    sendLine(fd, Json{{"event", "built"}, {"ns", 2000000000}});
    sleep(60);
    sendLine(fd, Json{{"event", "prebuilt"}, {"status", "ok"}});
  });
  double buildSecondsSeen = -1;
  const auto start = Clock::now();
  PrebuildPool::Result slow = pool.take(1, 60, [&](double buildSeconds) {
    buildSecondsSeen = buildSeconds;
    return 0.5;
  });
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(buildSecondsSeen == doctest::Approx(2.0));
  CHECK(waited < 10);
  CHECK(slow.ran);
  CHECK(slow.status.empty());
  CHECK(slow.message.find("first launches ran past the warm-up's cut-off") != std::string::npos);
  // One that ends in time gives the result after its "built" line.
  pool.start(2, [](int fd) {
    sendLine(fd, Json{{"event", "built"}, {"ns", 1000}});
    sendLine(fd, Json{{"event", "prebuilt"}, {"status", "ok"}, {"buildMs", 3.0}});
  });
  PrebuildPool::Result quick = pool.take(2, 60, [](double) { return 30.0; });
  CHECK(quick.status == "ok");
  REQUIRE(quick.buildMs.has_value());
  CHECK(*quick.buildMs == doctest::Approx(3.0));
  // Without afterBuild, only the first deadline counts.
  pool.start(3, [](int fd) {
    sendLine(fd, Json{{"event", "built"}, {"ns", 1000}});
    sendLine(fd, Json{{"event", "prebuilt"}, {"status", "invalid"}, {"message", "spills"}});
  });
  PrebuildPool::Result plain = pool.take(3, 60);
  CHECK(plain.status == "invalid");
  CHECK(plain.message == "spills");
}
