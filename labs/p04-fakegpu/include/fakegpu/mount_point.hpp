// What is wrong with a fakegpud mount point, in words a user can act on. The
// case that needs its own words: a FUSE mount whose daemon died (kill -9, a
// crash) stays mounted, and every access to it fails with ENOTCONN ("Transport
// endpoint is not connected") until someone unmounts it; "create it first
// (mkdir -p)" is then the wrong advice, and mkdir -p fails too.
// Plain std::string (no fmt): the static client and evil link this as well.
#pragma once

#include <optional>
#include <string>

namespace fakegpu {

// "DIR is a stale FUSE mount: ... unmount it (fusermount3 -u DIR, or umount DIR as root) ..."
std::string stale_mount_advice(const std::string& mountdir);

// Why `dir` cannot be mounted on (missing, not a directory, a stale mount,
// another errno), or nullopt when it is a directory.
std::optional<std::string> mountdir_problem(const std::string& dir);

// The directory a device path such as MOUNTDIR/fakegpu lives in ("." for a bare name).
std::string parent_dir(const std::string& path);

}  // namespace fakegpu
