// One explorer per results database (explore/database_lock.h).
#include "explore/database_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace weft::explore {

std::string DatabaseLock::lockPath(const std::string& database) { return database + ".lock"; }

DatabaseLock::DatabaseLock(const std::string& database) {
  const std::string path = lockPath(database);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("cannot open " + path + " to lock " + database + ": " +
                             std::strerror(errno));
  }
  // A POSIX record lock, not flock: it belongs to this process alone, so the children the
  // explorer forks do not hold it past the explorer's death (a resumed exploration right after
  // a kill would otherwise find it taken).
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &whole) != 0) {
    const int error = errno;
    struct flock holder {};
    holder.l_type = F_WRLCK;
    holder.l_whence = SEEK_SET;
    const bool known = ::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
    ::close(fd_);
    fd_ = -1;
    if (error != EACCES && error != EAGAIN) {
      throw std::runtime_error("cannot lock " + path + ": " + std::strerror(error));
    }
    throw std::runtime_error(
        "another weft explore, merge or import is writing " + database +
        (known ? " (process " + std::to_string(holder.l_pid) + ")" : "") +
        ": wait for it to end, or explore into another --db and combine them with weft merge");
  }
}

DatabaseLock::~DatabaseLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace weft::explore
