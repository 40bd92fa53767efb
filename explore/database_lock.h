// One explorer per results database at a time.
//
// Two explorers writing one database would both find the same variants pending and measure
// them twice, each overwriting the other's row, and their concurrent writes could fail as busy.
// So an exploration holds an exclusive lock on a file beside the database (DB.lock, a POSIX
// record lock of the explorer's process: the kernel drops it when the process dies, so a crash
// leaves nothing to clean up) for as long as it runs, and a second one is refused with a
// message naming the holder's process. `weft merge` and `weft import` take the same lock
// while they write, so that they never interleave with an exploration's writes. Explorers
// on different databases (shards, then `weft merge`) do not meet.
#pragma once

#include <string>

namespace weft::explore {

class DatabaseLock {
 public:
  // Takes the lock of `database` or throws std::runtime_error saying who holds it.
  explicit DatabaseLock(const std::string& database);
  ~DatabaseLock();
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;

  // The lock file of `database`.
  static std::string lockPath(const std::string& database);

 private:
  int fd_ = -1;
};

}  // namespace weft::explore
